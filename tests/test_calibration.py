"""Calibration of the Shariff & Sheffet (2018) learners, checked against
hand-computed values.

The reference numbers were computed with ``bc -l`` at 40 digits (an
arbitrary-precision calculator independent of Python's ``math``), step by
step; the intermediate values are in the comments. Two parameter sets:

- REF (App. D.2): d = 5, n = 5e7, epsilon = 1, delta = 0.1, alpha = 1/n = 2e-8,
  L = 1, Btilde = 1, so Ltilde^2 = 2 and m = 1 + ceil(log2 5e7) = 1 + 26 = 27
  (2^25 = 33 554 432 < 5e7 <= 2^26 = 67 108 864).
- SET2: d = 3, n = 1000, epsilon = 0.5, delta = 0.01, alpha = 0.05, L = 1,
  Btilde = 0.5, so Ltilde^2 = 1.25 and m = 1 + ceil(log2 1000) = 1 + 10 = 11.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbandits.mechanisms import SymmetricGaussianNoise, WishartNoise
from dpbandits.privacy import (
    ConfidenceRadius,
    GaussianCalibration,
    Guarantee,
    RegularizerBounds,
    WishartCalibration,
    advanced_composition_epsilon,
    confidence_radius,
    linucb_constant,
    shariff_sheffet_gaussian,
    shariff_sheffet_wishart,
    tree_depth,
    tree_node_epsilon,
    wishart_degrees_of_freedom,
    zcdp_to_dp_epsilon,
)

REL = 1e-12

REF = dict(d=5, horizon=50_000_000, epsilon=1.0, delta=0.1)  # alpha defaults to 1/n
SET2 = dict(d=3, horizon=1000, epsilon=0.5, delta=0.01, alpha=0.05, L=1.0, B_tilde=0.5)


def approx(x: float) -> object:
    return pytest.approx(x, rel=REL, abs=0.0)


# ---------------------------------------------------------------- tree depth


@pytest.mark.parametrize(
    ("n", "m"),
    [
        (1, 1),  # ceil(log2 1) = 0
        (2, 2),  # ceil(log2 2) = 1
        (3, 3),  # log2 3 = 1.58 -> 2
        (4, 3),  # log2 4 = 2 exactly
        (5, 4),  # log2 5 = 2.32 -> 3
        (1000, 11),  # 2^9 = 512 < 1000 <= 1024 = 2^10
        (2**20, 21),  # exact power of two: no rounding up
        (2**20 + 1, 22),
        (50_000_000, 27),
        (5e7, 27),  # an integral float is accepted
        (2**53 + 1, 55),  # beyond float precision: integer arithmetic
    ],
)
def test_tree_depth_is_one_plus_ceil_log2_n(n: int, m: int) -> None:
    assert tree_depth(n) == m


def test_tree_depth_grows_with_horizon() -> None:
    depths = [tree_depth(n) for n in range(1, 5000)]
    assert depths == sorted(depths)


def test_tree_node_epsilon_is_app_a2_value() -> None:
    # eps / sqrt(8 m ln(2/delta)) = 1 / sqrt(8 * 27 * 2.99573227355399099343...)
    assert tree_node_epsilon(1.0, 0.1, 27) == approx(0.0393116819349219967699948038968781425045)


# ------------------------------------------------------- Gaussian (§4.2, Prop. 11)


def test_gaussian_reference_case_matches_hand_computation() -> None:
    cal = shariff_sheffet_gaussian(**REF)
    assert cal.m == 27
    assert cal.alpha == approx(2e-8)
    assert cal.L_tilde**2 == approx(2.0)
    # ln(4/delta) = ln 40 = 3.68887945411393630285...
    # sigma = sqrt(16 * 27 * 2^2 * 3.688879...^2) / 1 = 8 sqrt(27) * 3.688879...
    assert cal.sigma == approx(153.3438393005347824793807695079386934930590)
    # ln(2n/alpha) = ln(5e15) = 36.14821430734478563487...
    # Upsilon = sigma * sqrt(54) * (4 sqrt(5) + 2 * 36.148214...)
    assert cal.upsilon == approx(91545.4728182637631280891819582680579849366871)
    assert cal.shift == approx(183090.9456365275262561783639165361159698733742)  # 2 Upsilon
    assert cal.rho_min == approx(91545.4728182637631280891819582680579849366871)  # Upsilon
    assert cal.rho_max == approx(274636.4184547912893842675458748041739548100613)  # 3 Upsilon
    # gamma = sigma sqrt(27 / Upsilon) (sqrt 5 + sqrt(2 * 36.148214...))
    assert cal.gamma == approx(28.2803954178482327466663793066719512485709)
    # rho = 27 * 2^2 / (2 sigma^2) = 1 / (32 ln(40)^2)
    assert cal.zcdp_rho == approx(0.0022964716831175484769968760210709201658)
    assert cal.node_epsilon == approx(0.0393116819349219967699948038968781425045)
    assert cal.node_delta == approx(0.05)


def test_gaussian_second_set_matches_hand_computation() -> None:
    cal = shariff_sheffet_gaussian(**SET2)
    assert cal.m == 11
    assert cal.alpha == 0.05
    # ln(4/0.01) = ln 400 = 5.99146454710798198687...
    # sigma = sqrt(16 * 11 * 1.25^2 * 5.991464...^2) / 0.5
    assert cal.sigma == approx(198.7143984747382146054762514554660026703056)
    # ln(2n/alpha) = ln(40000) = 10.59663473309607335490...
    assert cal.upsilon == approx(26210.7071056062671400632483282179063858561508)
    assert cal.shift == approx(2 * 26210.7071056062671400632483282179063858561508)
    assert cal.rho_min == approx(26210.7071056062671400632483282179063858561508)
    assert cal.rho_max == approx(3 * 26210.7071056062671400632483282179063858561508)
    assert cal.gamma == approx(25.7916163165087065519116117047065901532155)
    assert cal.zcdp_rho == approx(0.0002176326461942508159912917529156829977)


def test_gaussian_sigma_worked_out_step_by_step() -> None:
    # SET2 with plain arithmetic, the paper's formula read off §4.2:
    m = 11
    l_tilde_sq = 1.0**2 + 0.5**2  # Assumption 6: 1.25
    sigma_sq = 16 * m * l_tilde_sq**2 * math.log(4 / 0.01) ** 2 / 0.5**2
    sigma = math.sqrt(sigma_sq)
    upsilon = sigma * math.sqrt(2 * m) * (4 * math.sqrt(3) + 2 * math.log(2 * 1000 / 0.05))
    gamma = sigma * math.sqrt(m / upsilon) * (math.sqrt(3) + math.sqrt(2 * math.log(40000)))
    cal = shariff_sheffet_gaussian(**SET2)
    assert (cal.sigma, cal.upsilon, cal.gamma) == (approx(sigma), approx(upsilon), approx(gamma))


def test_gaussian_default_shift_is_two_upsilon_and_rho_max_is_three_rho_min() -> None:
    for params in (REF, SET2):
        cal = shariff_sheffet_gaussian(**params)
        assert cal.shift == approx(2 * cal.upsilon)
        assert cal.rho_min == approx(cal.upsilon)
        assert cal.rho_max == approx(3 * cal.rho_min)


def test_gaussian_general_shift_reduces_to_prop_11_at_two_upsilon() -> None:
    for params in (REF, SET2):
        default = shariff_sheffet_gaussian(**params)
        general = shariff_sheffet_gaussian(**params, shift=2 * default.upsilon)
        assert general.shift == approx(default.shift)
        assert general.rho_min == approx(default.rho_min)
        assert general.rho_max == approx(default.rho_max)
        assert general.gamma == approx(default.gamma)


def test_gaussian_general_shift_hand_values() -> None:
    # SET2 with shift = 5 Upsilon: rho_min = 4 Upsilon, rho_max = 6 Upsilon,
    # gamma = sigma sqrt(m / (4 Upsilon)) (...) = Prop. 11's gamma / 2.
    upsilon = 26210.7071056062671400632483282179063858561508
    cal = shariff_sheffet_gaussian(**SET2, shift=5 * upsilon)
    assert cal.rho_min == approx(104842.8284224250685602529933128716255434246032)
    assert cal.rho_max == approx(6 * upsilon)
    assert cal.gamma == approx(12.8958081582543532759558058523532950719494)


def test_gaussian_larger_shift_gives_smaller_gamma_and_larger_rho() -> None:
    base = shariff_sheffet_gaussian(**SET2)
    shifts = [1.01, 1.5, 2.0, 4.0, 16.0]
    cals = [shariff_sheffet_gaussian(**SET2, shift=s * base.upsilon) for s in shifts]
    assert [c.gamma for c in cals] == sorted((c.gamma for c in cals), reverse=True)
    assert [c.rho_min for c in cals] == sorted(c.rho_min for c in cals)


def test_gaussian_has_no_unshifted_variant() -> None:
    with pytest.raises(ValueError, match=r"`shift`.*no unshifted variant"):
        shariff_sheffet_gaussian(**REF, shift=False)


@pytest.mark.parametrize("factor", [0.5, 1.0])
def test_gaussian_shift_must_exceed_upsilon(factor: float) -> None:
    upsilon = shariff_sheffet_gaussian(**SET2).upsilon
    with pytest.raises(ValueError, match=r"`shift`.*exceed Upsilon"):
        shariff_sheffet_gaussian(**SET2, shift=factor * upsilon)


def test_gaussian_tree_is_rho_zcdp_and_meets_epsilon() -> None:
    # footnote 5: rho = eps^2 / (32 ln(4/delta)^2); converted, far below epsilon.
    cal = shariff_sheffet_gaussian(**REF)
    assert cal.zcdp_rho == approx(1.0 / (32 * math.log(40) ** 2))
    implied = zcdp_to_dp_epsilon(cal.zcdp_rho, 0.1)
    assert implied == approx(0.1477312882028135874814653797925051193502)
    assert implied <= cal.epsilon


def test_gaussian_refuses_epsilon_its_argument_cannot_certify() -> None:
    # rho = 1000^2 / (32 ln(40)^2) ~ 2296 zCDP implies epsilon > 2296 > 1000.
    with pytest.raises(ValueError, match=r"`epsilon`.*zCDP"):
        shariff_sheffet_gaussian(d=5, horizon=1000, epsilon=1000.0, delta=0.1)


def test_gaussian_noise_spec_and_guarantee() -> None:
    cal = shariff_sheffet_gaussian(**REF)
    assert isinstance(cal, GaussianCalibration)
    assert cal.noise == SymmetricGaussianNoise(cal.sigma)
    g = cal.guarantee
    assert (g.model, g.epsilon, g.delta, g.calibration) == ("joint", 1.0, 0.1, "paper")
    assert g.rho == cal.zcdp_rho
    assert g.protects == "contexts and rewards"
    assert "§4.2" in g.basis and "Claim 7" in g.basis
    assert str(g).startswith("(1, 0.1)-joint DP (0.002296-zCDP) of contexts and rewards [")


# ------------------------------------------------ Wishart (§4.1, Eq. 4, Prop. 9)

# REF intermediate values (bc -l):
#   ln(8m/delta) = ln 2160 = 7.67786350067821068645...
#   ln(2/delta)  = ln 20   = 2.99573227355399099343...
#   224 * 27 * 7.677863... * 2.995732... = 139108.98041262799135...  -> ceil 139109
#   k = 5 + 1 + 139109 = 139115
#   sqrt(m k) = sqrt(3756105) = 1938.06733629149222086...
#   ln(8n/alpha) = ln(2e16) = 37.53450866846467625370...
#   a = sqrt 5 + sqrt(2 * 37.534508...) = 10.90030581685584886173...
#   b = sqrt 5 + sqrt(2 * 36.148214...) = 10.73879863386481248642...
REF_K = 139115
REF_RHO_MIN_U = 7427945.5266968560699084124761385929503626658840  # 2 (sqrt(mk) - a)^2
REF_RHO_MAX_U = 7596949.7399707478559096159792130748819676372624  # 2 (sqrt(mk) + a)^2
REF_GAMMA_U = 15.1869546716052828932621092442944020177315  # sqrt 2 * b
REF_C = 7258941.3134229642839072089730641110187576945056  # Eq. (4)
REF_RHO_MIN_S = 169004.2132738917860012035030744819316049713784  # 4 * 2 sqrt(mk) a
REF_RHO_MAX_S = 338008.4265477835720024070061489638632099427568  # 8 * 2 sqrt(mk) a
REF_GAMMA_S = 204.0221304824802224470637711602711029308071  # sqrt 2 sqrt(sqrt(mk) b)

# SET2 intermediate values (bc -l):
#   ln(8m/delta) = ln 8800 = 9.08250700046629784034...
#   ln(2/delta)  = ln 200  = 5.29831736654803667745...
#   224 * 11 * 9.082507... * 5.298317... / 0.5^2 = 474290.47706522651182...  -> ceil 474291
#   k = 3 + 1 + 474291 = 474295; sqrt(m k) = 2284.12893681595829477...
#   ln(8n/alpha) = ln 160000 = 11.98292909421596397370...; a = 6.62754446893051038627...
#   ln(2n/alpha) = ln 40000 = 10.59663473309607335490...; b = 6.33566563357160736921...
SET2_K = 474295
SET2_RHO_MIN_U = 6483765.7401783127351762629117753186782909475545  # 1.25 (sqrt(mk) - a)^2
SET2_RHO_MAX_U = 6559456.5706859063933261142690742506557197791735
SET2_GAMMA_U = 7.0834895196876938891346433729302641973380  # sqrt(1.25) b
SET2_C = 6408074.9096707190770264115544763867008621159355
SET2_RHO_MIN_S = 75690.8305075936581498513572989319774288316190
SET2_RHO_MAX_S = 151381.6610151873162997027145978639548576632380
SET2_GAMMA_S = 134.4966412574646803524167864633883607517199


def test_wishart_degrees_of_freedom_hand_values() -> None:
    assert wishart_degrees_of_freedom(5, 27, 1.0, 0.1) == REF_K
    assert wishart_degrees_of_freedom(3, 11, 0.5, 0.01) == SET2_K


@pytest.mark.parametrize(
    ("params", "k", "rho_min", "rho_max", "gamma"),
    [
        (REF, REF_K, REF_RHO_MIN_U, REF_RHO_MAX_U, REF_GAMMA_U),
        (SET2, SET2_K, SET2_RHO_MIN_U, SET2_RHO_MAX_U, SET2_GAMMA_U),
    ],
)
def test_wishart_unshifted_matches_prop_9(params, k, rho_min, rho_max, gamma) -> None:
    cal = shariff_sheffet_wishart(**params, shift=False)
    assert cal.k == k
    assert cal.shift == 0.0
    assert cal.rho_min == approx(rho_min)
    assert cal.rho_max == approx(rho_max)
    assert cal.gamma == approx(gamma)


@pytest.mark.parametrize(
    ("params", "k", "c", "rho_min", "rho_max", "gamma"),
    [
        (REF, REF_K, REF_C, REF_RHO_MIN_S, REF_RHO_MAX_S, REF_GAMMA_S),
        (SET2, SET2_K, SET2_C, SET2_RHO_MIN_S, SET2_RHO_MAX_S, SET2_GAMMA_S),
    ],
)
def test_wishart_shifted_matches_eq_4_and_prop_9(params, k, c, rho_min, rho_max, gamma) -> None:
    cal = shariff_sheffet_wishart(**params)
    assert cal.k == k
    assert cal.shift == approx(c)
    assert cal.rho_min == approx(rho_min)
    assert cal.rho_max == approx(rho_max)
    assert cal.gamma == approx(gamma)


@pytest.mark.parametrize("params", [REF, SET2])
def test_shifted_wishart_bounds_follow_app_c(params) -> None:
    # App. C: rho'_min = rho_min - c and rho'_max = rho_max - c = 2 rho'_min.
    unshifted = shariff_sheffet_wishart(**params, shift=False)
    shifted = shariff_sheffet_wishart(**params)
    assert shifted.rho_min == pytest.approx(unshifted.rho_min - shifted.shift, rel=1e-9)
    assert shifted.rho_max == pytest.approx(unshifted.rho_max - shifted.shift, rel=1e-9)
    assert shifted.rho_max == approx(2 * shifted.rho_min)
    # the shift shrinks rho_max, the term that dominates the regret bound
    assert shifted.rho_max < unshifted.rho_max


@pytest.mark.parametrize("params", [REF, SET2])
def test_wishart_general_shift_reduces_to_eq_4(params) -> None:
    paper = shariff_sheffet_wishart(**params)
    unshifted = shariff_sheffet_wishart(**params, shift=False)
    general = shariff_sheffet_wishart(**params, shift=paper.shift)
    assert general.shift == paper.shift
    assert general.rho_min == pytest.approx(paper.rho_min, rel=1e-9)
    assert general.rho_max == pytest.approx(paper.rho_max, rel=1e-9)
    # gamma: Claim 20's exact value, which App. C relaxes to the paper's gamma'
    claim_20 = unshifted.gamma * math.sqrt(unshifted.rho_min / general.rho_min)
    assert general.gamma == pytest.approx(claim_20, rel=1e-9)
    assert general.gamma <= paper.gamma


def test_wishart_general_shift_zero_is_unshifted() -> None:
    zero = shariff_sheffet_wishart(**SET2, shift=0.0)
    unshifted = shariff_sheffet_wishart(**SET2, shift=False)
    assert (zero.rho_min, zero.rho_max, zero.gamma) == (
        unshifted.rho_min,
        unshifted.rho_max,
        unshifted.gamma,
    )


def test_wishart_general_shift_hand_values() -> None:
    # c = 1000 (subtracted): gamma = gamma_u sqrt(rho_min_u / (rho_min_u - 1000)) (Claim 20)
    plus = shariff_sheffet_wishart(**SET2, shift=1000.0)
    assert plus.rho_min == approx(SET2_RHO_MIN_U - 1000)
    assert plus.rho_max == approx(SET2_RHO_MAX_U - 1000)
    assert plus.gamma == approx(7.0840358309889545867860605261869682646873)
    # c = -1000 (added): gamma = gamma_u sqrt(rho_max_u / (rho_max_u + 1000))
    minus = shariff_sheffet_wishart(**SET2, shift=-1000.0)
    assert minus.rho_min == approx(SET2_RHO_MIN_U + 1000)
    assert minus.gamma == approx(7.0829496365716935837978686971482895975540)


def test_wishart_shift_must_leave_rho_min_positive() -> None:
    with pytest.raises(ValueError, match=r"`shift`.*rho_min"):
        shariff_sheffet_wishart(**SET2, shift=SET2_RHO_MIN_U * 1.0001)


def test_wishart_scale_is_l_tilde_squared_not_l_tilde() -> None:
    cal = shariff_sheffet_wishart(**REF)
    assert cal.scale == 2.0  # Ltilde^2 = 1 + 1, not Ltilde = 1.414...
    wide = shariff_sheffet_wishart(d=2, horizon=100, epsilon=1.0, delta=0.1, L=2.0, B_tilde=1.0)
    assert wide.scale == 5.0  # 2^2 + 1^2, not sqrt(5)
    assert wide.L_tilde == approx(math.sqrt(5.0))
    assert cal.noise == WishartNoise(scale=2.0, df=float(REF_K))


def test_wishart_release_needs_exactly_m_draws() -> None:
    cal = shariff_sheffet_wishart(**REF)
    assert isinstance(cal, WishartCalibration)
    assert cal.noise_terms == cal.m == 27


def test_wishart_guarantee() -> None:
    g = shariff_sheffet_wishart(**REF).guarantee
    assert (g.model, g.epsilon, g.delta, g.rho) == ("joint", 1.0, 0.1, None)
    assert "Thm 8" in g.basis and "App. A.2" in g.basis
    assert str(g).startswith("(1, 0.1)-joint DP of contexts and rewards [Shariff & Sheffet 2018")


def test_wishart_node_privacy_composes_to_epsilon() -> None:
    cal = shariff_sheffet_wishart(**REF)
    assert cal.node_delta == approx(0.1 / 54)
    composed = advanced_composition_epsilon(cal.node_epsilon, cal.m, 0.1 / 2)
    # leading term: sqrt(2 * 27 * ln 20) * eps0 = eps / 2 exactly
    assert math.sqrt(2 * 27 * math.log(20)) * cal.node_epsilon == approx(0.5)
    assert composed <= cal.epsilon
    assert cal.m * cal.node_delta + 0.1 / 2 == approx(0.1)


def test_wishart_refuses_epsilon_beyond_advanced_composition() -> None:
    # eps = 10, m = 27: eps0 = 0.393, 27 eps0 (e^eps0 - 1) = 5.11 > eps/2.
    with pytest.raises(ValueError, match=r"`epsilon`.*advanced composition"):
        shariff_sheffet_wishart(**{**REF, "epsilon": 10.0})


def test_wishart_refuses_node_epsilon_outside_thm_23_range() -> None:
    # n = 1 (m = 1), delta = 0.5: eps0 = 3 / sqrt(8 ln 4) = 0.90; eps = 4 gives eps0 = 1.2 >= 1.
    with pytest.raises(ValueError, match=r"per-node target"):
        shariff_sheffet_wishart(d=2, horizon=1, epsilon=4.0, delta=0.5, alpha=0.1)


def test_wishart_claim_19_precondition() -> None:
    # d = 10^6, n = 1: sqrt(m k) = sqrt(d + 1 + 216) ~ sqrt(d) + 0.11, while
    # a = sqrt(d) + sqrt(2 ln(8/0.1)) = sqrt(d) + 2.96.
    with pytest.raises(ValueError, match="Claim 19"):
        shariff_sheffet_wishart(d=10**6, horizon=1, epsilon=2.0, delta=0.5, alpha=0.1)


# ---------------------------------------------------------- natural logarithms


def test_eq_4_uses_natural_logarithms() -> None:
    # The same Eq. (4) with log10 in ln(8n/alpha) (a bug seen elsewhere) is far off.
    m, k, n, alpha, lt2, d = 27, REF_K, 5e7, 2e-8, 2.0, 5
    sqrt_mk = math.sqrt(m * k)
    a_log10 = math.sqrt(d) + math.sqrt(2 * math.log10(8 * n / alpha))
    c_log10 = lt2 * (sqrt_mk - a_log10) ** 2 - 4 * lt2 * sqrt_mk * a_log10
    cal = shariff_sheffet_wishart(**REF)
    assert cal.shift == approx(REF_C)
    assert abs(cal.shift - c_log10) > 1e4
    assert abs(cal.rho_min - 4 * lt2 * sqrt_mk * a_log10) > 1e4


def test_gaussian_uses_natural_logarithms() -> None:
    # sigma with log10(40) = 1.602 instead of ln 40 = 3.689 would be 2.3 times smaller.
    cal = shariff_sheffet_gaussian(**REF)
    sigma_log10 = 8 * math.sqrt(27) * math.log10(40)
    assert cal.sigma / sigma_log10 == pytest.approx(math.log(40) / math.log10(40))
    assert cal.sigma == approx(153.3438393005347824793807695079386934930590)


# ------------------------------------------------------------------ monotonicity


@pytest.mark.parametrize("family", ["gaussian", "wishart"])
def test_smaller_epsilon_means_more_noise(family: str) -> None:
    eps = [2.0, 1.0, 0.5, 0.1, 0.01]
    if family == "gaussian":
        cals = [shariff_sheffet_gaussian(d=5, horizon=10**4, epsilon=e, delta=0.1) for e in eps]
        sigmas = [c.sigma for c in cals]
        assert sigmas == sorted(sigmas) and len(set(sigmas)) == len(sigmas)
    else:
        ks = [shariff_sheffet_wishart(d=5, horizon=10**4, epsilon=e, delta=0.1).k for e in eps]
        assert ks == sorted(ks) and len(set(ks)) == len(ks)


def test_smaller_delta_means_more_noise() -> None:
    deltas = [0.5, 0.1, 1e-3, 1e-6]
    cals = [shariff_sheffet_gaussian(d=5, horizon=1000, epsilon=1.0, delta=x) for x in deltas]
    sigmas = [c.sigma for c in cals]
    ks = [shariff_sheffet_wishart(d=5, horizon=1000, epsilon=1.0, delta=x).k for x in deltas]
    assert sigmas == sorted(sigmas)
    assert ks == sorted(ks)


def test_larger_horizon_means_deeper_tree_and_more_noise() -> None:
    horizons = [10, 1000, 10**5, 5 * 10**7]
    gauss = [shariff_sheffet_gaussian(d=5, horizon=n, epsilon=1.0, delta=0.1) for n in horizons]
    wish = [shariff_sheffet_wishart(d=5, horizon=n, epsilon=1.0, delta=0.1) for n in horizons]
    for field in ("m", "sigma", "upsilon", "rho_min"):
        values = [getattr(c, field) for c in gauss]
        assert values == sorted(values) and len(set(values)) == len(values), field
    for field in ("m", "k", "rho_min", "rho_max"):
        values = [getattr(c, field) for c in wish]
        assert values == sorted(values) and len(set(values)) == len(values), field


# ------------------------------------------------------------- bad arguments

GOOD = dict(d=3, horizon=1000, epsilon=0.5, delta=0.01, alpha=0.05, L=1.0, B_tilde=0.5)
BAD = [
    ("d", 0),
    ("d", -2),
    ("horizon", 0),
    ("horizon", -5),
    ("epsilon", 0.0),
    ("epsilon", -1.0),
    ("epsilon", math.inf),
    ("epsilon", math.nan),
    ("delta", 0.0),
    ("delta", 1.0),
    ("delta", 1.5),
    ("delta", -0.1),
    ("alpha", 0.0),
    ("alpha", 1.0),
    ("alpha", 2.0),
    ("L", 0.0),
    ("L", -1.0),
    ("L", math.inf),
    ("B_tilde", 0.0),
    ("B_tilde", -0.5),
]


@pytest.mark.parametrize("function", [shariff_sheffet_gaussian, shariff_sheffet_wishart])
@pytest.mark.parametrize(("name", "value"), BAD)
def test_bad_argument_raises_value_error_naming_it(function, name: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"`{name}`"):
        function(**{**GOOD, name: value})


@pytest.mark.parametrize("function", [shariff_sheffet_gaussian, shariff_sheffet_wishart])
def test_default_alpha_needs_horizon_two(function) -> None:
    with pytest.raises(ValueError, match=r"`alpha`.*1/horizon"):
        function(d=2, horizon=1, epsilon=1.0, delta=0.1)
    assert function(d=2, horizon=1, epsilon=1.0, delta=0.1, alpha=0.1).m == 1


def test_non_integer_counts_are_refused() -> None:
    with pytest.raises(TypeError, match="`d`"):
        shariff_sheffet_gaussian(**{**GOOD, "d": 2.5})
    with pytest.raises(TypeError, match="`horizon`"):
        tree_depth(10.5)
    with pytest.raises(ValueError, match="`horizon`"):
        tree_depth(0)


def test_bad_shift_values() -> None:
    with pytest.raises(ValueError, match="`shift`"):
        shariff_sheffet_wishart(**GOOD, shift=math.inf)
    with pytest.raises(ValueError, match="`shift`"):
        shariff_sheffet_gaussian(**GOOD, shift=-1.0)
    with pytest.raises(TypeError, match="`shift`"):
        shariff_sheffet_wishart(**GOOD, shift="big")


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: tree_node_epsilon(0.0, 0.1, 3), "epsilon"),
        (lambda: tree_node_epsilon(1.0, 1.0, 3), "delta"),
        (lambda: tree_node_epsilon(1.0, 0.1, 0), "m"),
        (lambda: wishart_degrees_of_freedom(0, 3, 1.0, 0.1), "d"),
        (lambda: advanced_composition_epsilon(0.1, 3, 0.0), "delta_prime"),
        (lambda: zcdp_to_dp_epsilon(-1.0, 0.1), "rho"),
        (lambda: linucb_constant(d=2, horizon=10, rho=0.0), "rho"),
        (lambda: linucb_constant(d=0, horizon=10), "d"),
        (lambda: confidence_radius(linucb_constant(2, 10), sigma=0.0), "sigma"),
        (lambda: confidence_radius(linucb_constant(2, 10), S=-1.0), "S"),
        (lambda: confidence_radius(linucb_constant(2, 10), form="cubic"), "form"),
        (lambda: RegularizerBounds(2, 10, 0.1, 1.0, rho_min=2.0, rho_max=1.0, gamma=0), "rho_max"),
        (lambda: RegularizerBounds(2, 10, 0.1, 1.0, rho_min=1.0, rho_max=1.0, gamma=-1), "gamma"),
    ],
)
def test_helpers_validate_their_arguments(call, name: str) -> None:
    with pytest.raises(ValueError, match=f"`{name}`"):
        call()


# ------------------------------------------------------- Prop. 4 confidence radius


def prop_4_beta(V: np.ndarray, b: RegularizerBounds, sigma: float, S: float) -> float:
    """Prop. 4, first line, evaluated directly."""
    sign, log_det = np.linalg.slogdet(V)
    assert sign > 0
    inner = 2 * math.log(2 / b.alpha) + log_det - b.d * math.log(b.rho_min)
    return sigma * math.sqrt(inner) + S * math.sqrt(b.rho_max) + b.gamma


def prop_4_upper(b: RegularizerBounds, sigma: float, S: float) -> float:
    """Prop. 4, second line, evaluated directly."""
    growth = b.rho_max / b.rho_min + b.horizon * b.L**2 / (b.d * b.rho_min)
    inner = 2 * math.log(2 / b.alpha) + b.d * math.log(growth)
    return sigma * math.sqrt(inner) + S * math.sqrt(b.rho_max) + b.gamma


def test_radius_constants_reference_case_by_hand() -> None:
    # log_offset = 2 ln(2/alpha) - d ln rho_min = 2 ln 1e8 - 5 ln Upsilon
    gauss = confidence_radius(shariff_sheffet_gaussian(**REF))
    assert gauss.log_offset == approx(-20.2815940046251917861631363480534328144429)
    assert gauss.log_det_coefficient == 1.0
    assert gauss.noise_sd == 1.0
    # offset = S sqrt(3 Upsilon) + gamma
    assert gauss.offset == approx(552.3380434440852178269596512490562766894778)
    # upper bound: 2 ln 1e8 + 5 ln(3 + n / (5 Upsilon))
    gauss_ub = confidence_radius(shariff_sheffet_gaussian(**REF), form="upper_bound")
    assert gauss_ub.log_offset == approx(60.4443506586512036803820630952132082024996)
    assert gauss_ub.log_det_coefficient == 0.0

    wish = confidence_radius(shariff_sheffet_wishart(**REF))
    assert wish.log_offset == approx(-23.3470331331412301019772760760267596688009)
    assert wish.offset == approx(785.4070516386653284054733966704279283645069)
    wish_ub = confidence_radius(shariff_sheffet_wishart(**REF), form="upper_bound")
    assert wish_ub.log_offset == approx(57.4096558660689900503318966311582223439591)

    linucb = confidence_radius(linucb_constant(d=5, horizon=50_000_000), form="upper_bound")
    assert linucb.log_offset == approx(117.4318402426963048849192308554442412643226)
    assert linucb.offset == 1.0  # S sqrt(1) + 0


def test_linucb_constant_regularizer_bounds_and_beta() -> None:
    b = linucb_constant(d=2, horizon=100, rho=1.0)
    assert (b.rho_min, b.rho_max, b.gamma, b.alpha) == (1.0, 1.0, 0.0, 0.01)
    # beta = sqrt(2 ln 200 + 2 ln(1 + 100/2)) + 1 = sqrt(10.5966... + 7.8636...) + 1
    beta = confidence_radius(b, form="upper_bound").beta()
    assert beta == approx(math.sqrt(2 * math.log(200) + 2 * math.log(51)) + 1)
    assert beta == pytest.approx(5.296543, abs=1e-6)


@pytest.mark.parametrize("sigma, S", [(1.0, 1.0), (0.5, 2.0)])
@pytest.mark.parametrize(
    "make",
    [
        lambda: shariff_sheffet_gaussian(**REF).bounds,
        lambda: shariff_sheffet_wishart(**SET2).bounds,
        lambda: shariff_sheffet_wishart(**SET2, shift=False).bounds,
        lambda: linucb_constant(d=4, horizon=500, rho=2.0, alpha=0.05),
    ],
)
def test_radius_matches_direct_prop_4_on_random_spd(make, sigma: float, S: float) -> None:
    b = make()
    rng = np.random.default_rng(20180)
    radius = confidence_radius(b, sigma=sigma, S=S)
    upper = confidence_radius(b, sigma=sigma, S=S, form="upper_bound")
    assert isinstance(radius, ConfidenceRadius)
    assert upper.beta() == pytest.approx(prop_4_upper(b, sigma, S), rel=1e-12)
    for _ in range(20):
        # V = G + H: H with eigenvalues in [rho_min, rho_max], G a Gram matrix
        # of t <= n actions of norm L.
        q, _ = np.linalg.qr(rng.standard_normal((b.d, b.d)))
        H = (q * rng.uniform(b.rho_min, b.rho_max, b.d)) @ q.T
        t = int(rng.integers(0, min(b.horizon, 300)))
        X = rng.standard_normal((t, b.d))
        X *= b.L / np.linalg.norm(X, axis=1, keepdims=True)
        V = X.T @ X + H
        _, log_det = np.linalg.slogdet(V)
        assert radius.beta(log_det) == pytest.approx(prop_4_beta(V, b, sigma, S), rel=1e-12)
        assert radius.beta(log_det) <= upper.beta() * (1 + 1e-12)


def test_radius_accepts_calibrations_directly() -> None:
    cal = shariff_sheffet_wishart(**SET2)
    assert confidence_radius(cal) == confidence_radius(cal.bounds)
    with pytest.raises(TypeError, match="`bounds`"):
        confidence_radius(object())


def test_log_det_form_needs_log_det() -> None:
    radius = confidence_radius(linucb_constant(2, 10))
    with pytest.raises(ValueError, match="`log_det_v`"):
        radius.beta()
    # failure event (log det V below d ln rho_min): clamped, not NaN
    assert radius.beta(-1e6) == radius.offset


# ------------------------------------------------------------- composition


def test_advanced_composition_hand_value() -> None:
    # k = 10, eps0 = 0.1, delta' = 1e-5:
    # sqrt(2 * 10 * ln 1e5) * 0.1 = sqrt(230.2585...) * 0.1 = 1.5174271...
    # 10 * 0.1 * (e^0.1 - 1) = 0.10517091807564762
    expected = math.sqrt(20 * 11.512925464970229) * 0.1 + 0.10517091807564762
    assert advanced_composition_epsilon(0.1, 10, 1e-5) == approx(expected)


def test_zcdp_conversion_hand_value() -> None:
    # rho = 0.5, delta = 1e-6: 0.5 + 2 sqrt(0.5 * 13.815510557964274) = 0.5 + 5.2565...
    assert zcdp_to_dp_epsilon(0.5, 1e-6) == approx(0.5 + 2 * math.sqrt(0.5 * 13.815510557964274))


# ------------------------------------------------------------------ guarantees


def test_guarantee_str_is_one_readable_line() -> None:
    g = Guarantee(
        "joint", 1.0, 0.1, protects="contexts and rewards", basis="Shariff & Sheffet 2018"
    )
    assert str(g) == (
        "(1, 0.1)-joint DP of contexts and rewards [Shariff & Sheffet 2018; paper calibration; "
        "floating-point noise: not protected against low-bit attacks]"
    )
    pure = Guarantee("central", 0.5, protects="rewards", basis="Mishra & Thakurta 2015, Lemma 5")
    assert str(pure).replace("; floating-point noise: not protected against low-bit attacks", "") == (
        "0.5-central DP of rewards [Mishra & Thakurta 2015, Lemma 5; paper calibration]"
    )
    assert pure.is_pure and pure.is_private
    assert "\n" not in str(shariff_sheffet_wishart(**REF).guarantee)


def test_non_private_guarantee() -> None:
    g = Guarantee.none()
    assert g.model == "none" and math.isinf(g.epsilon) and g.delta == 0.0
    assert not g.is_private and not g.is_pure
    assert g.calibration == "none"
    assert str(g) == "not private [non-private learner]"


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(model="global", epsilon=1.0, protects="rewards"), "model"),
        (dict(model="central", epsilon=0.0, protects="rewards"), "epsilon"),
        (dict(model="central", epsilon=-1.0, protects="rewards"), "epsilon"),
        (dict(model="central", epsilon=math.inf, protects="rewards"), "epsilon"),
        (dict(model="central", epsilon=1.0, delta=1.0, protects="rewards"), "delta"),
        (dict(model="central", epsilon=1.0, delta=-0.1, protects="rewards"), "delta"),
        (dict(model="central", epsilon=1.0, rho=0.0, protects="rewards"), "rho"),
        (dict(model="central", epsilon=1.0, protects=""), "protects"),
        (dict(model="joint", epsilon=1.0, protects="rewards", calibration="loose"), "calibration"),
        (dict(model="joint", epsilon=1.0, protects="rewards", calibration="none"), "calibration"),
        (dict(model="none", epsilon=1.0, calibration="none"), "epsilon"),
        (dict(model="none", epsilon=math.inf, calibration="paper"), "calibration"),
    ],
)
def test_guarantee_validation(kwargs, name: str) -> None:
    with pytest.raises(ValueError, match=f"`{name}`"):
        Guarantee(**kwargs)


def test_guarantee_is_frozen_and_comparable() -> None:
    a = shariff_sheffet_gaussian(**REF).guarantee
    b = shariff_sheffet_gaussian(**REF).guarantee
    assert a == b and hash(a) == hash(b)
    with pytest.raises(AttributeError):
        a.epsilon = 2.0  # type: ignore[misc]
