"""Batched information-weighted LinUCB and its jointly private version
(dpbandits.privacy.reweighted): hand-computed constants, the exact
sensitivity of the released statistic, noise-off equivalence, lattice
releases at every (epsilon, delta), restores and forks."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.privacy.analytic_gaussian import gaussian_delta
from dpbandits.privacy.reweighted import (
    chi_bound,
    epoch_count,
    operator_norm_factor,
    reweighted_calibration,
    reweighted_sensitivity,
    statistic_length,
)


def test_hand_computed_constants() -> None:
    assert reweighted_sensitivity(1.0) == pytest.approx(math.sqrt(4.5), rel=1e-15)
    assert reweighted_sensitivity(0.5) == pytest.approx(math.sqrt(2 + 0.5 + 0.0625 / 2), rel=1e-15)
    assert reweighted_sensitivity(2.0) == 4.0
    assert statistic_length(5) == 20 and statistic_length(1) == 2
    assert epoch_count(100, 10) == 4  # 10 + 20 + 40 + 80 > 100
    assert epoch_count(10, 10) == 1
    # chi_5(0.01)^2 = 5 + 2 sqrt(5 ln 100) + 2 ln 100 = 23.807...
    assert chi_bound(5, 0.01) ** 2 == pytest.approx(5 + 2 * math.sqrt(5 * math.log(100)) + 2 * math.log(100))
    assert operator_norm_factor(4, math.exp(-4.0)) == pytest.approx(8.0)
    cal = reweighted_calibration(5, 10**6, 1.0, 1e-6, first_epoch=320, sampler="float")
    # The Gaussian mechanism of sensitivity Delta and sigma meets (1, 1e-6) on its exact curve.
    assert gaussian_delta(cal.sensitivity / cal.sigma, 1.0) == pytest.approx(1e-6, rel=1e-6)
    assert cal.sigma == pytest.approx(8.9619, abs=1e-4)


def _stat(u: np.ndarray, s: float) -> np.ndarray:
    d = len(u)
    return np.concatenate([[u[i] * u[j] for i in range(d) for j in range(i, d)], s * u])


def test_sensitivity_bound_holds_and_is_nearly_reached() -> None:
    rng = np.random.default_rng(0)
    best = 0.0
    for d in (2, 3, 5):
        for _ in range(5_000):
            a, b = rng.normal(size=d), rng.normal(size=d)
            a *= rng.uniform(0, 1) ** 0.1 / np.linalg.norm(a)
            b *= rng.uniform(0, 1) ** 0.1 / np.linalg.norm(b)
            s, t = rng.choice([-1.0, 1.0], size=2) * rng.uniform(0.9, 1.0, size=2)
            gap = float(np.linalg.norm(_stat(a, s) - _stat(b, t)))
            assert gap <= reweighted_sensitivity(1.0) + 1e-12
            best = max(best, gap)
    assert best > 0.95 * reweighted_sensitivity(1.0)  # random pairs; 60 degrees reaches 0.979


def test_the_engine_statistic_moves_by_at_most_the_sensitivity() -> None:
    # Exact (noise-free) releases of one-row epochs: unit rows have ||u|| = 1 at leverage 1.
    def release(x: np.ndarray, y: float) -> np.ndarray:
        e = _core.ReweightedLinUcbEngine(2, 10, first_epoch=1, leverage=1.0)
        e.observe(x, y)
        return e.last_release()

    x0, x1 = np.array([1.0, 0.0]), np.array([0.5, math.sqrt(3) / 2])
    gap = float(np.linalg.norm(release(x0, 1.0) - release(x1, -1.0)))
    assert gap == pytest.approx(math.sqrt(4.3125), rel=1e-12)
    assert gap <= reweighted_sensitivity(1.0)
    rng = np.random.default_rng(1)
    for _ in range(300):
        xa, xb = rng.normal(size=(2, 2)) * 2  # clipped to L = 1
        ya, yb = rng.uniform(-3, 3, size=2)  # clipped to B = 1
        assert np.linalg.norm(release(xa, ya) - release(xb, yb)) <= reweighted_sensitivity(1.0) + 1e-12


def _play(learner, env, horizon: int) -> list[int]:  # type: ignore[no-untyped-def]
    chosen = []
    for t in range(1, horizon + 1):
        i = learner.select(env.decision_set(t))
        learner.update(env.reward(t, i))
        chosen.append(i)
    return chosen


def test_noise_off_private_engine_is_the_non_private_learner() -> None:
    d, n = 3, 2000
    reference = dp.ReweightedLinUCB(d, n, first_epoch=50, seed=0)
    cal = dp.JointDPReweightedLinUCB(d, n, 1.0, 1e-6, first_epoch=50, seed=0).calibration
    # seed=0: the uniform choice before the first release from the reference's stream.
    silent = _core.ReweightedLinUcbEngine(d, n, first_epoch=50, leverage=1.0, noise=("zero",),
                                          reward_chi=cal.reward_chi, seed=0)
    a = _play(reference, dp.ShariffSheffetEnv(d, gap=0.1, seed=4), n)
    env = dp.ShariffSheffetEnv(d, gap=0.1, seed=4)
    b = []
    for t in range(1, n + 1):
        ds = env.decision_set(t)
        i = silent.select(ds)
        silent.observe(ds[i], env.reward(t, i))
        b.append(i)
    assert a == b
    np.testing.assert_array_equal(reference.theta, silent.theta())


def test_the_first_estimate_is_the_weighted_ridge_regression() -> None:
    d, n0 = 3, 40
    learner = dp.ReweightedLinUCB(d, 1000, first_epoch=n0, seed=0)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n0, d)) / 2.5
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(X @ np.array([0.5, -0.3, 0.2]) + rng.normal(0, 0.3, size=n0), -1, 1)
    learner.update_many(X, y)
    h0 = n0 / d
    gamma = d / n0
    w = np.minimum(1.0, gamma / (np.sum(X * X, axis=1) / h0))
    G = (X * w[:, None]).T @ X + gamma * h0 * np.eye(d)
    np.testing.assert_allclose(learner.theta, np.linalg.solve(G, (w * y) @ X), rtol=1e-9)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [0.1, 1e-6, 1e-12])
def test_lattice_releases_at_every_epsilon_delta(epsilon: float, delta: float) -> None:
    lrn = dp.JointDPReweightedLinUCB(3, 500, epsilon, delta, first_epoch=20, seed=1)
    cal = lrn.calibration
    assert lrn.privacy.epsilon == epsilon and lrn.privacy.delta == delta and lrn.privacy.sampler == "lattice"
    assert cal.noise is not None and cal.sigma == cal.noise.scale
    # Less noise than the continuous calibration at the requested delta would allow? Never.
    assert cal.sigma >= cal.sensitivity / dp.privacy.gaussian_mu(epsilon, delta) * (1 - 1e-12)
    _play(lrn, dp.ShariffSheffetEnv(3, seed=2), 60)
    assert lrn.releases == 2  # epochs of 20 and 40
    release = lrn.last_release
    steps = release * 2.0**cal.noise.exponent
    np.testing.assert_array_equal(steps, np.round(steps))


def test_restores_and_forks_rekey_replays_repeat() -> None:
    a = dp.JointDPReweightedLinUCB(3, 2000, 1.0, 1e-6, first_epoch=30, seed=5)
    env = dp.ShariffSheffetEnv(3, seed=6)
    _play(a, env, 40)
    with dp.research_replay():
        twin = pickle.loads(pickle.dumps(a))
    fork = a.fork(seed=99)
    copy = pickle.loads(pickle.dumps(a))
    rows = np.tile([0.3, 0.2, 0.1], (50, 1))
    ys = np.full(50, 0.5)
    for lr in (a, twin, fork, copy):
        lr.update_many(rows, ys)
    assert a.releases == 2
    np.testing.assert_array_equal(a.last_release, twin.last_release)
    assert not np.array_equal(a.last_release, fork.last_release)
    assert not np.array_equal(a.last_release, copy.last_release)


def test_corrupted_state_is_refused_not_a_panic() -> None:
    e = _core.ReweightedLinUcbEngine(2, 100, first_epoch=5, leverage=1.0, noise=("gaussian", 1.0))
    for _ in range(7):
        e.observe(np.array([0.6, 0.8]), 0.5)
    state = bytearray(e.to_bytes())
    refused = 0
    for i in range(1, len(state), 7):
        bad = bytearray(state)
        bad[i] ^= 0xFF
        try:
            _core.ReweightedLinUcbEngine.from_bytes(bytes(bad))
        except ValueError:
            refused += 1
    assert refused > 0
    with pytest.raises(ValueError):
        _core.ReweightedLinUcbEngine.from_bytes(b"\x01" + bytes(state[1:]))


@pytest.mark.parametrize("kwargs,name", [
    ({"epsilon": 0.0}, "epsilon"), ({"delta": 1.0}, "delta"), ({"delta": 0.0}, "delta"),
    ({"first_epoch": 0}, "first_epoch"),
    ({"leverage": -1.0}, "leverage"), ({"B": float("nan")}, "B"), ({"beta_scale": 0.0}, "beta_scale"),
    ({"d": 2000}, "d"), ({"sampler": "exact"}, "sampler"), ({"bounds": "wrap"}, "bounds"),
])
def test_bad_arguments_name_themselves(kwargs: dict[str, object], name: str) -> None:
    args = {"d": 2, "horizon": 100, "epsilon": 1.0, "delta": 1e-6, **kwargs}
    with pytest.raises(ValueError, match=name):
        dp.JointDPReweightedLinUCB(**args)  # type: ignore[arg-type]


def test_bounds_error_refuses_out_of_range_inputs() -> None:
    lrn = dp.JointDPReweightedLinUCB(2, 100, 1.0, 1e-6, bounds="error", seed=0)
    with pytest.raises(ValueError, match="x"):
        lrn.update(np.array([3.0, 0.0]), 0.5)
    with pytest.raises(ValueError, match="reward"):
        lrn.update(np.array([0.3, 0.0]), 5.0)


def test_simulate_learns_on_the_linear_and_logistic_environments() -> None:
    n = 20_000
    for env in (dp.ShariffSheffetEnv(5, gap=0.1), dp.LogisticContextualEnv(5, gap=0.1)):
        for lrn in (dp.ReweightedLinUCB(5, n, beta_scale=0.01),
                    dp.JointDPReweightedLinUCB(5, n, 1.0, 1e-6, beta_scale=0.01)):
            final = dp.simulate(lrn, env, seeds=8).final_regret
            # A uniformly random action loses about 0.75 a round on D.2 (0.3 on
            # the logistic scale); the private learner's regret varies by 4x
            # across seeds, so the median of 8 is tested.
            assert np.median(final) < 0.1 * n, (lrn, final)


def _coverage_violations(learner: dp.JointDPReweightedLinUCB, theta_star: np.ndarray, rounds: int) -> int:
    """Epochs after whose release some probe x has |<theta - theta*, x>| above the UCB width."""
    rng = np.random.default_rng(11)
    probes = rng.normal(size=(200, theta_star.size))
    probes /= np.linalg.norm(probes, axis=1)[:, None]
    xs = rng.normal(size=(rounds, theta_star.size))
    xs /= np.linalg.norm(xs, axis=1)[:, None]
    ys = np.where(rng.random(rounds) < 0.5 * (1.0 + xs @ theta_star), 1.0, -1.0)
    violations, seen = 0, 0
    for at in range(0, rounds, 20):
        learner.update_many(xs[at:at + 20], ys[at:at + 20])
        if learner.releases != seen:
            seen = learner.releases
            width = learner.ucb(probes) - probes @ learner.theta
            violations += int(np.any(np.abs(probes @ (learner.theta - theta_star)) > width))
    assert seen >= 5
    return violations


def test_the_derived_radius_covers_theta_star_and_a_shrunk_one_does_not() -> None:
    # The radius of the analysis holds on an event of probability >= 1 - alpha
    # (alpha = 1 / horizon here): no violation after any of the releases.
    theta_star = np.array([0.6, -0.48, 0.64])
    n = 6000
    derived = dp.JointDPReweightedLinUCB(3, n, 1.0, 1e-6, first_epoch=40, seed=2)
    assert _coverage_violations(derived, theta_star, n) == 0
    # A hundredth of it is no confidence set: the planted defect is caught.
    shrunk = dp.JointDPReweightedLinUCB(3, n, 1.0, 1e-6, first_epoch=40, beta_scale=0.01, seed=2)
    assert _coverage_violations(shrunk, theta_star, n) > 0
