"""Logistic contextual learners: UCB-GLM-type UCB and Laplace Thompson
sampling (non-private references), and the batched information-weighted
logistic UCB with its jointly and locally private versions
(dpbandits.privacy.reweighted_glm): hand-computed constants, the exact
sensitivity bound of the released statistic, noise-off equivalence,
lattice releases at every (epsilon, delta), restores and forks."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.privacy.analytic_gaussian import gaussian_delta
from dpbandits.privacy.reweighted import chi_bound, epoch_count
from dpbandits.privacy.reweighted_glm import (
    GLM_SENSITIVITY,
    glm_calibration,
    glm_reward_chi,
    glm_sensitivity,
    ucb_glm_width,
)

PRIVATE = (dp.JointDPReweightedLogisticUCB, dp.LocalDPReweightedLogisticUCB)


def _mu(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def test_hand_computed_constants() -> None:
    assert glm_sensitivity() == GLM_SENSITIVITY == math.sqrt(5.0)
    # mu(2) = 0.880797..., mu'(2) = 0.104994 -> 0.5 / 0.104994 = 4.7622.
    assert ucb_glm_width(2.0, 1.0) == pytest.approx(0.5 / (0.8807970779778823 * 0.11920292202211755), rel=1e-12)
    assert ucb_glm_width(1.0, 2.0) == ucb_glm_width(2.0, 1.0)
    assert glm_reward_chi(5, 1000, alpha=0.01, first_epoch=100) == pytest.approx(
        chi_bound(5, 0.01 / (3 * epoch_count(1000, 100))))
    for model in ("joint", "local"):
        cal = glm_calibration(5, 10**6, 1.0, 1e-6, model=model, first_epoch=320, sampler="float")  # type: ignore[arg-type]
        # The Gaussian mechanism of sensitivity sqrt(5) and sigma meets (1, 1e-6) on its exact curve.
        assert gaussian_delta(cal.sensitivity / cal.sigma, 1.0) == pytest.approx(1e-6, rel=1e-6)
        assert cal.guarantee.model == model
    # The linear learner's sigma at B = 1 scaled by sqrt(5) / sqrt(4.5): the same mu.
    lin = dp.privacy.reweighted.reweighted_calibration(5, 10**6, 1.0, 1e-6, first_epoch=320, sampler="float")
    cal = glm_calibration(5, 10**6, 1.0, 1e-6, first_epoch=320, sampler="float")
    assert cal.sigma == pytest.approx(lin.sigma * math.sqrt(5.0 / 4.5), rel=1e-12)


def _stat(a: np.ndarray, q: float, s: float) -> np.ndarray:
    d = len(a)
    return np.concatenate([[q * a[i] * a[j] for i in range(d) for j in range(i, d)], s * a])


def test_sensitivity_bound_holds_and_is_reached() -> None:
    rng = np.random.default_rng(0)
    for d in (1, 2, 3, 5):
        for _ in range(4_000):
            a, b = rng.normal(size=(2, d))
            a *= rng.uniform(0, 1) ** 0.2 / np.linalg.norm(a)
            b *= rng.uniform(0, 1) ** 0.2 / np.linalg.norm(b)
            q, r = rng.choice([0.0, 1.0, rng.uniform()], size=2)
            s, t = rng.uniform(-1, 1, size=2)
            assert np.linalg.norm(_stat(a, q, s) - _stat(b, r, t)) <= GLM_SENSITIVITY + 1e-12
    # The vertex of the proof: a' = -a, q = 1, q' = 0, s = s' = 1 (a on an
    # axis: the upper triangle of a a^T then has the Frobenius norm).
    a = np.array([1.0, 0.0])
    assert np.linalg.norm(_stat(a, 1.0, 1.0) - _stat(-a, 0.0, 1.0)) == pytest.approx(math.sqrt(5.0), rel=1e-12)


def test_the_engine_statistic_moves_by_at_most_the_sensitivity() -> None:
    # Exact (noise-free) releases of one-row epochs with a pilot at 0: q = 1, |s| <= 1/2.
    def release(x: np.ndarray, y: float) -> np.ndarray:
        e = _core.ReweightedGlmEngine(2, 10, first_epoch=1, leverage=1.0)
        e.observe(x, y)
        return e.last_release()

    x0 = np.array([1.0, 0.0])
    np.testing.assert_allclose(release(x0, 1.0), [1.0, 0.0, 0.0, 0.5, 0.0], rtol=0, atol=1e-15)
    rng = np.random.default_rng(1)
    for _ in range(300):
        xa, xb = rng.normal(size=(2, 2)) * 2  # clipped to L = 1
        ya, yb = rng.uniform(-1, 2, size=2)  # clipped to [0, 1]
        assert np.linalg.norm(release(xa, ya) - release(xb, yb)) <= GLM_SENSITIVITY + 1e-12


def _play(learner, env, horizon: int) -> list[int]:  # type: ignore[no-untyped-def]
    chosen = []
    for t in range(1, horizon + 1):
        i = learner.select(env.decision_set(t))
        learner.update(env.reward(t, i))
        chosen.append(i)
    return chosen


def test_noise_off_private_engines_are_the_non_private_learner() -> None:
    d, n = 3, 1500
    reference = dp.ReweightedLogisticUCB(d, n, first_epoch=50, seed=0)
    a = _play(reference, dp.LogisticContextualEnv(d, gap=0.1, seed=4), n)
    for model, cls in (("joint", dp.JointDPReweightedLogisticUCB), ("local", dp.LocalDPReweightedLogisticUCB)):
        cal = cls(d, n, 1.0, 1e-6, first_epoch=50, seed=0).calibration
        assert cal.reward_chi == reference._engine.noise_parameters()["reward_chi"]
        # seed=0: the uniform choice before the first release from the reference's stream.
        silent = _core.ReweightedGlmEngine(d, n, first_epoch=50, leverage=1.0, model=model, noise=("zero",),
                                           reward_chi=cal.reward_chi, s=2.0, seed=0)
        env = dp.LogisticContextualEnv(d, gap=0.1, seed=4)
        b = []
        for t in range(1, n + 1):
            ds = env.decision_set(t)
            i = silent.select(ds)
            silent.observe(ds[i], env.reward(t, i))
            b.append(i)
        assert a == b, model
        np.testing.assert_array_equal(reference.theta, silent.theta())


def test_the_first_estimate_is_one_weighted_newton_step() -> None:
    d, n0 = 3, 40
    learner = dp.ReweightedLogisticUCB(d, 1000, first_epoch=n0, S=10.0, seed=0)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n0, d)) / 2.5
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (rng.uniform(size=n0) < 1 / (1 + np.exp(-X @ np.array([1.0, -0.5, 0.3])))).astype(float)
    learner.update_many(X, y)
    h0, gamma = n0 / d, d / n0
    w = np.minimum(1.0, gamma / (np.sum(X * X, axis=1) / h0))
    # From theta = 0: p = 1/2, mu' = 1/4; the ridge gamma H_0 in the Hessian's units / 4.
    G = 0.25 * (X * w[:, None]).T @ X + gamma * h0 / 4.0 * np.eye(d)
    np.testing.assert_allclose(learner.theta, np.linalg.solve(G, (w * (y - 0.5)) @ X), rtol=1e-9)


@pytest.mark.parametrize("cls", PRIVATE)
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [0.1, 1e-6, 1e-12])
def test_lattice_releases_at_every_epsilon_delta(cls: type, epsilon: float, delta: float) -> None:
    lrn = cls(3, 500, epsilon, delta, first_epoch=20, seed=1)
    cal = lrn.calibration
    assert lrn.privacy.epsilon == epsilon and lrn.privacy.delta == delta and lrn.privacy.sampler == "lattice"
    assert cal.noise is not None and cal.sigma == cal.noise.scale
    assert cal.sigma >= cal.sensitivity / dp.privacy.gaussian_mu(epsilon, delta) * (1 - 1e-12)
    _play(lrn, dp.LogisticContextualEnv(3, seed=2), 60)
    assert lrn.releases == 2  # epochs of 20 and 40
    steps = lrn.last_release * 2.0**cal.noise.exponent
    np.testing.assert_array_equal(steps, np.round(steps))


@pytest.mark.parametrize("cls", PRIVATE)
def test_restores_and_forks_rekey_replays_repeat(cls: type) -> None:
    a = cls(3, 2000, 1.0, 1e-6, first_epoch=30, seed=5)
    _play(a, dp.LogisticContextualEnv(3, seed=6), 40)
    with dp.research_replay():
        twin = pickle.loads(pickle.dumps(a))
    fork = a.fork(seed=99)
    copy = pickle.loads(pickle.dumps(a))
    rows = np.tile([0.3, 0.2, 0.1], (50, 1))
    ys = np.tile([0.0, 1.0], 25)
    for lr in (a, twin, fork, copy):
        lr.update_many(rows, ys)
    assert a.releases == 2
    np.testing.assert_array_equal(a.last_release, twin.last_release)
    assert not np.array_equal(a.last_release, fork.last_release)
    assert not np.array_equal(a.last_release, copy.last_release)


def test_local_noise_grows_with_the_epoch_joint_noise_does_not() -> None:
    # Zero data (x = 0): a release is pure noise, one draw (joint) or n draws (local).
    n0 = 400
    spread = {}
    for cls in PRIVATE:
        lrn = cls(2, 10_000, 1.0, 0.1, first_epoch=n0, seed=7, sampler="float")
        lrn.update_many(np.zeros((n0, 2)), np.full(n0, 0.5))
        spread[cls.__name__] = float(np.std(lrn.last_release)) / lrn.calibration.sigma
    # chi^2 bounds on 5 entries would be loose: ratios 1 and sqrt(400) = 20, within a factor 3.
    assert spread["JointDPReweightedLogisticUCB"] < 3.0
    assert spread["LocalDPReweightedLogisticUCB"] > 20.0 / 3.0


@pytest.mark.parametrize("engine", [
    lambda: _core.ReweightedGlmEngine(2, 100, first_epoch=5, leverage=1.0, noise=("gaussian", 1.0)),
    lambda: _core.ReweightedGlmEngine(2, 100, first_epoch=5, leverage=1.0, model="local", noise=("gaussian", 1.0)),
    lambda: _core.OnlineLogisticEngine(2, 100, rule="ucb"),
    lambda: _core.OnlineLogisticEngine(2, 100, rule="thompson", seed=1),
])
def test_corrupted_state_is_refused_not_a_panic(engine) -> None:  # type: ignore[no-untyped-def]
    e = engine()
    for _ in range(7):
        e.select(np.array([[0.6, 0.8], [0.0, 1.0]]))
        e.observe(np.array([0.6, 0.8]), 1.0)
    state = bytearray(e.to_bytes())
    refused = 0
    for i in range(1, len(state), 7):
        bad = bytearray(state)
        bad[i] ^= 0xFF
        try:
            type(e).from_bytes(bytes(bad))
        except ValueError:
            refused += 1
    assert refused > 0
    with pytest.raises(ValueError):
        type(e).from_bytes(b"\xff" + bytes(state[1:]))  # a version no engine writes


@pytest.mark.parametrize("cls", [dp.JointDPReweightedLogisticUCB, dp.LocalDPReweightedLogisticUCB])
@pytest.mark.parametrize("kwargs,name", [
    ({"epsilon": 0.0}, "epsilon"), ({"delta": 1.0}, "delta"), ({"delta": 0.0}, "delta"),
    ({"first_epoch": 0}, "first_epoch"), ({"leverage": -1.0}, "leverage"), ({"S": float("nan")}, "S"),
    ({"beta_scale": 0.0}, "beta_scale"), ({"d": 2000}, "d"), ({"sampler": "exact"}, "sampler"),
    ({"bounds": "wrap"}, "bounds"),
])
def test_bad_arguments_name_themselves(cls: type, kwargs: dict[str, object], name: str) -> None:
    args = {"d": 2, "horizon": 100, "epsilon": 1.0, "delta": 1e-6, **kwargs}
    with pytest.raises(ValueError, match=name):
        cls(**args)


@pytest.mark.parametrize("make", [
    lambda: dp.JointDPReweightedLogisticUCB(2, 100, 1.0, 1e-6, bounds="error", seed=0),
    lambda: dp.LogisticUCB(2, 100, bounds="error"),
    lambda: dp.LogisticThompsonSampling(2, 100, bounds="error", seed=0),
])
def test_bounds_error_refuses_out_of_range_inputs(make) -> None:  # type: ignore[no-untyped-def]
    lrn = make()
    with pytest.raises(ValueError, match="x"):
        lrn.update(np.array([3.0, 0.0]), 0.5)
    with pytest.raises(ValueError, match="reward"):
        lrn.update(np.array([0.3, 0.0]), -0.5)
    with pytest.raises(ValueError, match="reward"):
        lrn.update(np.array([0.3, 0.0]), 1.5)
    assert lrn.t == 0


def test_online_newton_step_by_hand() -> None:
    lrn = dp.LogisticUCB(3, 10)
    x = np.array([0.6, 0.0, 0.8])
    lrn.update(x, 1.0)
    # theta = (I + x x^T / 4)^-1 x / 2 = x / 2.5 for ||x|| = 1.
    np.testing.assert_allclose(lrn.theta, x / 2.5, rtol=1e-15)
    # UCB-GLM's radius at t = 1 with alpha = 1 / horizon.
    beta = ucb_glm_width(2.0, 1.0) * math.sqrt(1.5 * math.log1p(2 / 3) + math.log(10))
    assert lrn._engine.beta == pytest.approx(beta, rel=1e-12)
    ds = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    v_inv = np.linalg.inv(np.eye(3) + np.outer(x, x))
    want = ds @ lrn.theta + beta * np.sqrt(np.einsum("ij,jk,ik->i", ds, v_inv, ds))
    np.testing.assert_allclose(lrn.scores(ds), want, rtol=1e-12)


def test_thompson_draws_have_the_laplace_covariance() -> None:
    lrn = dp.LogisticThompsonSampling(2, 10, v=1.0, seed=3)
    lrn.update(np.array([1.0, 0.0]), 1.0)
    # A = I + e1 e1^T / 4: the draw's first coordinate has variance 1 / 1.25, the second 1.
    ds = np.eye(2)
    draws = np.array([lrn.scores(ds) for _ in range(20_000)])
    np.testing.assert_allclose(draws.mean(axis=0), lrn.theta, atol=0.03)
    # sd of a sample variance of 20000 normals: var sqrt(2 / 20000) = 1% of var; 4 sd.
    np.testing.assert_allclose(draws.var(axis=0), [0.8, 1.0], rtol=0.04)


def test_simulate_learns_on_the_logistic_environment() -> None:
    n = 20_000
    env = dp.LogisticContextualEnv(5, gap=0.1)
    learners = [
        dp.LogisticUCB(5, n, beta_scale=0.05),
        dp.LogisticThompsonSampling(5, n, v=0.5, seed=0),
        dp.ReweightedLogisticUCB(5, n, beta_scale=0.1),
        dp.JointDPReweightedLogisticUCB(5, n, 1.0, 1e-6, beta_scale=0.01),
    ]
    for lrn in learners:
        final = dp.simulate(lrn, env, seeds=2).final_regret
        # A uniformly random action loses about 0.26 a round here (mu(1.5) against the band's mean).
        assert np.all(final < 0.1 * n), (lrn, final)
