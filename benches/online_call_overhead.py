"""The public online call against the engine-direct call, per learner
family: one round (``select`` and its ``update``) through the public class,
and the same round on ``learner._engine`` (the Rust binding with no Python
wrapper), on twin learners. The ratio public / engine is the wrapper's
cost (the target: within 1.5x).

Learners: every case of ``benches/online_call_callgrind.py`` (every
learner class of ``dpbandits.__all__``), plus JointDPLinUCB (d = 40,
K = 400). Rounds use decision sets and rewards drawn beforehand. As in the
callgrind bench, each case first runs once untimed (what the process builds
once, e.g. a sampler's table at the first release, is not charged to the
form that runs first), and each timed learner plays ``WARM`` untimed rounds
before its timed ones (its first-round work: the first release, a
once-per-learner clipping warning). The forms alternate within each of
``--repeats`` runs; medians of CPU time per round (``time.process_time``)
are reported, with the load average at the start and at the end.

    python3 benches/online_call_overhead.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
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
    # Spelled out, not looked up with getattr: a getattr call costs the
    # engine-direct round hundreds of instructions the public call never pays.

    def public(lr: Any, e: Any, t: int) -> None:
        lr.select()
        lr.update(ys[t])

    def engine_observe(lr: Any, e: Any, t: int) -> None:
        e.observe(e.select(), ys[t])

    def engine_update(lr: Any, e: Any, t: int) -> None:
        e.update(e.select(), ys[t])

    engine = engine_update if make.__name__ == "elimination" else engine_observe

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


WARM = 50


def timed(make: Callable[[], Any], step: Round, n: int) -> float:
    lr = make()
    e = lr._engine
    for t in range(WARM):
        step(lr, e, t)
    t0 = time.process_time()
    for t in range(WARM, WARM + n):
        step(lr, e, t)
    return (time.process_time() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*", help="learners whose name contains one of these words (default: all)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # the once-per-learner clipping warnings, in the untimed rounds
    n = args.rounds
    h = 10 * (n + WARM)
    import online_call_callgrind

    cases = online_call_callgrind.cases(n + WARM)
    cases["JointDPLinUCB (40, 400)"] = contextual(
        lambda: dp.JointDPLinUCB(40, h, 1.0, 0.1, seed=0), 400, 40, n // 5 + WARM)
    cases = {k: v for k, v in cases.items() if not args.only or any(w in k for w in args.only)}
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"public vs engine-direct round, median of {args.repeats} interleaved runs (CPU time; {dp.__file__})")
    print(f"load average at the start (1 / 5 / 15 min): {load}")
    print("| learner | public (us) | engine (us) | public / engine |")
    print("|---|---|---|---|")
    for name, (make, public, engine) in cases.items():
        rounds = n // 5 if "400" in name else n
        timed(make, engine, rounds)  # the untimed first pass
        pub, eng = [], []
        for _ in range(args.repeats):
            pub.append(timed(make, public, rounds))
            eng.append(timed(make, engine, rounds))
        p, e = statistics.median(pub) * 1e6, statistics.median(eng) * 1e6
        print(f"| {name} | {p:.2f} | {e:.2f} | {p / e:.2f} |")
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the end (1 / 5 / 15 min): {load}")


if __name__ == "__main__":
    main()
