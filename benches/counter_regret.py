"""Regret with each continual counter, side by side on the same
environment realizations (``simulate_many``).

    nice -n 10 python benches/counter_regret.py d2 --n 50000000 --seeds 2 [--sampler float]
        [--counters blt] [--gaps 0.1] [--first-seed 4]
    nice -n 10 python benches/counter_regret.py mishra-thakurta --seeds 8
    nice -n 10 python benches/counter_regret.py agarwal-singh --seeds 8

- ``d2``: Shariff & Sheffet App. D.2 (d = 5, K = 25, eps = 1, delta = 0.1),
  tight Gaussian JointDPLinUCB with counter binary / smooth-binary / blt,
  gaps 0 and 0.1, lattice noise; non-private LinUCB for reference.
- ``mishra-thakurta``: PrivateUCB (tight, Lemma 5) on the 10-armed
  Bernoulli instance of ``mishra-thakurta-ucb`` (T = 1e6), and
  PrivateContextualUCB on D.2's environment (d = 3, K = 9, T = 1e5),
  binary against smooth-binary, eps 0.1 / 1 / 10.
- ``agarwal-singh``: PrivateFTRL (experts, tight) and PrivateFTPL on the
  ``agarwal-singh-experts`` losses (N = 10, T = 1e5), binary against
  smooth-binary (and blt for FTPL), eps 0.1 / 1 / 10.

Prints mean final regret (and the per-seed values) per learner.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import dpbandits as dp
from dpbandits.envs.shariff_sheffet import ShariffSheffetEnv


def _report(title: str, results: dict[str, dp.SimulationResult], started: float) -> None:
    print(f"\n## {title} ({time.time() - started:.0f} s)")
    for label, r in results.items():
        finals = np.asarray(r.final_regret)
        se = finals.std(ddof=1) / np.sqrt(finals.size) if finals.size > 1 else float("nan")
        print(f"{label:40s} mean {finals.mean():12,.1f}  se {se:10,.1f}  per seed {np.round(finals, 1).tolist()}")


def d2(n: int, seeds: list[int], sampler: str, counters: list[str], gaps: list[float]) -> None:
    for gap in gaps:
        learners: dict[str, Any] = {}
        if "none" in counters:
            learners["LinUCB (non-private)"] = dp.LinUCB(5, n, regularizer=1.0)
        for counter in (c for c in counters if c != "none"):
            learners[f"JDP tight {counter} ({sampler})"] = dp.JointDPLinUCB(
                5, n, 1.0, 0.1, calibration="tight", counter=counter, sampler=sampler  # type: ignore[arg-type]
            )
        for label, lrn in learners.items():
            if label != "LinUCB (non-private)":
                print(f"{label}: sigma {lrn.calibration.sigma:.4f}")
        started = time.time()
        res = dp.simulate_many(learners, ShariffSheffetEnv(d=5, k=25, gap=gap), seeds=seeds)
        _report(f"D.2 n = {n:,}, gap {gap}, seeds {seeds}", res, started)


def mishra_thakurta(seeds: int) -> None:
    from dpbandits.envs import BernoulliBandit
    from dpbandits.experiments.mishra_thakurta import MEANS

    n = 1_000_000
    learners = {}
    for eps in (0.1, 1.0, 10.0):
        for counter in ("binary", "smooth-binary"):
            learners[f"PrivateUCB tight eps={eps:g} {counter}"] = dp.PrivateUCB(
                10, n, eps, calibration="tight", counter=counter  # type: ignore[arg-type]
            )
    started = time.time()
    _report(f"PrivateUCB, 10-armed Bernoulli, T = {n:,}",
            dp.simulate_many(learners, BernoulliBandit(means=list(MEANS)), seeds=seeds), started)
    n = 100_000
    learners = {}
    for eps in (0.1, 1.0, 10.0):
        for counter in ("binary", "smooth-binary"):
            learners[f"PrivateContextualUCB eps={eps:g} {counter}"] = dp.PrivateContextualUCB(
                3, n, eps, counter=counter  # type: ignore[arg-type]
            )
    started = time.time()
    _report(f"PrivateContextualUCB, d = 3, K = 9, gap 0.1, T = {n:,}",
            dp.simulate_many(learners, ShariffSheffetEnv(d=3, k=9, gap=0.1), seeds=seeds), started)


def agarwal_singh(seeds: int) -> None:
    from dpbandits.envs import StochasticLosses
    from dpbandits.experiments.agarwal_singh import FTPL_DELTA, MEANS, N

    n = 100_000
    learners = {}
    for eps in (0.1, 1.0, 10.0):
        for counter in ("binary", "smooth-binary"):
            learners[f"PrivateFTRL eps={eps:g} {counter}"] = dp.PrivateFTRL(N, n, eps, counter=counter)  # type: ignore[arg-type]
        for counter in ("binary", "smooth-binary", "blt"):
            try:
                learners[f"PrivateFTPL eps={eps:g} {counter}"] = dp.PrivateFTPL(
                    N, n, eps, FTPL_DELTA, counter=counter  # type: ignore[arg-type]
                )
            except ValueError as exc:  # the lattice allowance of T N encoded coordinates
                print(f"PrivateFTPL eps={eps:g} {counter}: not built: {exc}")
    started = time.time()
    _report(f"Agarwal & Singh experts, N = {N}, T = {n:,}",
            dp.simulate_many(learners, StochasticLosses(means=list(MEANS)), seeds=seeds), started)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", choices=["d2", "mishra-thakurta", "agarwal-singh"])
    ap.add_argument("--n", type=float, default=5e7, help="D.2 horizon")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--first-seed", type=int, default=0, help="D.2: seeds first-seed .. first-seed + seeds - 1")
    ap.add_argument("--sampler", choices=["lattice", "float"], default="lattice", help="D.2 noise law")
    ap.add_argument("--counters", default="none,binary,smooth-binary,blt",
                    help="D.2: comma-separated counters of the tight learner ('none': non-private LinUCB)")
    ap.add_argument("--gaps", default="0.1,0", help="D.2: comma-separated gaps")
    args = ap.parse_args()
    if args.which == "d2":
        d2(int(args.n), list(range(args.first_seed, args.first_seed + args.seeds)), args.sampler,
           args.counters.split(","), [float(g) for g in args.gaps.split(",")])
    elif args.which == "mishra-thakurta":
        mishra_thakurta(args.seeds)
    else:
        agarwal_singh(args.seeds)


if __name__ == "__main__":
    main()
