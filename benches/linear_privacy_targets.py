"""The deployment targets' figures of the joint-DP contextual learners on
the d = 20, K = 100 linear instance and the logistic environment: final
regret at T (mean ± se over the seeds, one shared set of environment
realizations, ``simulate_many``), eps = 1, delta = 1e-6, lattice noise.

    nice -n 10 python benches/linear_privacy_targets.py --env d20 --n 1000000 --seeds 8
    nice -n 10 python benches/linear_privacy_targets.py --env logistic --n 10000000 --seeds 8

The ratio to LinUCB at T = 1e6 and the growth of the extra regret over
LinUCB from T = 1e5 to 1e7 come from runs at those horizons with the same
seeds. Learners: LinUCB; JointDPLinUCB (tight calibration) with the epoch
and the BLT counters; ReweightedLinUCB and JointDPReweightedLinUCB
(beta_scale = 0.01); on the logistic environment also
ReweightedLogisticUCB and JointDPReweightedLogisticUCB (beta_scale = 0.01).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

import dpbandits as dp
from dpbandits.envs.logistic import d20_instance


def learners(env_name: str, d: int, n: int) -> dict[str, Any]:
    eps, delta = 1.0, 1e-6
    out: dict[str, Any] = {
        "LinUCB": dp.LinUCB(d, n),
        "JointDPLinUCB epoch": dp.JointDPLinUCB(d, n, eps, delta, calibration="tight", counter="epoch"),
        "JointDPLinUCB blt": dp.JointDPLinUCB(d, n, eps, delta, calibration="tight", counter="blt"),
        "ReweightedLinUCB": dp.ReweightedLinUCB(d, n, beta_scale=0.01),
        "JointDPReweightedLinUCB": dp.JointDPReweightedLinUCB(d, n, eps, delta, beta_scale=0.01),
    }
    if env_name == "logistic":
        out["ReweightedLogisticUCB"] = dp.ReweightedLogisticUCB(d, n, beta_scale=0.01)
        out["JointDPReweightedLogisticUCB"] = dp.JointDPReweightedLogisticUCB(d, n, eps, delta, beta_scale=0.01)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=["d20", "logistic"], default="d20")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--only", nargs="*", default=None, help="learner names (default: all)")
    args = parser.parse_args()
    if args.env == "d20":
        d, env = 20, d20_instance(seed=0)
    else:
        d, env = 5, dp.LogisticContextualEnv(d=5, k=25, gap=0.1, seed=0)
    table = learners(args.env, d, args.n)
    if args.only is not None:
        table = {k: v for k, v in table.items() if k in args.only}
    print(f"{args.env}, eps 1, delta 1e-6, T = {args.n}, {args.seeds} seeds; load average {os.getloadavg()[0]:.2f}")
    cpu = time.process_time()
    results = dp.simulate_many(table, env, seeds=args.seeds)
    for name, r in results.items():
        f = r.final_regret
        se = f.std(ddof=1) / np.sqrt(f.size) if f.size > 1 else float("nan")
        print(f"{name:30s} mean {f.mean():10.1f} se {se:8.1f}", flush=True)
    print(f"CPU {time.process_time() - cpu:.1f} s; load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
