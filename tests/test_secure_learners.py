"""Secure mode of every private learner (``secure=True``): the exact lattice
noise of the default sampler, drawn from the operating system's entropy
instead of the seeded stream, so that nobody (the operator included) can
reproduce or predict it from a seed (the noise law and
the entropy source are separate choices)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.errors import IrreproducibleRunWarning

SECURE = {
    "PrivateUCB": lambda **kw: dp.PrivateUCB(3, 200, 1.0, **kw),
    "PrivateThompsonSampling": lambda **kw: dp.PrivateThompsonSampling(3, 10**6, 1.0, **kw),
    "JointDPLinUCB": lambda **kw: dp.JointDPLinUCB(3, 200, 1.0, 0.1, **kw),
    "PrivateContextualUCB": lambda **kw: dp.PrivateContextualUCB(3, 200, 1.0, **kw),
    "EliminationLinearBandit": lambda **kw: dp.EliminationLinearBandit(np.eye(2), 200, "central", 1.0, **kw),
    "PrivateFTRL": lambda **kw: dp.PrivateFTRL(3, 200, 1.0, **kw),
    "PrivateFTPL": lambda **kw: dp.PrivateFTPL(3, 200, 1.0, 0.1, **kw),
    "EXP2": lambda **kw: dp.EXP2(3, 200, 1.0, **kw),
    "LazyPrivateExperts": lambda **kw: dp.LazyPrivateExperts(3, 200, 1.0, **kw),
    "LazyPrivateOCO": lambda **kw: dp.LazyPrivateOCO(3, 200, 1.0, **kw),
}


@pytest.mark.parametrize("name", list(SECURE))
def test_secure_learners_name_their_entropy_and_stay_secure(name: str) -> None:
    learner = SECURE[name](secure=True, seed=1)
    assert learner.secure
    assert "operating-system entropy" in str(learner.privacy) and learner.privacy.sampler == "lattice"
    assert learner.fork().secure and pickle.loads(pickle.dumps(learner)).secure
    assert not SECURE[name](seed=1).secure
    with pytest.raises(ValueError, match="secure"):
        SECURE[name](secure=True, sampler="float")
    with pytest.raises(TypeError, match="secure"):
        SECURE[name](secure=1)


def test_secure_releases_are_lattice_values_that_a_seed_does_not_reproduce() -> None:
    def run() -> np.ndarray:
        learner = dp.PrivateUCB(3, 200, 1.0, secure=True, seed=5)
        for r in np.linspace(0.1, 0.9, 30):
            learner.select()
            learner.update(float(r))
        return learner.released_sums()

    a, b = run(), run()
    j = dp.PrivateUCB(3, 200, 1.0, seed=5).noise_wire[2]
    for x in (a, b):
        assert np.array_equal(np.ldexp(x, j), np.round(np.ldexp(x, j)))
    assert not np.array_equal(a, b)


def test_non_private_learners_have_no_secure_mode() -> None:
    with pytest.raises(ValueError, match="secure"):
        dp.PrivateFTRL(3, 200, None, secure=True)
    with pytest.raises(ValueError, match="secure"):
        dp.EliminationLinearBandit(np.eye(2), 200, None, secure=True)


def test_simulating_a_secure_learner_warns_that_it_cannot_be_reproduced() -> None:
    env = dp.BernoulliBandit([0.3, 0.6])
    with pytest.warns(IrreproducibleRunWarning):
        a = dp.simulate(dp.PrivateUCB(2, 2000, 1.0, secure=True), env, seeds=[1])
    with pytest.warns(IrreproducibleRunWarning):
        b = dp.simulate(dp.PrivateUCB(2, 2000, 1.0, secure=True), env, seeds=[1])
    # Same environment draws, noise from the operating system: different runs.
    assert not np.array_equal(a.regret, b.regret)


def test_secure_regret_is_within_noise_of_the_floating_point_learner() -> None:
    # Same guarantee (1-DP), same instance; 24 replicates each. Under equal
    # means Welch's t is approximately N(0, 1): |t| > 4 has probability ~6e-5.
    env = dp.BernoulliBandit([0.3, 0.5, 0.7])
    seeds = list(range(1, 25))
    with pytest.warns(IrreproducibleRunWarning):
        sec = dp.simulate(dp.PrivateUCB(3, 20_000, 1.0, calibration="tight", secure=True), env, seeds=seeds)
    flo = dp.simulate(dp.PrivateUCB(3, 20_000, 1.0, calibration="tight", sampler="float"), env, seeds=seeds)
    x, y = sec.regret[:, -1], flo.regret[:, -1]
    t = (x.mean() - y.mean()) / math.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y))
    assert abs(t) < 4.0, (x.mean(), y.mean(), t)


def _env_for(name: str):  # type: ignore[no-untyped-def]
    if name in ("PrivateUCB", "PrivateThompsonSampling"):
        return dp.BernoulliBandit([0.3, 0.5, 0.7])
    if name in ("JointDPLinUCB", "PrivateContextualUCB"):
        return dp.ShariffSheffetEnv(3, 10, gap=0.1)
    if name == "EliminationLinearBandit":
        return dp.LinearBanditEnv(np.eye(2), seed=3)
    if name == "LazyPrivateOCO":
        return dp.UniformLosses([0.3, -0.2, 0.1], 0.5)
    return dp.StochasticLosses([0.3, 0.5, 0.6])


@pytest.mark.parametrize("name", list(SECURE))
def test_each_secure_learner_regret_is_within_noise_of_the_float_learner(name: str) -> None:
    # Same guarantee, same environment realizations; 16 replicates each.
    # Under equal means Welch's t is approximately N(0, 1): |t| > 4 has
    # probability ~6e-5 per learner.
    env, seeds = _env_for(name), list(range(1, 17))
    with pytest.warns(IrreproducibleRunWarning):
        sec = dp.simulate(SECURE[name](secure=True), env, seeds=seeds)
    flo = dp.simulate(SECURE[name](sampler="float"), env, seeds=seeds)
    x, y = sec.regret[:, -1], flo.regret[:, -1]
    se = math.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y))
    t = 0.0 if se == 0 else (x.mean() - y.mean()) / se
    assert abs(t) < 4.0, (name, x.mean(), y.mean(), t)


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1.0, 0.5])
def test_secure_release_audit(factor: float) -> None:
    # PrivateUCB's node noise drawn from the operating system: the first
    # release is (1 / b)-DP; half the noise (a planted bug) is flagged.
    learner = dp.PrivateUCB(1, 2, 1.0, calibration="tight", secure=True)
    kind, steps, j = learner.noise_wire
    assert kind == "lattice_laplace"
    claim = 1.0 / learner.node_scale
    # The planted bug scales the noise in whole lattice steps (factor 0.5:
    # half the learner's node noise, rounded up).
    noise = ("lattice_laplace", math.ceil(steps * factor), j)

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        counter = _core.TreeCounter([], 2, noise, seed=None, padded=False, os_entropy=True)
        assert counter.os_entropy
        return np.asarray(counter._release_runs(np.array([float(side)]), count)).reshape(count)

    # OS entropy: every run draws afresh and the release sits exactly at its
    # claim, so the bound's own error rate is the test's: 1e-4.
    result = audit(mechanism, epsilon=claim, n=1_000_000, seed=21, confidence=0.9999)
    print(f"[audit] secure lattice release, noise x {factor}: {result}")
    if factor == 1.0:
        assert result.epsilon_lower_bound <= claim
    else:
        assert result.epsilon_lower_bound > claim
