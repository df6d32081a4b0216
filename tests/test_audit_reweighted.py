"""Empirical audit of JointDPReweightedLinUCB's release on the exact
released values: one epoch of one user's row, released by the learner's
own engine with the noise value its calibration computed (lattice
discrete Gaussian). Neighbours: two unit rows at 60 degrees with opposite
rewards (the search's worst pair, within 2.1% of the calibrated
sensitivity). The released vector is projected on the direction of the
neighbours' difference (post-processing: any lower bound holds for the
release). N = 10^6 releases per side, 95% Clopper-Pearson; a planted bug
(half the noise) must be flagged."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit

N = 1_000_000
EPSILON, DELTA = 1.0, 1e-3
ROWS = (np.array([[1.0, 0.0]]), np.array([[0.5, math.sqrt(3) / 2]]))
REWARDS = (np.array([1.0]), np.array([-1.0]))


def _engine(noise: object, seed: int | None) -> _core.ReweightedLinUcbEngine:
    return _core.ReweightedLinUcbEngine(2, 10, first_epoch=1, leverage=1.0, noise=noise, seed=seed)


def _mechanism(noise: object):  # type: ignore[no-untyped-def]
    exact = [_engine(None, 0) for _ in range(2)]
    for e, x, y in zip(exact, ROWS, REWARDS, strict=True):
        e.observe(x[0], float(y[0]))
    diff = exact[1].last_release() - exact[0].last_release()
    direction = diff / np.linalg.norm(diff)

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        e = _engine(noise, seed)
        runs = e._release_runs(ROWS[side], REWARDS[side], count).reshape(count, -1)
        return runs @ direction

    return mechanism


@pytest.mark.slow
def test_release_meets_its_claim_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    learner = dp.JointDPReweightedLinUCB(2, 10, EPSILON, DELTA, first_epoch=1, leverage=1.0, seed=0)
    cal = learner.calibration
    assert learner.privacy.sampler == "lattice"
    ok = audit(_mechanism(cal.wire()), epsilon=EPSILON, delta=DELTA, n=N, seed=1)
    kind, steps, exponent = cal.wire()
    bug = audit(_mechanism((kind, steps // 2, exponent)), epsilon=EPSILON, delta=DELTA, n=N, seed=2)
    for name, result in (("reweighted release", ok), ("reweighted release, half noise", bug)):
        line = f"[audit] {name}: {result}"
        print(line)
        record_property(name, line)
    assert ok.passed and ok.epsilon_lower_bound <= EPSILON
    assert not bug.passed and bug.epsilon_lower_bound > EPSILON
