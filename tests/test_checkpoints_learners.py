"""Checkpoints of the K-armed, contextual, elimination and online-learning
learners: save / load continues bit-identically (decisions and the released
statistic each class exposes), with and without a pending selection, and a
corrupted or truncated file is refused with CheckpointError."""

from __future__ import annotations

from pathlib import Path

import pytest
from _learner_drivers import DRIVERS

from dpbandits.errors import CheckpointError
from dpbandits.learners.online import LearnerBase

HORIZON = 120


def _play(lr, start: int, stop: int) -> list:  # type: ignore[no-untyped-def]
    return [DRIVERS_STEP[type(lr).__name__](lr, t) for t in range(start, stop)]


DRIVERS_STEP = {name: step for name, (_, step) in DRIVERS.items()}


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_save_load_continues_bit_identically(name: str, tmp_path: Path) -> None:
    make, _ = DRIVERS[name]
    a = make(HORIZON, 3)
    _play(a, 0, 37)
    path = tmp_path / "l.ckpt"
    a.save(path)
    b = type(a).load(path, replay=True)  # bit-identical replay (for use: re-keyed)
    assert type(b) is type(a) and b.t == a.t == 37
    assert LearnerBase.load(path).t == 37
    assert _play(a, 37, 80) == _play(b, 37, 80)
    assert a.t == b.t == 80


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_corrupted_and_truncated_files_are_refused(name: str, tmp_path: Path) -> None:
    make, _ = DRIVERS[name]
    a = make(HORIZON, 4)
    _play(a, 0, 10)
    path = tmp_path / "l.ckpt"
    a.save(path)
    raw = path.read_bytes()
    for i in (len(raw) // 3, len(raw) // 2, len(raw) - 1):
        bad = bytearray(raw)
        bad[i] ^= 0x40
        path.write_bytes(bytes(bad))
        with pytest.raises(CheckpointError):
            type(a).load(path)
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(CheckpointError):
        type(a).load(path)


#: Learners fed a whole loss vector each round (no pending selection).
FULL_INFORMATION = ("PrivateFTRL", "PrivateFTPL", "PrivateStochasticExperts", "LazyPrivateExperts",
                    "PrivateDartboardExperts", "LazyPrivateOCO")


def _select(lr):  # type: ignore[no-untyped-def]
    name = type(lr).__name__
    if name in ("PrivateContextualUCB", "PrivateContextualThompsonSampling", "ContextualEliminationBandit",
                "LocalLinUCB", "ShuffleLinUCB", "LogisticUCB", "LogisticThompsonSampling", "ReweightedLogisticUCB",
                "JointDPReweightedLogisticUCB", "LocalDPReweightedLogisticUCB"):
        from _learner_drivers import _ctx

        return lr.select(_ctx(999))
    if name in FULL_INFORMATION:
        return None  # full information: no pending selection
    out = lr.select()
    return out.tobytes() if hasattr(out, "tobytes") else out


def _feedback(lr):  # type: ignore[no-untyped-def]
    name = type(lr).__name__
    if name in FULL_INFORMATION:
        import numpy as np

        return np.full(3, 0.25)
    return 0.25


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_a_pending_selection_survives_the_checkpoint(name: str, tmp_path: Path) -> None:
    make, _ = DRIVERS[name]
    a = make(HORIZON, 6)
    _play(a, 0, 20)
    _select(a)
    path = tmp_path / "l.ckpt"
    a.save(path)
    b = type(a).load(path, replay=True)  # bit-identical replay (for use: re-keyed)
    a.update(_feedback(a))  # update(reward) refers to the selection made before the save
    b.update(_feedback(b))
    assert a.t == b.t == 21
    assert _play(a, 21, 60) == _play(b, 21, 60)


def test_a_restored_contextual_elimination_learner_says_why_it_cannot_spawn(tmp_path: Path) -> None:
    make, _ = DRIVERS["ContextualEliminationBandit"]
    a = make(HORIZON, 8)
    a.save(tmp_path / "c.ckpt")
    b = type(a).load(tmp_path / "c.ckpt")
    assert b.config["context_sampler"] is None
    with pytest.raises(TypeError, match="context_sampler"):
        b.spawn(1)
