"""Budget safety: every learner of the K-armed, contextual, elimination and
online-learning families refuses to run past its horizon (StateError),
also after a checkpoint round trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from _learner_drivers import DRIVERS

from dpbandits.errors import StateError

HORIZON = 40


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_refuses_to_run_past_the_horizon(name: str, tmp_path: Path) -> None:
    make, step = DRIVERS[name]
    lr = make(HORIZON, 5)
    for t in range(HORIZON):
        step(lr, t)
    assert lr.t == HORIZON
    with pytest.raises(StateError):
        step(lr, HORIZON)
    assert lr.t == HORIZON
    lr.save(tmp_path / "l.ckpt")
    back = type(lr).load(tmp_path / "l.ckpt")
    with pytest.raises(StateError):
        step(back, HORIZON)
    assert back.t == HORIZON
