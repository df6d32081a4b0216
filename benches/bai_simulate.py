"""Samples per CPU-second inside ``simulate`` of every best-arm
identification learner (dpbandits.learners.bai), K = 5 Bernoulli arms
(0.75, 0.625, 0.5, 0.375, 0.25), delta = 0.01.

CPU seconds (``time.process_time``, every thread of the process) rather
than wall time: on a shared machine the parallel replicates get a varying
share of the cores, and the target (10 M samples per second per core) is
per core. Each learner: one warm-up, then ``--runs`` (default 5) timed
runs of 200 replicates on fresh seeds; the median and the runs are
printed with the load average before and after. Run:
``PYTHONPATH=python python3 benches/bai_simulate.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import dpbandits as dp

MEANS = (0.75, 0.625, 0.5, 0.375, 0.25)


def learners() -> dict[str, dp.learners.bai.BestArmIdentifier]:
    """The benchmarked configurations (every BAI learner)."""
    return {
        "TopTwoBAI": dp.TopTwoBAI(5, 0.01),
        "DPTopTwo eps=1": dp.DPTopTwo(5, 0.01, 1.0),
        "DPTopTwo eps=0.01": dp.DPTopTwo(5, 0.01, 0.01),
        "AdaPTT eps=1": dp.AdaPTT(5, 0.01, 1.0),
        "AdaPTTStar eps=1": dp.AdaPTTStar(5, 0.01, 1.0),
        "AdaPTTStar eps=0.01": dp.AdaPTTStar(5, 0.01, 0.01),
        "CTBTT eps=1": dp.CTBTT(5, 0.01, 1.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, learner in learners().items():
        learner.simulate(MEANS, 4, seed=0)  # warm-up
        rates = []
        for rep in range(args.runs):
            c0 = time.process_time()
            runs = learner.simulate(MEANS, args.reps, seed=1 + rep)
            cpu = time.process_time() - c0
            rates.append(float(runs.stopping_times.sum()) / cpu / 1e6)
        print(f"{name:20s} median {statistics.median(rates):6.1f} M samples per CPU-second (runs: "
              + ", ".join(f"{r:.1f}" for r in sorted(rates)) + ")")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
