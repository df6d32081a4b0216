"""Effect of privacy on the online learners of Agarwal & Singh 2017.

Regret at T = 1e5 for epsilon in {0.1, 1, 10} next to the non-private
algorithm, for PrivateFTRL (experts), PrivateFTPL (experts, delta = 1e-5),
EXP2 (multi-armed bandit), PrivateFTRL over the unit ball and over the cube
[-1, 1]^3, and SCRiBLe (bandit over the unit ball); then the throughput of
each point learner alone in simulate (eps = 1).

Instances: experts / arms are Bernoulli losses, expert 0 with mean 0.4 and
nine others with mean 0.5 (dpbandits.StochasticLosses; regret against the
best expert in hindsight). Ball and cube in N = 3 (dpbandits.UniformLosses):
l_t = theta + noise uniform in [-0.3, 0.3]^3, theta = (0.3, -0.4, 0),
divided by its norm when above 1 (||l||_2 on the ball, ||l||_1 on the
cube); regret against the best fixed point in hindsight (-L_T / ||L_T||_2,
-sign(L_T)). Everything runs in Rust through dpbandits.simulate_many.

Usage: python benches/online_learning_effect.py [--horizon 100000] [--seeds 8]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dpbandits as dp

EPSILONS = (None, 10.0, 1.0, 0.1)


def label(eps: float | None) -> str:
    return "non-private" if eps is None else f"eps={eps:g}"


def full_information_and_exp2(horizon: int, seeds: int) -> dict[str, dict[str, tuple[float, float]]]:
    env = dp.StochasticLosses([0.4] + [0.5] * 9)
    learners = {}
    for eps in EPSILONS:
        learners[f"PrivateFTRL|{label(eps)}"] = dp.PrivateFTRL(10, horizon, eps)
        learners[f"PrivateFTPL|{label(eps)}"] = dp.PrivateFTPL(10, horizon, eps, None if eps is None else 1e-5)
        learners[f"EXP2|{label(eps)}"] = dp.EXP2(10, horizon, eps)
    res = dp.simulate_many(learners, env, seeds=seeds)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for key, r in res.items():
        name, eps_label = key.split("|")
        reg = r.final_regret
        out.setdefault(name, {})[eps_label] = (float(reg.mean()), float(reg.std(ddof=1) / np.sqrt(len(reg))))
    return out


def points(horizon: int, seeds: int) -> dict[str, dict[str, tuple[float, float]]]:
    """PrivateFTRL over the ball and the cube, and SCRiBLe, in N = 3."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for geometry in ("ball", "cube"):
        env = dp.UniformLosses([0.3, -0.4, 0.0], 0.3, geometry=geometry)
        learners = {}
        for eps in EPSILONS:
            learners[f"PrivateFTRL-{geometry} (N=3)|{label(eps)}"] = dp.PrivateFTRL(3, horizon, eps, geometry=geometry)
            if geometry == "ball":
                learners[f"SCRiBLe (ball, N=3)|{label(eps)}"] = dp.SCRiBLe(3, horizon, eps)
        for key, r in dp.simulate_many(learners, env, seeds=seeds).items():
            name, eps_label = key.split("|")
            reg = r.final_regret
            out.setdefault(name, {})[eps_label] = (float(reg.mean()), float(reg.std(ddof=1) / np.sqrt(len(reg))))
    return out


def throughput(horizon: int, seeds: int) -> dict[str, float]:
    """Median rounds/s of each point learner alone in simulate (eps = 1)."""
    ball = dp.UniformLosses([0.3, -0.4, 0.0], 0.3, geometry="ball")
    cube = dp.UniformLosses([0.3, -0.4, 0.0], 0.3, geometry="cube")
    runs = {
        "PrivateFTRL-ball (N=3)": (dp.PrivateFTRL(3, horizon, 1.0, geometry="ball"), ball),
        "PrivateFTRL-cube (N=3)": (dp.PrivateFTRL(3, horizon, 1.0, geometry="cube"), cube),
        "SCRiBLe (ball, N=3)": (dp.SCRiBLe(3, horizon, 1.0), ball),
    }
    return {k: float(np.median(dp.simulate(lr, env, seeds=seeds).rounds_per_second)) for k, (lr, env) in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=8)
    args = parser.parse_args()
    start = time.perf_counter()
    table = full_information_and_exp2(args.horizon, args.seeds)
    mid = time.perf_counter()
    table.update(points(args.horizon, args.seeds))
    end = time.perf_counter()
    cols = [label(e) for e in EPSILONS]
    print(f"Regret at T = {args.horizon} (mean +- standard error over {args.seeds} seeds)")
    print(f"{'learner':<24}" + "".join(f"{c:>22}" for c in cols))
    for name, row in table.items():
        cells = "".join(f"{row[c][0]:>14.1f} +- {row[c][1]:<5.1f}" for c in cols)
        print(f"{name:<24}{cells}")
    print(f"wall time: experts and arms {mid - start:.1f} s, ball and cube {end - mid:.1f} s")
    print(f"throughput alone in simulate (eps = 1, median of {args.seeds} replicates, 2 in parallel):")
    for name, rate in throughput(args.horizon, args.seeds).items():
        print(f"  {name:<24}{rate:>14,.0f} rounds/s")


if __name__ == "__main__":
    main()
