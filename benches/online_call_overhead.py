"""The public online call against the engine-direct call, per learner
family: one round (``select`` and its ``update``) through the public class,
and the same round on ``learner._engine`` (the Rust binding with no Python
wrapper), on twin learners. The ratio public / engine is the wrapper's
cost (the target: within 1.5x).

Families: JointDPLinUCB (d = 5, K = 25, and d = 40, K = 400), LinUCB
(40, 400), LocalLinUCB and PrivateContextualUCB (5, 25),
EliminationLinearBandit (central, 8 actions in R^4), EXP2 (8 arms),
SCRiBLe (n = 4), PrivateFTRL (8 experts, full information). Rounds use
decision sets and rewards drawn beforehand. The forms alternate within
each of ``--repeats`` runs; medians of CPU time per round
(``time.process_time``) are reported. For instruction counts, run one form
under ``valgrind --tool=callgrind`` at two round counts and take the
difference.

    nice -n 10 python3 benches/online_call_overhead.py --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dpbandits as dp

Round = Callable[[Any, Any, int], None]


def unit_sets(n: int, k: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, k, d))
    return x / np.linalg.norm(x, axis=2, keepdims=True)


def contextual(make: Callable[[], Any], k: int, d: int, n: int) -> tuple[Callable[[], Any], Round, Round]:
    sets, ys = unit_sets(n, k, d, 1), np.random.default_rng(2).uniform(-1, 1, n)

    def public(lr: Any, e: Any, t: int) -> None:
        lr.select(sets[t])
        lr.update(ys[t])

    def engine(lr: Any, e: Any, t: int) -> None:
        i = e.select(sets[t])
        e.observe(sets[t][i], ys[t])

    return make, public, engine


def indexed(make: Callable[[], Any], n: int) -> tuple[Callable[[], Any], Round, Round]:
    ys = np.random.default_rng(3).uniform(0, 1, n).tolist()
    # The engine's own recording call: `update(index, reward)` for
    # elimination, `observe(arm, loss)` for the others.
    record = "update" if make.__name__ == "elimination" else "observe"

    def public(lr: Any, e: Any, t: int) -> None:
        lr.select()
        lr.update(ys[t])

    def engine(lr: Any, e: Any, t: int) -> None:
        getattr(e, record)(e.select(), ys[t])

    return make, public, engine


def named(make: Callable[[], Any], n: int) -> tuple[Callable[[], Any], Round, Round]:
    """``select()`` then ``update(arm, reward)`` (the delayed-feedback form)
    against the engine's ``observe(arm, reward)``."""
    ys = np.random.default_rng(3).uniform(0, 1, n).tolist()

    def public(lr: Any, e: Any, t: int) -> None:
        lr.update(lr.select(), ys[t])

    def engine(lr: Any, e: Any, t: int) -> None:
        e.observe(e.select(), ys[t])

    return make, public, engine


def elimination(h: int) -> Callable[[], Any]:
    def elimination() -> Any:
        return dp.EliminationLinearBandit(unit_sets(1, 8, 4, 6)[0], h, "central", 1.0, seed=0)

    return elimination


def scrible(n: int) -> tuple[Callable[[], Any], Round, Round]:
    ys = np.random.default_rng(4).uniform(-0.5, 0.5, n).tolist()

    def public(lr: Any, e: Any, t: int) -> None:
        lr.select()
        lr.update(ys[t])

    def engine(lr: Any, e: Any, t: int) -> None:
        e.select()
        e.observe(ys[t])

    return (lambda: dp.SCRiBLe(4, 10 * n, 1.0, seed=0)), public, engine


def ftrl(n: int) -> tuple[Callable[[], Any], Round, Round]:
    losses = np.random.default_rng(5).uniform(0, 1, size=(n, 8))

    def public(lr: Any, e: Any, t: int) -> None:
        lr.select()
        lr.update(losses[t])

    def engine(lr: Any, e: Any, t: int) -> None:
        e.select()
        e.observe(losses[t])

    return (lambda: dp.PrivateFTRL(8, 10 * n, 1.0, seed=0)), public, engine


def timed(make: Callable[[], Any], step: Round, n: int) -> float:
    lr = make()
    e = lr._engine
    t0 = time.process_time()
    for t in range(n):
        step(lr, e, t)
    return (time.process_time() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    n = args.rounds
    h = 10 * n
    cases = {
        "JointDPLinUCB (5, 25)": contextual(lambda: dp.JointDPLinUCB(5, h, 1.0, 0.1, seed=0), 25, 5, n),
        "JointDPLinUCB (40, 400)": contextual(lambda: dp.JointDPLinUCB(40, h, 1.0, 0.1, seed=0), 400, 40, n // 5),
        "LinUCB (40, 400)": contextual(lambda: dp.LinUCB(40, h, seed=0), 400, 40, n // 5),
        "LocalLinUCB (5, 25)": contextual(lambda: dp.LocalLinUCB(5, h, 1.0, 0.1, seed=0), 25, 5, n),
        "PrivateContextualUCB (5, 25)": contextual(lambda: dp.PrivateContextualUCB(5, h, 1.0, seed=0), 25, 5, n),
        "EliminationLinearBandit (8 x 4)": indexed(elimination(h), n),
        "EXP2 (8)": indexed(lambda: dp.EXP2(8, h, 1.0, seed=0), n),
        "SCRiBLe (4)": scrible(n),
        "PrivateFTRL (8)": ftrl(n),
        "DPTopTwo (5)": indexed(lambda: dp.DPTopTwo(5, 0.01, 1.0, max_samples=h, seed=0), n),
        "DPTopTwo (5) update(arm, r)": named(lambda: dp.DPTopTwo(5, 0.01, 1.0, max_samples=h, seed=0), n),
        "AdaPTT (5)": indexed(lambda: dp.AdaPTT(5, 0.01, 1.0, max_samples=h, seed=0), n),
    }
    print(f"public vs engine-direct round, median of {args.repeats} interleaved runs (CPU time; {dp.__file__})")
    print("| learner | public (us) | engine (us) | public / engine |")
    print("|---|---|---|---|")
    for name, (make, public, engine) in cases.items():
        rounds = n // 5 if "400" in name else n
        pub, eng = [], []
        for _ in range(args.repeats):
            pub.append(timed(make, public, rounds))
            eng.append(timed(make, engine, rounds))
        p, e = statistics.median(pub) * 1e6, statistics.median(eng) * 1e6
        print(f"| {name} | {p:.2f} | {e:.2f} | {p / e:.2f} |")


if __name__ == "__main__":
    main()
