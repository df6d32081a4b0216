"""The smooth binary mechanism (Andersson & Pagh 2023).

Claims checked: the tree shape and costs by hand; B C = A and the column
norms by dense enumeration (the bound H - w attained); that sampled
releases have the exact variance w * node variance at every t
(chi-square interval), have the law of w node draws (KS: the data-free
nodes come as one draw of their sum) and are unbiased (CLT bound); that a
checkpoint continues identically and a fork reseeds; audits (slow) with a
planted wrong-column-norm bug flagged.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from dpbandits.audit import audit, smooth_binary_mechanism
from dpbandits.learners.online import research_replay
from dpbandits.mechanisms import GaussianNoise, LaplaceNoise, SymmetricGaussianNoise, TreeCounter, WishartNoise
from dpbandits.privacy.factorization import counter_choice
from dpbandits.privacy.smooth_binary import (
    smooth_binary_column_norm,
    smooth_binary_gaussian_sigma,
    smooth_binary_laplace_scale,
    smooth_binary_leaves,
    smooth_binary_matrices,
    smooth_binary_release_variance,
    smooth_binary_shape,
)

# --- formulas ---------------------------------------------------------------


def test_shape_and_costs_by_hand() -> None:
    # T = 2^20: binom(23, 10) = 1,144,066 >= 2^20 + 1; (23 - 10) * 10 = 130
    # against the tree's 21 levels x 20 = 420.
    g = smooth_binary_shape(2**20, "gaussian")
    assert (g.height, g.ones) == (23, 10) and math.comb(23, 10) >= 2**20 + 1
    assert g.zeros * g.ones == 130
    # Laplace: binom(33, 27) = 1,107,568; 6^2 * 27 = 972 against 21^2 x 20 = 8820.
    lap = smooth_binary_shape(2**20, "laplace")
    assert (lap.height, lap.ones) == (33, 27) and lap.zeros**2 * lap.ones == 972
    # T = 8: binom(5, 2) = 10 >= 9; cost 3 * 2 = 6 (no tree of cost < 6 has 9 leaves).
    assert smooth_binary_shape(8, "gaussian") == type(g)(5, 2)
    assert smooth_binary_column_norm(8, "gaussian") == pytest.approx(math.sqrt(3))
    assert smooth_binary_column_norm(64, "laplace") == 2.0  # (12, 10): binom(12, 10) = 66 >= 65
    assert smooth_binary_release_variance(8, "gaussian") == 2.0
    assert smooth_binary_laplace_scale(64, 0.5, 1.0) == pytest.approx(4.0)
    from dpbandits.privacy.analytic_gaussian import gaussian_mu

    assert smooth_binary_gaussian_sigma(8, 1.0, 1e-5, 2.0) == pytest.approx(math.sqrt(3) * 2.0 / gaussian_mu(1.0, 1e-5))
    assert smooth_binary_leaves(4, 2, 6) == [0b0011, 0b0101, 0b0110, 0b1001, 0b1010, 0b1100]
    with pytest.raises(ValueError, match="noise_family"):
        smooth_binary_shape(8, "wishart")


@pytest.mark.parametrize("horizon", [1, 2, 5, 8, 13, 64, 100, 1000])
@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_dense_factorization_and_column_norms(horizon: int, family: str) -> None:
    shape = smooth_binary_shape(horizon, family)
    B, C = smooth_binary_matrices(shape.height, shape.ones, horizon)
    np.testing.assert_array_equal(B @ C, np.tril(np.ones((horizon, horizon))))
    # Every release reads exactly w nodes (S1); the largest column count is H - w (S2).
    assert np.all(B.sum(axis=1) == shape.ones)
    assert C.sum(axis=0).max() == shape.zeros
    l2 = np.linalg.norm(C, axis=0).max()
    assert l2 == pytest.approx(math.sqrt(shape.zeros))
    if family == "gaussian":
        assert l2 == pytest.approx(smooth_binary_column_norm(horizon, "gaussian"))


def test_smooth_binary_beats_the_tree_at_long_horizons() -> None:
    for n in (2**20, 50_000_000):
        levels, most = n.bit_length(), (n + 1).bit_length() - 1
        g, lap = smooth_binary_shape(n, "gaussian"), smooth_binary_shape(n, "laplace")
        gauss_ratio = g.zeros * g.ones / (levels * most)
        lap_ratio = lap.zeros**2 * lap.ones / (levels**2 * most)
        print(f"[smooth-binary] n = {n}: Gaussian {g} {gauss_ratio:.3f} x binary, "
              f"Laplace {lap} {lap_ratio:.3f} x binary")
        assert gauss_ratio < 0.35 and lap_ratio < 0.15


def test_counter_choice_by_family() -> None:
    assert counter_choice("smooth-binary", "laplace") == "smooth-binary"
    assert counter_choice("smooth-binary", "gaussian") == "smooth-binary"
    with pytest.raises(ValueError, match="counter"):
        counter_choice("smooth-binary", "wishart")
    with pytest.raises(ValueError, match="counter"):
        counter_choice("blt", "laplace")


# --- sampled releases -------------------------------------------------------

RUNS = 3000
T_SAMPLED = 1024
CHECK_AT = (1, 2, 3, 64, 500, 512, 1023, 1024)


def _counter(noise: str, sampler: str, seed: int, shape: tuple[int, ...] = ()) -> TreeCounter:
    spec = GaussianNoise(1.5) if noise == "gaussian" else LaplaceNoise(0.75)
    if shape:
        spec = SymmetricGaussianNoise(1.5)
    return TreeCounter(shape, T_SAMPLED, spec, seed=seed, sampler=sampler, counter="smooth-binary")  # type: ignore[arg-type]


def _node_variance(k: TreeCounter) -> float:
    noise = k.noise
    return noise.sigma**2 if isinstance(noise, GaussianNoise) else 2.0 * noise.scale**2  # type: ignore[attr-defined]


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("sampler", ["float", "lattice"])
def test_release_variances_within_chi_square_interval(noise: str, sampler: str) -> None:
    k = _counter(noise, sampler, 11)
    releases = k._release_runs(np.zeros(T_SAMPLED), RUNS)
    want = _node_variance(k) * smooth_binary_release_variance(T_SAMPLED, noise)
    assert k.max_noise_terms == smooth_binary_shape(T_SAMPLED, noise).ones
    alpha = 1e-4 / len(CHECK_AT)
    if noise == "gaussian":
        # Known mean 0: sum of squares / var ~ chi2(RUNS).
        lo, hi = stats.chi2.ppf(alpha / 2, RUNS), stats.chi2.ppf(1 - alpha / 2, RUNS)
        bounds = [(lo * want / RUNS, hi * want / RUNS)] * len(CHECK_AT)
    else:
        # A sum of w Laplace draws has kurtosis 3 + 3 / w: the mean square's
        # sd is want * sqrt((2 + 3 / w) / RUNS); two-sided normal bound.
        z = stats.norm.ppf(1 - alpha / 2)
        sd = want * math.sqrt((2.0 + 3.0 / smooth_binary_release_variance(T_SAMPLED, noise)) / RUNS)
        bounds = [(want - z * sd, want + z * sd)] * len(CHECK_AT)
    for t, (lo_v, hi_v) in zip(CHECK_AT, bounds, strict=True):
        ms = float(np.mean(releases[:, t - 1] ** 2))
        assert lo_v <= ms <= hi_v, f"{noise}/{sampler} t = {t}: {ms} vs {want}"
    if sampler == "lattice":
        step = k.lattice_step
        assert step is not None
        np.testing.assert_array_equal(np.round(releases / step) * step, releases)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("sampler", ["float", "lattice"])
def test_releases_have_the_law_of_w_node_draws(noise: str, sampler: str) -> None:
    # The data-free nodes of a query's trailing ones come as one draw of
    # their sum (b sqrt(2 G) Z for Laplace; on a lattice rounded to it):
    # each release's noise must still have the law of the sum of w
    # independent node draws. Two-sample KS against direct floating-point
    # sums (the lattice's steps are far below KS's resolution here), at
    # steps whose queries have short and long runs of trailing ones.
    k = _counter(noise, sampler, 13)
    releases = k._release_runs(np.zeros(T_SAMPLED), RUNS)
    w = smooth_binary_shape(T_SAMPLED, noise).ones
    rng = np.random.default_rng(14)
    size = (20_000, w)
    direct = (rng.laplace(0.0, 0.75, size) if noise == "laplace" else rng.normal(0.0, 1.5, size)).sum(axis=1)
    alpha = 1e-4 / len(CHECK_AT)
    for t in CHECK_AT:
        p = stats.ks_2samp(releases[:, t - 1], direct).pvalue
        assert p > alpha, f"{noise}/{sampler} t = {t}: KS p = {p}"


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("sampler", ["float", "lattice"])
def test_releases_are_unbiased(noise: str, sampler: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.uniform(-1.0, 1.0, size=T_SAMPLED)
    k = _counter(noise, sampler, 12)
    step = k.lattice_step
    exact = np.cumsum(x if step is None else np.round(x / step) * step)
    releases = k._release_runs(x, RUNS)
    sd = math.sqrt(_node_variance(k) * smooth_binary_release_variance(T_SAMPLED, noise))
    err = releases.mean(axis=0) - exact
    # CLT: each mean is N(0, sd^2 / RUNS); 5 sd over 1024 correlated checks.
    assert np.all(np.abs(err) <= 5.0 * sd / math.sqrt(RUNS)), np.max(np.abs(err) / (sd / math.sqrt(RUNS)))


# --- persistence ------------------------------------------------------------


# Checkpoints mid-stream: tests/test_counters.py (every counter but the tree).


def test_state_does_not_grow_with_the_horizon() -> None:
    small = TreeCounter((6, 6), 2**10, SymmetricGaussianNoise(1.0), seed=1, sampler="float", counter="smooth-binary")
    large = TreeCounter((6, 6), 2**40, SymmetricGaussianNoise(1.0), seed=1, sampler="float", counter="smooth-binary")
    # One node noise of the value's shape per tree level: H grows like log T.
    h_small, h_large = (smooth_binary_shape(n, "gaussian").height for n in (2**10, 2**40))
    per_level = 36 * 8
    assert len(pickle.dumps(large)) - len(pickle.dumps(small)) <= (h_large - h_small) * per_level + 64


# --- errors -----------------------------------------------------------------


def test_wishart_and_padding_are_refused() -> None:
    with pytest.raises(ValueError, match="counter"):
        TreeCounter((2, 2), 8, WishartNoise(1.0, 3.0), counter="smooth-binary")
    with pytest.raises(ValueError, match="pads"):
        TreeCounter((), 8, LaplaceNoise(1.0), padded=True, counter="smooth-binary")
    k = TreeCounter((), 3, LaplaceNoise(1.0), seed=1, counter="smooth-binary")
    for _ in range(3):
        k.add(1.0)
    with pytest.raises(Exception, match="horizon"):
        k.add(1.0)


# --- audits -----------------------------------------------------------------

N = 1_000_000
AUDIT_T = 8


@pytest.mark.slow
def test_gaussian_smooth_binary_meets_its_claim_and_wrong_column_norm_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    eps, delta = 1.0, 1e-3
    sigma = smooth_binary_gaussian_sigma(AUDIT_T, eps, delta, 1.0)
    ok = audit(smooth_binary_mechanism(AUDIT_T, "gaussian", sigma), epsilon=eps, delta=delta, n=N, seed=41)
    print(f"[audit] smooth-binary gaussian, tight: {ok}")
    record_property("gaussian_ok", str(ok))
    assert ok.passed
    # Planted bug: noise scaled by column norm 1 instead of sqrt(H - w) = sqrt(3).
    wrong = sigma / smooth_binary_column_norm(AUDIT_T, "gaussian")
    bug = audit(smooth_binary_mechanism(AUDIT_T, "gaussian", wrong), epsilon=eps, delta=delta, n=N, seed=42)
    print(f"[audit] smooth-binary gaussian, planted bug (column norm 1): {bug}")
    record_property("gaussian_bug", str(bug))
    assert not bug.passed


@pytest.mark.slow
@pytest.mark.parametrize("secure", [False, True])
def test_laplace_smooth_binary_meets_its_claim_and_wrong_column_norm_is_flagged(secure: bool, record_property) -> None:  # type: ignore[no-untyped-def]
    # The tree of T = 8 for Gaussian noise, (5, 2): H - w = 3 nodes per
    # leaf, so the planted bug (L1 column norm 1) gives 3x the epsilon.
    eps, shape = 1.0, smooth_binary_shape(AUDIT_T, "gaussian")
    scale = shape.zeros * 1.0 / eps
    kw = dict(height=shape.height, ones=shape.ones, secure=secure)
    ok = audit(smooth_binary_mechanism(AUDIT_T, "laplace", scale, **kw), epsilon=eps, n=N, seed=43)  # type: ignore[arg-type]
    print(f"[audit] smooth-binary laplace (secure={secure}): {ok}")
    record_property(f"laplace_ok_{secure}", str(ok))
    assert ok.passed
    bug = audit(smooth_binary_mechanism(AUDIT_T, "laplace", scale / shape.zeros, **kw), epsilon=eps, n=N, seed=44)  # type: ignore[arg-type]
    print(f"[audit] smooth-binary laplace (secure={secure}), planted bug (column norm 1): {bug}")
    record_property(f"laplace_bug_{secure}", str(bug))
    assert not bug.passed


# --- JointDPLinUCB ----------------------------------------------------------


@pytest.mark.parametrize("sampler", ["float", "lattice"])
def test_joint_dp_linucb_with_smooth_binary(sampler: str) -> None:
    from dpbandits.learners.linucb import JointDPLinUCB

    kw = dict(d=4, horizon=1000, epsilon=1.0, delta=0.1, calibration="tight", sampler=sampler, seed=3)
    tree = JointDPLinUCB(**kw)  # type: ignore[arg-type]
    lrn = JointDPLinUCB(counter="smooth-binary", **kw)  # type: ignore[arg-type]
    assert "smooth binary" in lrn.privacy.basis and lrn.counter == "smooth-binary"
    # sigma scales with sqrt(H - w) instead of sqrt(levels) (up to the
    # lattice's rounding and its slightly different delta allowance).
    ratio = smooth_binary_column_norm(1000, "gaussian") / math.sqrt(1000 .bit_length())
    assert lrn.calibration.sigma / tree.calibration.sigma == pytest.approx(ratio, rel=2e-3)
    assert lrn.calibration.release_variance == smooth_binary_release_variance(1000, "gaussian")
    rng = np.random.default_rng(0)
    for _ in range(100):
        lrn.select(rng.normal(size=(8, 4)))
        lrn.update(float(rng.uniform(-1, 1)))
    with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
        copy = pickle.loads(pickle.dumps(lrn))
    fork = lrn.fork(seed=99)
    diverged = False
    for _ in range(100):
        actions = rng.normal(size=(8, 4))
        np.testing.assert_array_equal(lrn.ucb(actions), copy.ucb(actions))
        diverged |= not np.array_equal(lrn.ucb(actions), fork.ucb(actions))
        assert lrn.select(actions) == copy.select(actions)
        fork.select(actions)
        reward = float(rng.uniform(-1, 1))
        for k in (lrn, copy, fork):
            k.update(reward)
    # The fork draws its own future node noise (same history, new draws).
    assert diverged
