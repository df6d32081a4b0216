"""Empirical audit of the private logistic learners' releases on the exact
released values: one epoch of one user's row, released by the learners'
own engine with the noise value their calibration computed (lattice
discrete Gaussian); the joint model's epoch release and the local model's
report (an epoch of one row is that row's report). Neighbours: two unit
rows with <a, a'> = 1/8 and rewards 1 and 0 at the first epoch's pilot
(theta = 0: q = 1, s = +-1/2), about the largest difference a
first-epoch row pair reaches (1.586, 71% of the calibrated sqrt(5)).
The release is projected on the direction of the neighbours' difference
(post-processing). N = 10^6 releases per side, 95% Clopper-Pearson; a
planted bug (a quarter of the noise) must be flagged."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit

N = 1_000_000
EPSILON, DELTA = 1.0, 1e-3
C = 1.0 / 8.0
ROWS = (np.array([[1.0, 0.0]]), np.array([[C, math.sqrt(1.0 - C * C)]]))
REWARDS = (np.array([1.0]), np.array([0.0]))


def _engine(model: str, noise: object, seed: int | None) -> _core.ReweightedGlmEngine:
    return _core.ReweightedGlmEngine(2, 10, first_epoch=1, leverage=1.0, model=model, noise=noise, seed=seed)


def _mechanism(model: str, noise: object):  # type: ignore[no-untyped-def]
    exact = [_engine(model, None, 0) for _ in range(2)]
    for e, x, y in zip(exact, ROWS, REWARDS, strict=True):
        e.observe(x[0], float(y[0]))
    diff = exact[1].last_release() - exact[0].last_release()
    # The statistic's upper triangle keeps each off-diagonal product once:
    # 1.586, within the calibrated sqrt(5).
    assert 0.7 * math.sqrt(5.0) < np.linalg.norm(diff) <= math.sqrt(5.0)
    direction = diff / np.linalg.norm(diff)

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        e = _engine(model, noise, seed)
        runs = e._release_runs(ROWS[side], REWARDS[side], count).reshape(count, -1)
        return runs @ direction

    return mechanism


@pytest.mark.slow
@pytest.mark.parametrize("cls", [dp.JointDPReweightedLogisticUCB, dp.LocalDPReweightedLogisticUCB])
def test_release_meets_its_claim_and_quarter_noise_is_flagged(cls, record_property) -> None:  # type: ignore[no-untyped-def]
    learner = cls(2, 10, EPSILON, DELTA, first_epoch=1, leverage=1.0, seed=0)
    cal = learner.calibration
    model = learner.privacy.model
    assert learner.privacy.sampler == "lattice"
    ok = audit(_mechanism(model, cal.wire()), epsilon=EPSILON, delta=DELTA, n=N, seed=1)
    kind, steps, exponent = cal.wire()
    bug = audit(_mechanism(model, (kind, steps // 4, exponent)), epsilon=EPSILON, delta=DELTA, n=N, seed=2)
    for name, result in ((f"{model} GLM release", ok), (f"{model} GLM release, quarter noise", bug)):
        line = f"[audit] {name}: {result}"
        print(line)
        record_property(name, line)
    assert ok.passed and ok.epsilon_lower_bound <= EPSILON
    assert not bug.passed and bug.epsilon_lower_bound > EPSILON
