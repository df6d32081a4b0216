"""Regret of the jointly private contextual linear learners at a
deployment's delta, side by side on the same environment realizations
(``simulate_many``): Shariff & Sheffet App. D.2 (d = 5, K = 25, gap 0),
eps = 1, delta = 1e-6, lattice noise.

    nice -n 10 python benches/reweighted_regret.py --n 1000000 --seeds 8

Learners: non-private LinUCB and ReweightedLinUCB; JointDPLinUCB (tight
calibration, BLT counter; and the epoch counter with its adaptive radius,
``--ratios``); JointDPReweightedLinUCB with its derived radius
(beta_scale = 1) and with beta_scale = 0.01. Prints, per learner, the mean
final regret, its standard error over the seeds, the median and the
simulation rate.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import dpbandits as dp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--gap", type=float, default=0.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--ratios", type=float, nargs="*", default=[1.5])
    parser.add_argument("--first-epoch", type=int, default=None)
    parser.add_argument("--only", nargs="*", default=None, help="learner names to run (default: all)")
    args = parser.parse_args()
    n, d, eps, delta = args.n, 5, 1.0, args.delta
    learners = {
        "LinUCB": dp.LinUCB(d, n),
        "ReweightedLinUCB": dp.ReweightedLinUCB(d, n),
        "JointDPLinUCB tight+blt": dp.JointDPLinUCB(d, n, eps, delta, calibration="tight", counter="blt"),
        **{
            f"JointDPLinUCB epoch r={r:g}": dp.JointDPLinUCB(
                d, n, eps, delta, calibration="tight", counter="epoch", epoch_ratio=r, first_epoch=args.first_epoch
            )
            for r in args.ratios
        },
        "JointDPReweightedLinUCB": dp.JointDPReweightedLinUCB(d, n, eps, delta),
        "JointDPReweightedLinUCB beta_scale=0.01": dp.JointDPReweightedLinUCB(d, n, eps, delta, beta_scale=0.01),
    }
    env = dp.ShariffSheffetEnv(d=d, gap=args.gap, seed=0)
    print(f"D.2 gap {args.gap}, eps {eps}, delta {delta}, T = {n}, {args.seeds} seeds; "
          f"load average before: {os.getloadavg()[0]:.2f}")
    for name, learner in learners.items():
        if args.only is not None and not any(name.startswith(o) for o in args.only):
            continue
        start = time.perf_counter()
        res = dp.simulate(learner, env, seeds=args.seeds)
        f = res.final_regret
        print(f"{name:42s} mean {f.mean():10.1f} se {f.std(ddof=1) / np.sqrt(len(f)):8.1f} "
              f"median {np.median(f):10.1f}  {np.median(res.rounds_per_second) / 1e6:5.2f} M rounds/s "
              f"({time.perf_counter() - start:.1f} s)", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
