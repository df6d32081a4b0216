"""Wall time of the paper's full D.2 horizon for all four variants.

Shariff & Sheffet App. D.2: d = 5, K = 25, gap 0.1, eps = 1, delta = 0.1,
n = 5 x 10^7, one seed (NonPrivate, Gaussian, Wishart, WishartUnshifted). The variants
run in two groups on two Python threads (each simulate_many() call
releases the GIL); each group shares one environment realization per
round (simulate_many), and both groups use seed 0, so all four variants
see the same contexts and reward noise.

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
    # Balance the two groups: a Wishart learner with a lighter one.
    groups = [["NonPrivate", "Wishart"], ["Gaussian", "WishartUnshifted"]]
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        futures = [pool.submit(dp.simulate_many, {k: learners[k] for k in g}, env, seeds=[0]) for g in groups]
        results = {name: r for f in futures for name, r in f.result().items()}
    wall = time.perf_counter() - start
    print(f"D.2 full horizon n = {n:,}, seed 0, {len(groups)} groups on {args.workers} threads")
    for name in learners:
        r = results[name]
        print(f"  {name:<17} regret {r.final_regret[0]:>12.1f}   group rate {r.rounds_per_second[0]:>10,.0f} rounds/s")
    print(f"all four variants: {wall:.1f} s wall")


if __name__ == "__main__":
    main()
