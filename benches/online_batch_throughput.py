"""Decisions per second of the batch calls of the online protocol:
``select_many(decision_sets)`` + ``update_many(X, rewards)`` on
``dp.JointDPLinUCB`` (Gaussian tree noise, exact lattice sampler by
default, epsilon = 1, delta = 0.1), beside the loop of single public calls
and the loop of engine-direct calls (``learner._engine.select`` /
``observe``).

Workload: d = 5, K = 25 (the D.2 shape), unit-norm random decision sets
drawn beforehand, rewards uniform in [-1, 1]; batches of ``--batch``
decisions (default 10,000), one decision = one selection and its update.
Each run times ``--batches`` consecutive batches on a fresh learner;
the three forms alternate within each of ``--repeats`` runs and the
median decisions/s over the runs is reported. Times are CPU time of the
process (``time.process_time``): on a shared machine the wall clock mostly
measures the other users.

With ``--learner DPKLUCB``: ``dp.DPKLUCB(5, horizon, 1.0)`` on Bernoulli
arms (means 0.1 .. 0.9, rewards drawn beforehand for the arm each
decision selects), ``select_many(batch)`` + ``update_many(arms,
rewards)``, beside the loop of public ``select()`` + ``update(r)``.

Run from the repository root:

    nice -n 10 python3 benches/online_batch_throughput.py
    nice -n 10 python3 benches/online_batch_throughput.py --d 5 --k 25 --batch 10000 --repeats 7
    nice -n 10 python3 benches/online_batch_throughput.py --learner DPKLUCB --batches 100 --repeats 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import numpy as np

import dpbandits as dp


def workload(d: int, k: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sets = rng.normal(size=(n, k, d))
    sets /= np.linalg.norm(sets, axis=2, keepdims=True)
    return sets, rng.uniform(-1.0, 1.0, size=n)


def make(d: int, horizon: int, sampler: str) -> dp.JointDPLinUCB:
    return dp.JointDPLinUCB(d, horizon, 1.0, 0.1, sampler=sampler, seed=0)  # type: ignore[arg-type]


def run_batch(learner: dp.JointDPLinUCB, sets: np.ndarray, ys: np.ndarray, batch: int) -> float:
    t0 = time.process_time()
    for s in range(0, len(ys), batch):
        chosen = learner.select_many(sets[s:s + batch])
        learner.update_many(sets[np.arange(s, s + len(chosen)), chosen], ys[s:s + batch])
    return time.process_time() - t0


def run_public(learner: dp.JointDPLinUCB, sets: np.ndarray, ys: np.ndarray) -> float:
    t0 = time.process_time()
    for s, y in zip(sets, ys, strict=True):
        learner.select(s)
        learner.update(y)
    return time.process_time() - t0


def run_engine(learner: dp.JointDPLinUCB, sets: np.ndarray, ys: np.ndarray) -> float:
    engine = learner._engine
    t0 = time.process_time()
    for s, y in zip(sets, ys, strict=True):
        i = engine.select(s)
        engine.observe(s[i], y)
    return time.process_time() - t0


MEANS = np.array([0.1, 0.3, 0.5, 0.7, 0.9])


def karmed_batch(horizon: int, draws: np.ndarray, batch: int) -> float:
    learner = dp.DPKLUCB(5, horizon, 1.0, seed=0)
    t0 = time.process_time()
    for s in range(0, draws.shape[1], batch):
        arms = learner.select_many(batch)
        learner.update_many(arms, draws[arms, np.arange(s, s + batch)])
    return time.process_time() - t0


def karmed_public(horizon: int, draws: np.ndarray, m: int) -> float:
    learner = dp.DPKLUCB(5, horizon, 1.0, seed=0)
    table = draws[:, :m].tolist()
    t0 = time.process_time()
    for t in range(m):
        learner.update(table[learner.select()][t])
    return time.process_time() - t0


def karmed_main(args: argparse.Namespace) -> None:
    n = args.batch * args.batches
    # One Bernoulli reward per arm and round, drawn beforehand (rewards of
    # the arm each decision selects are read from it, outside the timing
    # of the draws).
    draws = (np.random.default_rng(0).uniform(size=(5, n)) < MEANS[:, None]).astype(np.float64)
    rates: dict[str, list[float]] = {"batch": [], "public loop": []}
    for _ in range(args.repeats):
        rates["batch"].append(n / karmed_batch(n + 1, draws, args.batch))
        m = args.loop_rounds
        rates["public loop"].append(m / karmed_public(n + 1, draws, m))
    print(f"DPKLUCB k=5 eps=1, batches of {args.batch}, {args.batches} batches, "
          f"{args.repeats} runs (median, CPU time; {dp.__file__})")
    for name, r in rates.items():
        print(f"  {name:12s} {statistics.median(r) / 1e6:7.3f} M decisions/s   "
              f"(runs: {', '.join(f'{v / 1e6:.3f}' for v in r)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--k", type=int, default=25)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--loop-rounds", type=int, default=20_000, help="rounds timed for the single-call loops")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sampler", default="lattice", choices=["lattice", "float"])
    ap.add_argument("--learner", default="JointDPLinUCB", choices=["JointDPLinUCB", "DPKLUCB"])
    args = ap.parse_args()
    if args.learner == "DPKLUCB":
        karmed_main(args)
        return
    n = args.batch * args.batches
    sets, ys = workload(args.d, args.k, n, 0)
    horizon = n + 1
    rates: dict[str, list[float]] = {"batch": [], "public loop": [], "engine loop": []}
    for _ in range(args.repeats):
        rates["batch"].append(n / run_batch(make(args.d, horizon, args.sampler), sets, ys, args.batch))
        m = args.loop_rounds
        rates["public loop"].append(m / run_public(make(args.d, horizon, args.sampler), sets[:m], ys[:m]))
        rates["engine loop"].append(m / run_engine(make(args.d, horizon, args.sampler), sets[:m], ys[:m]))
    print(f"JointDPLinUCB d={args.d} K={args.k} sampler={args.sampler}, batches of {args.batch}, "
          f"{args.repeats} runs (median, CPU time; {dp.__file__})")
    for name, r in rates.items():
        print(f"  {name:12s} {statistics.median(r) / 1e6:7.3f} M decisions/s   "
              f"(runs: {', '.join(f'{v / 1e6:.3f}' for v in r)})")


if __name__ == "__main__":
    main()
