"""Rounds per second of ``simulate`` at d = 5, K = 25 (D.2's environment,
gap 0.1) for the local and shuffle LinUCB learners (issue 23 target:
>= 1 M rounds/s), beside non-private LinUCB and JDP-LinUCB; one seed per
run, median of ``--runs`` runs.

    nice -n 10 python3 benches/linucb_trust_speed.py --horizon 1000000 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import dpbandits as dp
from dpbandits.learners import JointDPLinUCB, LinUCB, LocalLinUCB, ShuffleLinUCB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    n = args.horizon
    env = dp.ShariffSheffetEnv(5, 25, gap=0.1)
    learners = {
        "LinUCB (non-private)": LinUCB(5, n),
        "JointDPLinUCB tight": JointDPLinUCB(5, n, 1.0, 0.1, calibration="tight"),
        "ShuffleLinUCB vector-sum": ShuffleLinUCB(5, n, 1.0, 0.1),
        "ShuffleLinUCB amplification": ShuffleLinUCB(5, n, 1.0, 0.1, protocol="amplification"),
        "LocalLinUCB lattice": LocalLinUCB(5, n, 1.0, 0.1),
        "LocalLinUCB float": LocalLinUCB(5, n, 1.0, 0.1, sampler="float"),
        "LocalLinUCB noise off": LocalLinUCB(5, n),
    }
    for name, learner in learners.items():
        rates = []
        for run in range(args.runs):
            start = time.perf_counter()
            dp.simulate(learner, env, horizon=n, seeds=[run])
            rates.append(n / (time.perf_counter() - start))
        print(f"{name:30s} median {statistics.median(rates) / 1e6:.3f} M rounds/s "
              f"(min {min(rates) / 1e6:.3f}, max {max(rates) / 1e6:.3f}) over {args.runs} runs of {n:,}")


if __name__ == "__main__":
    main()
