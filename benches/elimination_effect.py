"""Regret of batched elimination (Hanna et al. Alg. 1-4) on Fig. 2a's setting.

K = 10 actions and theta* uniform on the unit circle (d = 2), +-1 rewards,
T = 10^6; central (Alg. 1), local (Alg. 2, epsilon is eps0), shuffle
(Alg. 3, delta = 1e-6, closed-form f_{n,delta}), shuffle-sum (Alg. 4,
delta = 1e-6, the shuffled scalar sum of CJMP21) and non-private, at
epsilon in {0.1, 1, 10}. Each seed s draws its own action set
(LinearBanditEnv(10, d=2, seed=s)) and theta* (replicate seed s); all
learners of a seed share that instance and its reward noise. Declared
sensitivity 2 (rewards in [-1, 1]) unless --calibration paper.

``--fig2b`` also runs and times Fig. 2b's setting (K = 1000, T = 10^7,
central, epsilon in {1, 0.1, 0.01}) with and without core sets
(exploration="uniform").

    python3 benches/elimination_effect.py --seeds 4
    python3 benches/elimination_effect.py --seeds 4 --fig2b
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dpbandits as dp


def fig2a(horizon: int, seeds: int, calibration: str) -> None:
    eps_grid = (0.1, 1.0, 10.0)
    finals: dict[str, list[float]] = {}
    start = time.perf_counter()
    for s in range(seeds):
        env = dp.LinearBanditEnv(10, d=2, seed=s)
        learners = {"non-private": dp.EliminationLinearBandit(env.actions, horizon, None, seed=s)}
        for eps in eps_grid:
            for model in ("central", "local", "shuffle", "shuffle-sum"):
                delta = 1e-6 if model.startswith("shuffle") else None
                learners[f"{model} eps={eps:g}"] = dp.EliminationLinearBandit(
                    env.actions, horizon, model, eps, delta, calibration=calibration, seed=s  # type: ignore[arg-type]
                )
        res = dp.simulate_many(learners, env, seeds=[s])
        for name, r in res.items():
            finals.setdefault(name, []).extend(r.final_regret.tolist())
    wall = time.perf_counter() - start
    print(f"Fig. 2a: K = 10, d = 2, T = {horizon:,}, seeds 0..{seeds - 1}, calibration={calibration}")
    print(f"{'learner':<22} {'regret mean':>12} {'sd':>10}")
    for name, f in finals.items():
        a = np.array(f)
        print(f"{name:<22} {a.mean():>12.1f} {a.std(ddof=1) if a.size > 1 else 0.0:>10.1f}")
    print(f"wall time (all {len(finals)} learners x {seeds} seeds): {wall:.1f} s")


def fig2b(seeds: int) -> None:
    horizon = 10_000_000
    env = dp.LinearBanditEnv(1000, d=2, seed=0)
    print(f"Fig. 2b: K = 1000, d = 2, T = {horizon:,}, central model, seeds 0..{seeds - 1}")
    for eps in (1.0, 0.1, 0.01):
        for exploration in ("core_set", "uniform"):
            lrn = dp.EliminationLinearBandit(env.actions, horizon, "central", eps, exploration=exploration, seed=0)
            start = time.perf_counter()
            res = dp.simulate(lrn, env, seeds=seeds)
            wall = time.perf_counter() - start
            f = res.final_regret
            print(f"eps={eps:<5g} {exploration:<10} regret {f.mean():>12.1f} +- "
                  f"{f.std(ddof=1) if f.size > 1 else 0.0:>9.1f}  wall {wall:.2f} s ({seeds} x 1e7 rounds, <= 2 cores)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--calibration", choices=("tight", "paper"), default="tight")
    parser.add_argument("--fig2b", action="store_true")
    args = parser.parse_args()
    fig2a(args.horizon, args.seeds, args.calibration)
    if args.fig2b:
        fig2b(args.seeds)


if __name__ == "__main__":
    main()
