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
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import dpbandits as dp

sys.path.insert(0, str(Path(__file__).resolve().parent))

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


def ftrl(n: int, make: Callable[[], Any] | None = None) -> tuple[Callable[[], Any], Round, Round]:
    losses = np.random.default_rng(5).uniform(0, 1, size=(n, 8))

    def public(lr: Any, e: Any, t: int) -> None:
        lr.select()
        lr.update(losses[t])

    def engine(lr: Any, e: Any, t: int) -> None:
        e.select()
        e.observe(losses[t])

    return (make or (lambda: dp.PrivateFTRL(8, 10 * n, 1.0, seed=0))), public, engine


def _client_contexts(rng: np.random.Generator) -> np.ndarray:
    return unit_sets(1, 4, 3, int(rng.integers(2**31)))[0]


def client_elimination(h: int, n: int) -> tuple[Callable[[], Any], Round, Round]:
    """ContextualEliminationBandit over 6 parameters in R^3, 4 client
    actions a round: the engine-direct round is the elimination engine's
    ``select`` / ``update(i, reward)`` and the client's argmax
    (``_core.best_row``)."""
    from dpbandits import _core

    feats, ys = unit_sets(n, 4, 3, 7), np.random.default_rng(8).uniform(-1, 1, n).tolist()
    thetas = unit_sets(1, 6, 3, 9)[0]

    def make() -> Any:
        return dp.ContextualEliminationBandit(thetas, _client_contexts, h, "central", 1.0, seed=0)

    def public(lr: Any, e: Any, t: int) -> None:
        lr.select(feats[t])
        lr.update(ys[t])

    def engine(lr: Any, e: Any, t: int) -> None:
        i = e.select()
        _core.best_row(feats[t], thetas[i])
        e.update(i, ys[t])

    return make, public, engine


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
    ap.add_argument("--only", nargs="*", help="learners whose name contains one of these words (default: all)")
    args = ap.parse_args()
    n = args.rounds
    h = 10 * n
    import online_call_callgrind

    cases = online_call_callgrind.cases(n)
    cases["JointDPLinUCB (40, 400)"] = contextual(lambda: dp.JointDPLinUCB(40, h, 1.0, 0.1, seed=0), 400, 40, n // 5)
    cases = {k: v for k, v in cases.items() if not args.only or any(w in k for w in args.only)}
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
