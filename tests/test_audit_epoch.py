"""Empirical audit of JointDPLinUCB(counter="epoch") on the exact released
values: one epoch holding one user's row, released by the learner's own
engine (its epoch counter) with the noise value its calibration computed
(lattice discrete Gaussian). Neighbours: z = (x, y) = (1, 0, 1) and
(-1, 0, 1), orthogonal rows of norm Ltilde = sqrt(2), the pair that
attains the whitened sensitivity Ltilde^2 (dpbandits.privacy.epoch). The
released (d+1) x (d+1) matrix is projected on the neighbours' difference
(Frobenius inner product: the likelihood-ratio direction of the
symmetrized noise; post-processing, so any lower bound holds for the
release). N = 10^6 releases per side, 95% Clopper-Pearson; a planted bug
(half the noise) must be flagged."""

from __future__ import annotations

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit

N = 1_000_000
EPSILON, DELTA = 1.0, 1e-3
ROWS = (np.array([1.0, 0.0, 1.0]), np.array([-1.0, 0.0, 1.0]))


def _engine(noise: object, seed: int | None) -> _core.LinUcbEngine:
    return _core.LinUcbEngine(2, 1, noise=noise, counter="epoch", first_epoch=1, epoch_ratio=1.0, seed=seed)


def _mechanism(noise: object):  # type: ignore[no-untyped-def]
    grams = [np.outer(z, z)[None] for z in ROWS]
    diff = (grams[1] - grams[0]).ravel()
    direction = diff / np.linalg.norm(diff)

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        runs = _engine(noise, seed)._release_runs(grams[side], count).reshape(count, -1)
        return runs @ direction

    return mechanism


def test_release_runs_are_the_rows_gram_plus_noise() -> None:
    from dpbandits.noise import ZeroNoise

    z = ROWS[0]
    out = _engine(ZeroNoise().wire(), 0)._release_runs(np.outer(z, z)[None], 3)
    assert out.shape == (3, 1, 3, 3)
    np.testing.assert_array_equal(out[2, 0], np.outer(z, z))


@pytest.mark.slow
def test_release_meets_its_claim_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    learner = dp.JointDPLinUCB(2, 10, EPSILON, DELTA, calibration="tight", counter="epoch", first_epoch=1, seed=0)
    assert learner.privacy.sampler == "lattice"
    wire = learner.calibration.noise.wire()
    ok = audit(_mechanism(wire), epsilon=EPSILON, delta=DELTA, n=N, seed=1)
    kind, steps, exponent = wire
    bug = audit(_mechanism((kind, steps // 2, exponent)), epsilon=EPSILON, delta=DELTA, n=N, seed=2)
    for name, result in (("epoch release", ok), ("epoch release, half noise", bug)):
        line = f"[audit] {name}: {result}"
        print(line)
        record_property(name, line)
    assert ok.passed and ok.epsilon_lower_bound <= EPSILON
    assert not bug.passed and bug.epsilon_lower_bound > EPSILON
