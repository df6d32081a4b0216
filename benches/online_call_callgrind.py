"""Instructions per round of the public online call against the
engine-direct call, counted by callgrind (independent of the machine's
load): the rounds of ``benches/online_call_overhead.py`` for each learner
family, plus DPKLUCB (K-armed), each form timed on a warmed-up learner.

The script runs itself under ``valgrind --tool=callgrind`` with a dump
before every call of ``zlib.crc32``, which it calls around each timed
segment, and prints instructions per round (select + update) of each form
and their ratio (the target: public / engine within 1.5).

    python3 benches/online_call_callgrind.py --rounds 2000
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def cases(n: int) -> dict[str, tuple[object, object, object]]:
    """Every learner class of ``dpbandits.__all__`` (``online_call_status.py``
    checks that none is missing): a factory, the public round and the
    engine-direct round."""
    import numpy as np
    import online_call_overhead as b

    import dpbandits as dp

    h = 10 * n
    features = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [0.5, 0.2], [0.2, 0.5], [0.9, 0.1]])
    def karmed(name: str, eps: tuple[float, ...]) -> tuple[object, object, object]:
        cls = getattr(dp, name)
        return b.indexed(lambda: cls(5, h, *eps, seed=0), n)

    k5 = {name: karmed(name, eps) for name, eps in (
        ("UCB1", ()), ("KLUCB", ()), ("ThompsonSampling", ()), ("PrivateUCB", (1.0,)),
        ("PrivateThompsonSampling", (1.0,)), ("DPSE", (1.0,)), ("DPKLUCB", (1.0,)), ("DPIMED", (1.0,)),
        ("DPTS", (1.0,)), ("AdaPUCB", (1.0,)), ("AdaPKLUCB", (1.0,)), ("AdaCUCB", (1.0,)), ("AdaCKLUCB", (1.0,)),
    )}
    out = {
        "JointDPLinUCB (5, 25)": b.contextual(lambda: dp.JointDPLinUCB(5, h, 1.0, 0.1, seed=0), 25, 5, n),
        "LinUCB (40, 400)": b.contextual(lambda: dp.LinUCB(40, h, seed=0), 400, 40, n),
        "LocalLinUCB (5, 25)": b.contextual(lambda: dp.LocalLinUCB(5, h, 1.0, 0.1, seed=0), 25, 5, n),
        "ShuffleLinUCB (5, 25)": b.contextual(lambda: dp.ShuffleLinUCB(5, h, 1.0, 0.1, seed=0), 25, 5, n),
        "PrivateContextualUCB (5, 25)": b.contextual(lambda: dp.PrivateContextualUCB(5, h, 1.0, seed=0), 25, 5, n),
        "PrivateContextualThompsonSampling (5, 25)": b.contextual(
            lambda: dp.PrivateContextualThompsonSampling(5, h, 1.0, seed=0), 25, 5, n),
        "ReweightedLinUCB (5, 25)": b.contextual(lambda: dp.ReweightedLinUCB(5, h, seed=0), 25, 5, n),
        "JointDPReweightedLinUCB (5, 25)": b.contextual(
            lambda: dp.JointDPReweightedLinUCB(5, h, 1.0, 0.1, seed=0), 25, 5, n),
        "LogisticUCB (5, 25)": b.contextual(lambda: dp.LogisticUCB(5, h, seed=0), 25, 5, n),
        "LogisticThompsonSampling (5, 25)": b.contextual(lambda: dp.LogisticThompsonSampling(5, h, seed=0), 25, 5, n),
        "ReweightedLogisticUCB (5, 25)": b.contextual(lambda: dp.ReweightedLogisticUCB(5, h, seed=0), 25, 5, n),
        "JointDPReweightedLogisticUCB (5, 25)": b.contextual(
            lambda: dp.JointDPReweightedLogisticUCB(5, h, 1.0, 0.1, seed=0), 25, 5, n),
        "LocalDPReweightedLogisticUCB (5, 25)": b.contextual(
            lambda: dp.LocalDPReweightedLogisticUCB(5, h, 1.0, 0.1, seed=0), 25, 5, n),
        "EliminationLinearBandit (8 x 4)": b.indexed(b.elimination(h), n),
        "ContextualEliminationBandit (6 x 3, 4 actions)": b.client_elimination(h, n),
        "EXP2 (8)": b.indexed(lambda: dp.EXP2(8, h, 1.0, seed=0), n),
        "SCRiBLe (4)": b.scrible(n),
        "PrivateFTRL (8)": b.ftrl(n),
        "PrivateFTPL (8)": b.ftrl(n, lambda: dp.PrivateFTPL(8, h, 1.0, 0.1, seed=0)),
        "PrivateStochasticExperts (8)": experts(lambda: dp.PrivateStochasticExperts(8, h, 1.0, seed=0), n),
        "LazyPrivateExperts (8)": experts(lambda: dp.LazyPrivateExperts(8, h, 1.0, seed=0), n),
        "PrivateDartboardExperts (8)": experts(lambda: dp.PrivateDartboardExperts(8, h, 1.0, seed=0), n),
        "LazyPrivateOCO (8)": experts(lambda: dp.LazyPrivateOCO(8, h, 1.0, seed=0), n, ball=True),
        "BatchedPrivateEXP3 (8)": b.indexed(lambda: dp.BatchedPrivateEXP3(8, h, 1.0, seed=0), n),
        "DPTopTwo (5)": b.indexed(lambda: dp.DPTopTwo(5, 0.01, 1.0, max_samples=h, seed=0), n),
        "DPTopTwo (5) update(arm, r)": b.named(lambda: dp.DPTopTwo(5, 0.01, 1.0, max_samples=h, seed=0), n),
        "AdaPTT (5)": b.indexed(lambda: dp.AdaPTT(5, 0.01, 1.0, max_samples=h, seed=0), n),
        "TopTwoBAI (5)": b.indexed(lambda: dp.TopTwoBAI(5, 0.01, max_samples=h, seed=0), n),
        "CTBTT (5)": b.indexed(lambda: dp.CTBTT(5, 0.01, 1.0, max_samples=h, seed=0), n),
        "AdaPTTStar (5)": b.indexed(lambda: dp.AdaPTTStar(5, 0.01, 1.0, max_samples=h, seed=0), n),
        # Fixed budget: the budget outlasts the rounds (one phase of 5 arms).
        "DPBAI (5)": b.indexed(lambda: dp.DPBAI(5, h, 1.0, seed=0), n),
        "DPBAI (5) update(arm, r)": b.named(lambda: dp.DPBAI(5, h, 1.0, seed=0), n),
        "LinearDPBAI (6 x 2)": b.indexed(lambda: dp.LinearDPBAI(features, h, 1.0, seed=0), n),
        "SequentialHalving (5)": b.indexed(lambda: dp.SequentialHalving(5, h, seed=0), n),
    }
    out.update({f"{name} (5)": case for name, case in k5.items()})
    del np
    return out


def experts(make: object, n: int, ball: bool = False) -> tuple[object, object, object]:
    """A full-information learner over 8 experts (``ball``: a point of the
    unit ball of R^8): ``select()`` then the round's loss vector (``update``
    / the engine's ``observe``)."""
    import numpy as np

    losses = np.random.default_rng(5).uniform(0, 1, size=(n, 8))
    if ball:
        losses /= 2 * np.linalg.norm(losses, axis=1, keepdims=True)

    def public(lr: object, e: object, t: int) -> None:
        lr.select()  # type: ignore[attr-defined]
        lr.update(losses[t])  # type: ignore[attr-defined]

    # Spelled out (no getattr, which the public call does not pay).
    def engine_select(lr: object, e: object, t: int) -> None:
        e.select()  # type: ignore[attr-defined]
        e.observe(losses[t])  # type: ignore[attr-defined]

    def engine_decision(lr: object, e: object, t: int) -> None:
        e.decision()  # type: ignore[attr-defined]
        e.observe(losses[t])  # type: ignore[attr-defined]

    return make, public, engine_decision if ball else engine_select


def selected(n: int, only: list[str] | None) -> dict[str, tuple[object, object, object]]:
    return {k: v for k, v in cases(n).items() if not only or any(w in k for w in only)}


def child(rounds: int, only: list[str] | None) -> None:
    warm = 50
    for name, (make, public, engine) in selected(rounds + warm, only).items():
        n_timed = rounds // 10 if "400" in name else rounds
        # One untimed pass first: what the process builds once (a sampler's
        # table at the first release, caches) must not land in the segment
        # that happens to run first.
        lr = make()  # type: ignore[operator]
        for t in range(warm + n_timed):
            engine(lr, lr._engine, t)  # type: ignore[operator]
        for form, step in (("public", public), ("engine", engine)):
            lr = make()  # type: ignore[operator]
            e = lr._engine
            for t in range(warm):
                step(lr, e, t)  # type: ignore[operator]
            zlib.crc32(f"{name} {form}".encode())
            for t in range(warm, warm + n_timed):
                step(lr, e, t)  # type: ignore[operator]
            zlib.crc32(b"end")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--only", nargs="*", help="learners whose name contains one of these words (default: all)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.rounds, args.only)
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-before=zlib_crc32*", f"--callgrind-out-file={out}",
             sys.executable, __file__, "--child", "--rounds", str(args.rounds),
             *(["--only", *args.only] if args.only else [])],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        dumps = sorted(glob.glob(out + ".*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        totals = []
        for f in dumps:
            m = re.search(r"^(?:summary|totals): (\d+)", Path(f).read_text(), re.M)
            totals.append(int(m.group(1)) if m else 0)
    # Dump 2i + 1 holds the i-th timed segment (each dump is made at a marker).
    timed = totals[1::2]
    print(f"instructions per round (callgrind), {args.rounds} rounds ({args.rounds // 10} at (40, 400))")
    print("| learner | public | engine | public / engine |")
    print("|---|---|---|---|")
    for i, name in enumerate(selected(1, args.only)):
        n = args.rounds // 10 if "400" in name else args.rounds
        p, e = timed[2 * i] / n, timed[2 * i + 1] / n
        print(f"| {name} | {p:,.0f} | {e:,.0f} | {p / e:.2f} |")


if __name__ == "__main__":
    main()
