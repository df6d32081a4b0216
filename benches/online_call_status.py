"""Which object answers each learner's public ``select`` / ``update``:
every class of ``dpbandits.__all__`` that is a learner, built as the
callgrind bench builds it (``online_call_callgrind.cases``), with the type
of the object its bound ``select`` and ``update`` belong to. "engine": the
Rust engine's own methods; "native": a Rust method descriptor of the
learner's own class (``dpbandits._core.learner_method``, reaching the
online call around the engine, or for the K-armed and fixed-budget
learners the engine's own methods); "ClientCall": the Rust call
of contextual elimination; "Python": a Python method (not bound). Exits with status 1 when a learner is not bound or is
missing from the benches.

    python3 benches/online_call_status.py
"""

from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import online_call_callgrind

import dpbandits as dp
from dpbandits.learners.online import LearnerBase


def binding(method: object, engine: object, learner: object) -> str:
    owner = getattr(method, "__self__", None)
    if owner is engine:
        return "engine"
    if inspect.isbuiltin(method) and owner is learner:
        return "native"
    if inspect.isbuiltin(method) and owner is not None:
        return type(owner).__name__
    return "Python"


def main() -> int:
    learners = sorted(
        n for n in dp.__all__ if inspect.isclass(getattr(dp, n)) and issubclass(getattr(dp, n), LearnerBase)
    )
    benched = {name.split(" (")[0]: case for name, case in online_call_callgrind.cases(100).items()}
    print("| learner | select | update | in the benches |")
    print("|---|---|---|---|")
    bad = 0
    for name in learners:
        case = benched.get(name)
        if case is None:
            print(f"| {name} | ? | ? | no |")
            bad += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lr = case[0]()  # type: ignore[operator]
        s, u = binding(lr.select, lr._engine, lr), binding(lr.update, lr._engine, lr)
        bad += "Python" in (s, u)
        print(f"| {name} | {s} | {u} | yes |")
    print(f"{len(learners)} learners, {bad} not bound or not benched")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
