"""Regret of the Mishra & Thakurta private K-armed learners against the
Shariff & Sheffet Cor. 15 lower bound.

10-armed Bernoulli instance, means linearly spaced 0.9 .. 0.45 (gaps
0.05 .. 0.45), T = 10^6, eps in {0.1, 1, 10}; UCB1 and Thompson sampling
as non-private references. All learners of one replicate run on one shared
realization (common random numbers, ``dpbandits.simulate_many``).

Lower bound (Cor. 15): (k - 1) ln(T) / (200 eps) on the private part, plus
the non-private Omega(sum_a ln(T) / Delta_a) whose constant the corollary
does not state (shown with constant 1 for scale only).

    python3 benches/mishra_thakurta_effect.py --horizon 1000000 --seeds 4
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import dpbandits as dp
from dpbandits.privacy import private_mab_regret_lower_bound


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--calibration", default="paper", choices=["paper", "tight"])
    args = parser.parse_args()
    k, n = 10, args.horizon
    means = np.linspace(0.9, 0.45, k)
    env = dp.BernoulliBandit(means)
    gaps = means.max() - means[1:]
    lai_robbins_scale = float(np.sum(math.log(n) / gaps))
    learners: dict[str, object] = {"UCB1": dp.UCB1(k, n), "TS (Beta)": dp.ThompsonSampling(k, n)}
    for eps in (0.1, 1.0, 10.0):
        c = args.calibration
        learners[f"PrivUCB e={eps:g}"] = dp.PrivateUCB(k, n, eps, calibration=c)
        learners[f"PrivUCB-D1 e={eps:g}"] = dp.PrivateUCB(k, n, eps, confidence="empirical", calibration=c)
        learners[f"PrivTS e={eps:g}"] = dp.PrivateThompsonSampling(k, n, eps, calibration=c)
        learners[f"PrivTS-noGap e={eps:g}"] = dp.PrivateThompsonSampling(
            k, n, eps, gap_estimation=False, calibration=c
        )
    print(f"k = {k}, means = linspace(0.9, 0.45, 10), T = {n:,}, seeds 0..{args.seeds - 1}, "
          f"calibration {args.calibration}")
    print(f"round-robin regret would be {n * float(np.mean(means.max() - means)):,.0f}; "
          f"sum_a ln(T)/Delta_a = {lai_robbins_scale:,.0f}")
    start = time.perf_counter()
    res = dp.simulate_many(learners, env, seeds=args.seeds, record_every=n // 10)
    wall = time.perf_counter() - start
    print(f"{'learner':<22} {'regret mean':>12} {'sd':>9} {'Cor.15 bound':>13} {'ratio':>9}  guarantee")
    for name, r in res.items():
        f = r.final_regret
        g = r.guarantee
        if g.is_private:
            lb = private_mab_regret_lower_bound(k, n, g.epsilon)
            bound, ratio = f"{lb:13.2f}", f"{f.mean() / lb:9.0f}"
        else:
            bound, ratio = f"{'-':>13}", f"{'-':>9}"
        sd = f.std(ddof=1) if f.size > 1 else 0.0
        print(f"{name:<22} {f.mean():>12,.1f} {sd:>9,.1f} {bound} {ratio}  {g.epsilon:g}-{g.model}")
    print(f"wall time {wall:.1f} s for {len(learners)} learners x {args.seeds} seeds x {n:,} rounds "
          f"({len(learners) * args.seeds * n / wall:,.0f} learner-rounds/s)")


if __name__ == "__main__":
    main()
