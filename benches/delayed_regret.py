"""Delayed feedback: the regret of ``DPKLUCB`` under the queued reduction
(QPM-D, Joulani, György & Szepesvári 2013, Sec. 3.2), and the throughput of
the batch forms.

Regret: the 5-arm Bernoulli instance (0.75, 0.625, 0.5, 0.375, 0.25),
epsilon = 1, T rounds; every reward delivered at the end of round
s + d, d uniform on {0, ..., D} (D = 0: at once, the undelayed run). The
whole run is in Rust (``_simulate_delayed`` of the engine:
``rust/src/policy/delayed.rs``, ``simulate_delayed``); environment draws
and delays come from their own seeded streams. Target: mean regret at D <= 1.5 x the undelayed mean + 5 K D.

Throughput: ``select_many(n)`` then ``update_many(arms, rewards)`` with
batches of n = 10,000 (rewards drawn beforehand), decisions per second.

    PYTHONPATH=python python3 benches/delayed_regret.py --horizon 1000000 --seeds 20
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dpbandits as dp

MEANS = [0.75, 0.625, 0.5, 0.375, 0.25]
K = len(MEANS)


def regret_table(horizon: int, seeds: int, delays: list[int]) -> list[tuple[int, float, float, float]]:
    rows = []
    base = None
    for d in delays:
        runs = []
        for s in range(seeds):
            learner = dp.DPKLUCB(K, horizon, 1.0, seed=s)
            runs.append(learner._engine._simulate_delayed(MEANS, horizon, d, 10_000 + s))
        mean = statistics.fmean(runs)
        se = statistics.stdev(runs) / len(runs) ** 0.5 if len(runs) > 1 else 0.0
        if base is None:
            base = mean
        rows.append((d, mean, se, 1.5 * base + 5 * K * d))
    return rows


def throughput(batch: int, batches: int, reps: int) -> float:
    rng = np.random.default_rng(0)
    means = np.array(MEANS)
    rates = []
    for _ in range(reps):
        learner = dp.DPKLUCB(K, batch * batches + 1, 1.0, seed=1)
        draws = rng.random((batches, batch))
        spent = 0.0
        for b in range(batches):
            t0 = time.perf_counter()
            arms = learner.select_many(batch)
            spent += time.perf_counter() - t0
            rewards = (draws[b] < means[arms]).astype(np.float64)
            t0 = time.perf_counter()
            learner.update_many(arms, rewards)
            spent += time.perf_counter() - t0
        rates.append(batch * batches / spent)
    return statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--horizon", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--delays", type=int, nargs="+", default=[0, 100, 1000, 10000])
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    print(f"DPKLUCB, K = {K}, eps = 1, T = {args.horizon:,}, {args.seeds} seeds; rewards delayed uniform 0..D rounds")
    print("| D | regret (mean +- se) | target 1.5 R(0) + 5 K D | met |")
    print("|---|---|---|---|")
    for d, mean, se, target in regret_table(args.horizon, args.seeds, args.delays):
        print(f"| {d:,} | {mean:,.1f} +- {se:,.1f} | {target:,.1f} | {'yes' if mean <= target else 'NO'} |")
    rate = throughput(10_000, args.batches, args.reps)
    print(f"select_many + update_many, batches of 10,000: {rate / 1e6:.1f} M decisions/s (median of {args.reps})")


if __name__ == "__main__":
    main()
