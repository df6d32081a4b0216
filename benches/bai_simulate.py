"""Samples per CPU-second inside ``simulate`` of the best-arm identification
learners (dpbandits.learners.bai), K = 5 Bernoulli arms
(0.75, 0.625, 0.5, 0.375, 0.25), delta = 0.01.

CPU seconds (``time.process_time``, every thread of the process) rather
than wall time: on a shared machine the parallel replicates get a varying
share of the cores, and the target (10 M samples per second per core) is
per core. Run: ``PYTHONPATH=python python3 benches/bai_simulate.py``.
"""

from __future__ import annotations

import time

import dpbandits as dp

MEANS = (0.75, 0.625, 0.5, 0.375, 0.25)


def main() -> None:
    learners = {
        "DPTopTwo eps=1": dp.DPTopTwo(5, 0.01, 1.0),
        "DPTopTwo eps=0.01": dp.DPTopTwo(5, 0.01, 0.01),
        "AdaPTT eps=1": dp.AdaPTT(5, 0.01, 1.0),
        "TopTwoBAI": dp.TopTwoBAI(5, 0.01),
    }
    for name, learner in learners.items():
        learner.simulate(MEANS, 4, seed=0)  # warm-up
        rates = []
        for rep in range(3):
            c0 = time.process_time()
            runs = learner.simulate(MEANS, 200, seed=1 + rep)
            cpu = time.process_time() - c0
            rates.append(float(runs.stopping_times.sum()) / cpu / 1e6)
        rates.sort()
        print(f"{name:20s} median {rates[1]:6.1f} M samples per CPU-second (runs: "
              + ", ".join(f"{r:.1f}" for r in rates) + ")")


if __name__ == "__main__":
    main()
