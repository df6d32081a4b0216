"""Effect of privacy on the online learners of Agarwal & Singh 2017.

Regret at T = 1e5 for epsilon in {0.1, 1, 10} next to the non-private
algorithm, for PrivateFTRL (experts), PrivateFTPL (experts, delta = 1e-5),
EXP2 (multi-armed bandit) and SCRiBLe (bandit over the unit ball).

Instances: experts / arms are Bernoulli losses, expert 0 with mean 0.4 and
nine others with mean 0.5 (dpbandits.StochasticLosses), run in Rust by
dpbandits.simulate_many (regret against the best expert in hindsight).
SCRiBLe plays points of the ball in N = 3: l_t = theta + noise clipped to
||l_t||_2 <= 1, theta = (0.3, -0.4, 0), noise uniform in [-0.3, 0.3]^3;
regret sum_t <l_t, y_t> + ||L_T||_2 against the best fixed point in
hindsight (-L_T / ||L_T||), kept here (SCRiBLe runs online only).

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


def scrible(horizon: int, seeds: int) -> dict[str, tuple[float, float]]:
    theta = np.array([0.3, -0.4, 0.0])
    out = {}
    for eps in EPSILONS:
        regrets = []
        for seed in range(seeds):
            rng = np.random.default_rng(1000 + seed)
            noise = rng.uniform(-0.3, 0.3, size=(horizon, 3))
            losses = theta + noise
            norms = np.linalg.norm(losses, axis=1, keepdims=True)
            losses /= np.maximum(norms, 1.0)
            learner = dp.SCRiBLe(3, horizon, eps, seed=seed)
            played = 0.0
            for l_t in losses:
                y = learner.select()
                loss = float(l_t @ y)
                played += loss
                learner.update(loss)
            regrets.append(played + float(np.linalg.norm(losses.sum(axis=0))))
        r = np.array(regrets)
        out[label(eps)] = (float(r.mean()), float(r.std(ddof=1) / np.sqrt(len(r))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--scrible-seeds", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    table = full_information_and_exp2(args.horizon, args.seeds)
    mid = time.perf_counter()
    table["SCRiBLe (ball, N=3)"] = scrible(args.horizon, args.scrible_seeds)
    end = time.perf_counter()
    cols = [label(e) for e in EPSILONS]
    print(f"Regret at T = {args.horizon} (mean +- standard error; {args.seeds} seeds, SCRiBLe {args.scrible_seeds})")
    print(f"{'learner':<22}" + "".join(f"{c:>22}" for c in cols))
    for name, row in table.items():
        cells = "".join(f"{row[c][0]:>14.1f} +- {row[c][1]:<5.1f}" for c in cols)
        print(f"{name:<22}{cells}")
    print(f"wall time: simulate (FTRL, FTPL, EXP2) {mid - start:.1f} s, SCRiBLe online {end - mid:.1f} s")


if __name__ == "__main__":
    main()
