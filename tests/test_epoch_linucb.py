"""JointDPLinUCB(counter="epoch"): the epoch releases and the radius that
adapts to them (dpbandits.privacy.epoch).

- the noise bounds against hand-computed values and against sampled noise;
- the calibration: one release per row (the one-level tree's sigma);
- noise off, epochs of one round: the engine selects as non-private LinUCB;
- the release changes only at the epoch ends of the schedule;
- coverage: theta* lies in the released confidence set, over seeds;
- the audit of the exact released values (slow): 1e6 runs per side.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.noise import ZeroNoise
from dpbandits.privacy import linucb_constant
from dpbandits.privacy.confidence import confidence_radius
from dpbandits.privacy.epoch import (
    epoch_ends,
    epoch_gaussian,
    epoch_radius_extra,
    mixed_norm_bound,
    operator_norm_bound,
    vector_norm_bound,
)
from dpbandits.privacy.tree import gaussian_tree_sigma


def test_vector_bound_is_hsu_kakade_zhang_by_hand() -> None:
    # t = ln 100 = 4.605170; 5 + 2 sqrt(5 t) + 2 t = 5 + 9.597049 + 9.210340 = 23.807389
    assert vector_norm_bound(1.0, 5, 0.01) == pytest.approx(4.879282, rel=1e-6)
    assert vector_norm_bound(3.0, 5, 0.01) == pytest.approx(3 * 4.879282, rel=1e-6)


def test_mixed_bound_by_hand() -> None:
    # S = 1, d = 5: C = diag(2, 2, 2, 2, 3); tr C = 11, tr C^2 = 25, ||C|| = 3; t = ln 100 = 4.605170:
    # 11 + 2 sqrt(25 t) + 6 t = 11 + 21.459659 + 27.631021 = 60.090681, sqrt = 7.751818
    assert mixed_norm_bound(1.0, 5, 1.0, 0.01) == pytest.approx(7.751818, rel=1e-6)
    # S = 2, d = 3, scale 0.5: C = diag(5, 5, 9); tr 19, tr C^2 = 131, ||C|| = 9; t = ln 1000 = 6.907755:
    # 19 + 2 sqrt(131 t) + 18 t = 19 + 60.163642 + 124.339595 = 203.503237, sqrt = 14.265456, x 0.5
    assert mixed_norm_bound(0.5, 3, 2.0, 1e-3) == pytest.approx(0.5 * 14.265456, rel=1e-6)


def test_operator_bound_by_hand() -> None:
    # eta = 0.05: 2 sqrt(ln(2e8) + 5 ln 41) / 0.9 = 2 sqrt(19.113828 + 18.567893) / 0.9 = 13.640908
    b = operator_norm_bound(1.0, 5, 1e-8)
    assert 13.4 < b <= 13.640908
    # d = 1: |N_11| with proxy 2 s^2 has the tail 2 s sqrt(ln(2/p)); the net costs a little above it.
    scalar = 2.0 * math.sqrt(math.log(2.0 / 1e-3))
    assert scalar <= operator_norm_bound(1.0, 1, 1e-3) <= 1.4 * scalar


def test_noise_bounds_hold_for_sampled_noise() -> None:
    rng = np.random.default_rng(11)
    d, p, s, n = 5, 0.01, 2.0, 20_000
    z = rng.standard_normal((n, d + 1, d + 1)) * s
    noise = (z + np.transpose(z, (0, 2, 1))) / math.sqrt(2.0)
    op = np.abs(np.linalg.eigvalsh(noise[:, :d, :d])).max(axis=1)
    vec = np.linalg.norm(noise[:, :d, d], axis=1)
    # Each bound fails with probability <= p: more than 2p n exceedances
    # has probability < 1e-9 for a correct bound (Chernoff).
    assert (op > operator_norm_bound(s, d, p)).sum() <= 2 * p * n
    assert (vec > vector_norm_bound(s, d, p)).sum() <= 2 * p * n
    # n_b - N theta* for fixed theta* on the sphere (S = 1) and inside it.
    for theta in (np.ones(d) / math.sqrt(d), np.eye(d)[0], 0.3 * np.eye(d)[1]):
        w = noise[:, :d, d] - noise[:, :d, :d] @ theta
        assert (np.linalg.norm(w, axis=1) > mixed_norm_bound(s, d, 1.0, p)).sum() <= 2 * p * n
    w = noise[:, :d, d] - noise[:, :d, :d] @ (np.ones(d) / math.sqrt(d))
    assert mixed_norm_bound(s, d, 1.0, p) < 1.5 * np.quantile(np.linalg.norm(w, axis=1), 1 - p)
    # Not vacuous: the bounds are within a small factor of the sampled 1 - p quantiles.
    assert operator_norm_bound(s, d, p) < 2.5 * np.quantile(op, 1 - p)
    assert vector_norm_bound(s, d, p) < 1.5 * np.quantile(vec, 1 - p)


def test_calibration_is_one_release_per_row() -> None:
    c = epoch_gaussian(5, 10**6, 1.0, 1e-6, sampler="float", first_epoch=100, ratio=2.0)
    # One release: the one-level tree's sigma, Ltilde^2 = 2.
    assert c.sigma == pytest.approx(gaussian_tree_sigma(1, 1.0, 1e-6, sensitivity=2.0, calibration="tight"))
    assert c.epochs == len(epoch_ends(10**6, 100, 2.0)) == 15
    assert c.failure == pytest.approx(1e-6 / (6 * 15))
    assert c.mixed_bound == pytest.approx(mixed_norm_bound(c.sigma, 5, 1.0, c.failure))
    assert c.op_bound == pytest.approx(operator_norm_bound(c.sigma, 5, c.failure))
    assert c.vec_bound == pytest.approx(vector_norm_bound(c.sigma, 5, c.failure))
    assert c.zcdp_rho == pytest.approx(4.0 / (2 * c.sigma**2))
    lattice = epoch_gaussian(5, 10**6, 1.0, 1e-6, first_epoch=100, ratio=2.0)
    assert lattice.lattice_exponent is not None and c.sigma <= lattice.sigma < 1.01 * c.sigma
    learner = dp.JointDPLinUCB(5, 10**6, 1.0, 1e-6, calibration="tight", counter="epoch", seed=0)
    assert learner.privacy.model == "joint" and "one release" in learner.privacy.basis


def test_epoch_schedule_by_hand() -> None:
    assert epoch_ends(100, 10, 2.0) == [10, 20, 40, 80, 100]
    assert epoch_ends(30, 4, 1.5) == [4, 6, 9, 14, 21, 30]
    assert epoch_ends(5, 1, 1.0) == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="epoch_ratio"):
        epoch_ends(10, 1, 0.5)


def _engines(d: int, n: int) -> tuple[_core.LinUcbEngine, _core.LinUcbEngine]:
    radius = confidence_radius(linucb_constant(d, n, rho=1.0), sigma=1.0, S=1.0)
    kw = {"beta_noise_sd": radius.noise_sd, "beta_log_offset": radius.log_offset}
    lin = _core.LinUcbEngine(d, n, regularizer=1.0, beta_offset=radius.offset, seed=0, **kw)
    epoch = _core.LinUcbEngine(d, n, noise=ZeroNoise().wire(), counter="epoch", first_epoch=1, epoch_ratio=1.0,
                               op_bound=0.0, vec_bound=0.0, ridge=1.0, s=1.0, beta_offset=0.0, seed=0, **kw)
    return lin, epoch


def test_noise_off_with_one_round_epochs_is_linucb() -> None:
    d, n = 3, 400
    lin, epoch = _engines(d, n)
    env = dp.ShariffSheffetEnv(d=d, k=9, gap=0.1, seed=4)
    for t in range(1, n + 1):
        x = env.decision_set(t)
        a, b = lin.ucb(x), epoch.ucb(x)
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)
        i = int(np.argmax(a))
        r = env.reward(t, i)
        lin.observe(x[i], r)
        epoch.observe(x[i], r)


def test_release_changes_only_at_epoch_ends() -> None:
    n = 60
    learner = dp.JointDPLinUCB(2, n, 1.0, 0.1, calibration="tight", counter="epoch", first_epoch=4, epoch_ratio=2.0,
                               seed=3)
    ends = set(epoch_ends(n, 4, 2.0))
    env = dp.ShariffSheffetEnv(d=2, k=4, gap=0.1, seed=1)
    last = learner.policy()._engine.released()[1].copy()
    for t in range(1, n):
        x = env.decision_set(t)
        i = learner.select(x)
        learner.update(env.reward(t, i))
        now = learner.policy()._engine.released()[1]
        assert (not np.array_equal(now, last)) == (t in ends), t
        last = now.copy()


def test_theta_lies_in_the_released_confidence_set() -> None:
    d, n, seeds = 3, 3000, 40
    outside = 0
    for seed in range(seeds):
        env = dp.ShariffSheffetEnv(d=d, k=9, gap=0.0, seed=seed)
        learner = dp.JointDPLinUCB(d, n, 1.0, 0.1, calibration="tight", counter="epoch", first_epoch=20,
                                   alpha=0.05, seed=seed)
        for t in range(1, n):
            x = env.decision_set(t)
            i = learner.select(x)
            learner.update(env.reward(t, i))
        pol = learner.policy()._engine
        _, v, _ = pol.released()
        err = np.asarray(pol.theta()) - env.theta
        outside += float(np.sqrt(err @ v @ err)) > pol.beta
    # alpha = 0.05 per run: more than 8 of 40 outside has probability < 1e-3.
    assert outside <= 8


def test_radius_terms_by_hand() -> None:
    # k = 4: B_N = 6, B_b = 4; lambda = 100: 1 + min(sqrt(12), 12 / 10) + 4 / 10 = 2.6
    assert epoch_radius_extra(3.0, 2.0, 1.0, 1.0, 4, 100.0) == pytest.approx(2.6)
    # lambda = 4: 1 + min(3.4641, 6) + 2 = 6.4641
    assert epoch_radius_extra(3.0, 2.0, 1.0, 1.0, 4, 4.0) == pytest.approx(1 + math.sqrt(12) + 2)
    # No noise: S sqrt(rho), non-private LinUCB's offset.
    assert epoch_radius_extra(0.0, 0.0, 4.0, 0.5, 3, 9.0) == pytest.approx(1.0)
    # B_w(1) = 5, k = 4, c_k = 7: (10 + 7) / 10 = 1.7 < 2.6; at lambda = 4, 8.5 > 6.4641 keeps the first form.
    assert epoch_radius_extra(3.0, 2.0, 1.0, 1.0, 4, 100.0, mixed_bound=5.0) == pytest.approx(1.7)
    assert epoch_radius_extra(3.0, 2.0, 1.0, 1.0, 4, 4.0, mixed_bound=5.0) == pytest.approx(3 + math.sqrt(12))


def test_engine_radius_is_the_formula() -> None:
    learner = dp.JointDPLinUCB(3, 500, 1.0, 0.1, calibration="tight", counter="epoch", first_epoch=30, seed=2)
    env = dp.ShariffSheffetEnv(d=3, k=9, gap=0.1, seed=2)
    c = learner.calibration
    for t in range(1, 200):
        x = env.decision_set(t)
        learner.update(env.reward(t, learner.select(x)))
    pol = learner.policy()._engine
    _, v, _ = pol.released()
    k = sum(1 for e in epoch_ends(500, 30, 1.5) if e <= 199)
    lam = float(np.linalg.eigvalsh(v)[0])
    logdet = float(np.linalg.slogdet(v)[1])
    expected = learner.radius.beta(logdet) + epoch_radius_extra(c.op_bound, c.vec_bound, c.ridge, 1.0, k, lam,
                                                                c.mixed_bound)
    assert pol.beta == pytest.approx(expected, rel=1e-9)
