"""Wall time of the paper's full D.2 horizon for all four variants.

Shariff & Sheffet App. D.2: d = 5, K = 25, gap 0.1, eps = 1, delta = 0.1,
n = 5 x 10^7, one seed per variant (NonPrivate, Gaussian, Wishart,
WishartUnshifted). The variants run two at a time on Python threads
(each simulate() call releases the GIL), so both cores are busy.

    python3 benches/full_horizon.py            # n = 5e7
    python3 benches/full_horizon.py --horizon 5000000
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import dpbandits as dp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=50_000_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    n = args.horizon
    learners = {
        "NonPrivate": dp.LinUCB(5, n),
        "Gaussian": dp.JointDPLinUCB(5, n, 1.0, 0.1, noise="gaussian"),
        "Wishart": dp.JointDPLinUCB(5, n, 1.0, 0.1, noise="wishart"),
        "WishartUnshifted": dp.JointDPLinUCB(5, n, 1.0, 0.1, noise="wishart", shift=False),
    }
    env = dp.ShariffSheffetEnv(5, gap=0.1)
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        futures = {name: pool.submit(dp.simulate, lrn, env, seeds=[0]) for name, lrn in learners.items()}
        results = {name: f.result() for name, f in futures.items()}
    wall = time.perf_counter() - start
    print(f"D.2 full horizon n = {n:,}, one seed per variant, {args.workers} workers")
    for name, r in results.items():
        print(f"  {name:<17} regret {r.final_regret[0]:>12.1f}  {r.rounds_per_second[0]:>12,.0f} rounds/s")
    print(f"all four variants: {wall:.1f} s wall")


if __name__ == "__main__":
    main()
