"""Fixed cost of one ``simulate()`` call: a 10-round run of UCB1 on a
2-armed Bernoulli bandit, median of many calls (target: < 100 us).

    python3 benches/simulate_overhead.py --calls 200
"""

from __future__ import annotations

import argparse
import statistics
import time

import dpbandits as dp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    learner, env = dp.UCB1(2, 10), dp.BernoulliBandit([0.3, 0.6])
    times = []
    for _ in range(args.calls):
        start = time.perf_counter()
        dp.simulate(learner, env, horizon=10, seeds=[1])
        times.append(time.perf_counter() - start)
    print(f"simulate(), 10 rounds: median {statistics.median(times) * 1e6:.0f} us, "
          f"min {min(times) * 1e6:.0f} us over {args.calls} calls")


if __name__ == "__main__":
    main()
