"""Characteristic times, thresholds and noise radii of private best-arm
identification (dpbandits.privacy.bai) against hand-computed values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpbandits.privacy import bai
from dpbandits.privacy.azize import d_eps, kl_bernoulli

MU1 = [0.95, 0.9, 0.9, 0.9, 0.5]


def _two_arm_rate(d, m1: float, m2: float) -> float:
    """T*^-1 = inf_y max(d(m1, y), d(m2, y)) for two arms (minimax): the y in
    [m2, m1] where the two costs are equal, by bisection."""
    lo, hi = m2, m1
    for _ in range(200):
        y = 0.5 * (lo + hi)
        if d(m1, y) > d(m2, y):
            lo = y
        else:
            hi = y
    return d(m1, 0.5 * (lo + hi))


def test_tv_closed_form_two_arms_by_hand():
    # gaps 0.4 and 0.4: 1/0.4 + 1/0.4 = 5
    assert bai.tv_characteristic_time([0.9, 0.5]) == pytest.approx(5.0, rel=1e-12)
    ct = bai.characteristic_time([0.9, 0.5], "tv")
    assert ct.value == pytest.approx(5.0, rel=1e-8)
    assert ct.weights == pytest.approx((0.5, 0.5), abs=1e-8)


def test_tv_numeric_matches_closed_form_five_arms():
    # gaps 0.05, 0.05, 0.05, 0.45: 1/0.05 + 3/0.05 + 1/0.45 = 80 + 2.222...
    assert bai.tv_characteristic_time(MU1) == pytest.approx(80.0 + 1 / 0.45, rel=1e-12)
    assert bai.characteristic_time(MU1, "tv").value == pytest.approx(80.0 + 1 / 0.45, rel=1e-7)


@pytest.mark.parametrize("m1,m2", [(0.5, 0.3), (0.9, 0.6), (0.75, 0.7)])
def test_kl_two_arms_minimax(m1, m2):
    want = 1.0 / _two_arm_rate(kl_bernoulli, m1, m2)
    assert bai.characteristic_time([m1, m2], "kl").value == pytest.approx(want, rel=1e-6)
    # arm order does not matter
    assert bai.characteristic_time([m2, m1], "kl").value == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("eps", [0.01, 0.3, 1.0, 10.0])
@pytest.mark.parametrize("m1,m2", [(0.5, 0.3), (0.9, 0.6)])
def test_dp_two_arms_minimax(eps, m1, m2):
    want = 1.0 / _two_arm_rate(lambda x, y: d_eps(x, y, eps), m1, m2)
    assert bai.characteristic_time([m1, m2], "dp", eps).value == pytest.approx(want, rel=1e-6)


def test_dp_small_eps_two_arms_by_hand():
    # eps -> 0: d_eps ~ eps TV, T*_eps ~ T*_TV / eps = (2 / 0.4) / eps
    eps = 1e-4
    assert bai.characteristic_time([0.9, 0.5], "dp", eps).value == pytest.approx(5.0 / eps, rel=1e-3)


def test_dp_interpolates_kl_and_tv():
    kl = bai.characteristic_time(MU1, "kl").value
    tv = bai.tv_characteristic_time(MU1)
    prev = math.inf
    for eps in (0.01, 0.1, 1.0, 10.0, 1000.0):
        t = bai.characteristic_time(MU1, "dp", eps).value
        # d_eps <= kl and d_eps <= eps TV: T*_eps >= both characteristic times
        assert t >= kl * (1 - 1e-7) and t >= tv / eps * (1 - 1e-7)
        assert t <= prev * (1 + 1e-7)  # decreasing in eps
        prev = t
    assert prev == pytest.approx(kl, rel=1e-6)  # eps large: the non-private one


def test_optimal_weights_equalise_costs():
    ct = bai.characteristic_time([0.75, 0.625, 0.5, 0.375, 0.25], "kl")
    w = ct.weights
    assert sum(w) == pytest.approx(1.0, abs=1e-12)
    costs = []
    for b in range(1, 5):
        y = (w[0] * 0.75 + w[b] * [0.75, 0.625, 0.5, 0.375, 0.25][b]) / (w[0] + w[b])
        costs.append(w[0] * kl_bernoulli(0.75, y) + w[b] * kl_bernoulli([0.75, 0.625, 0.5, 0.375, 0.25][b], y))
    assert max(costs) == pytest.approx(min(costs), rel=1e-6)
    assert 1.0 / ct.value == pytest.approx(min(costs), rel=1e-6)


def test_lower_bounds_formulae():
    eps, delta = 0.1, 0.01
    lb23 = bai.azize2023_lower_bound(MU1, eps, delta)
    kl = bai.characteristic_time(MU1, "kl").value
    assert lb23 == pytest.approx(max(kl, bai.tv_characteristic_time(MU1) / (6 * eps)) * math.log(1 / 0.03), rel=1e-9)
    lb25 = bai.jourdan_azize2025_lower_bound(MU1, eps, delta)
    assert lb25 == pytest.approx(bai.characteristic_time(MU1, "dp", eps).value * math.log(100), rel=1e-9)
    assert lb25 > lb23  # the 2025 bound is the tighter one


def test_bad_arguments():
    with pytest.raises(ValueError, match="unique best arm"):
        bai.characteristic_time([0.5, 0.5])
    with pytest.raises(ValueError, match="means"):
        bai.characteristic_time([0.5, 1.5])
    with pytest.raises(ValueError, match="means"):
        bai.characteristic_time([0.5])
    with pytest.raises(ValueError, match="epsilon"):
        bai.characteristic_time([0.5, 0.4], "dp")
    with pytest.raises(ValueError, match="epsilon"):
        bai.characteristic_time([0.5, 0.4], "dp", -1.0)
    with pytest.raises(ValueError, match="divergence"):
        bai.characteristic_time([0.5, 0.4], "hellinger")
    with pytest.raises(ValueError, match="delta"):
        bai.glr_threshold(5, 1.5)
    with pytest.raises(ValueError, match="k"):
        bai.glr_threshold(1, 0.1)


def test_zeta_and_calibration():
    assert bai._zeta(2.0) == pytest.approx(math.pi**2 / 6, rel=1e-10)
    assert bai._zeta(1.5) == pytest.approx(2.612375348685488, rel=1e-10)
    for x in (1.0, 3.0, 10.0):
        c = bai.gaussian_calibration(x)
        # C_G(x) = x + ln(x) / 2 + O(1) (lambda near 1 - 1 / (2x) in the minimum)
        assert x + 0.5 * math.log(x) <= c <= x + math.log(x) + 2.0
    c0, c1 = bai.glr_threshold(5, 0.01)
    assert c0 == pytest.approx(2 * bai.gaussian_calibration(0.5 * math.log(4 / 0.01)), rel=1e-12)
    assert c1 == 3.0


def test_laplace_radius_chernoff_by_hand():
    b, delta = 2.0, 0.01
    # k = 1: Chernoff inf_s (-ln(1 - s^2 b^2) + ln(2/delta)) / s, by a fine grid
    grid = min((-math.log1p(-(s * b) ** 2) + math.log(2 / delta)) / s for s in (i / 10**5 / b for i in range(1, 10**5)))
    r1 = bai.laplace_sum_radius(1, b, delta)
    assert r1 == pytest.approx(grid, rel=1e-6)
    assert r1 >= b * math.log(1 / delta)  # the exact two-sided quantile of one Laplace
    # more draws, larger radius; sub-linear growth
    r10 = bai.laplace_sum_radius(10, b, delta)
    assert r1 < r10 < 10 * r1
    # the discrete Laplace of t steps of g = b / t has (nearly) the same radius
    t = 2**19
    assert bai.laplace_sum_radius(10, b, delta, (t, b / t)) == pytest.approx(r10, rel=1e-4)
    radii = bai.noise_radii(5, 0.005, b, 4)
    assert radii[0] == pytest.approx(bai.laplace_sum_radius(1, b, 0.005 * 6 / (math.pi**2 * 5)), rel=1e-12)
    assert radii == sorted(radii)


# ---------------------------------------------------------------------------
# The Chernoff stopping rule (equations (C1)-(C5) of dpbandits.privacy.bai)


def test_c5_thresholds_by_hand():
    from dpbandits.privacy.bai import chernoff_pair_thresholds

    # k = 2, s = 2: (1 + c) e^-c = 2 delta / (1 * 1 * 2 * 3) = delta / 3; with
    # delta = 18 e^-5 the solution is c = 5 ((1 + 5) e^-5 = 6 e^-5).
    (c,) = chernoff_pair_thresholds(2, 18.0 * math.exp(-5.0), 2)
    assert abs(c - 5.0) < 1e-12
    cs = chernoff_pair_thresholds(5, 0.01, 30)
    for s, c in zip(range(2, 31), cs, strict=True):
        assert abs((1.0 + c) * math.exp(-c) - 2.0 * 0.01 / (4 * (s - 1) * s * (s + 1))) < 1e-15
    assert all(b > a for a, b in itertools.pairwise(cs))
    with pytest.raises(ValueError, match="max_sum"):
        chernoff_pair_thresholds(5, 0.01, 1)


def test_c1_exponent_by_hand():
    from dpbandits.privacy.azize import d_eps
    from dpbandits.privacy.bai import bernoulli_laplace_deviation as dev

    # Without noise draws and with a vanishing scale, D = n kl(m, z).
    kl = 0.7 * math.log(0.7 / 0.5) + 0.3 * math.log(0.3 / 0.5)
    assert abs(dev(0.7, 100, 0, 0.5, 1e-9) - 100 * kl) < 1e-9
    # j = 0, scale 1: s is restricted to |s| < 1, so D = n d_1(m, z) (Fenchel duality).
    assert abs(dev(0.7, 100, 0, 0.5, 1.0) - 100 * d_eps(0.7, 0.5, 1.0)) < 1e-9
    assert abs(dev(0.1, 40, 0, 0.8, 0.5) - 40 * d_eps(0.1, 0.8, 2.0)) < 1e-9
    # m = 1, n = 1, j = 1, z = 1/2, Laplace(1): sup_s s - ln((1 + e^s) / 2) + ln(1 - s^2),
    # at the root s = 0.2132772... of 1 / (1 + e^s) = 2 s / (1 - s^2): 0.0544092603272...
    assert abs(dev(1.0, 1, 1, 0.5, 1.0) - 0.0544092603272272) < 1e-10
    # Noise lowers the exponent; m == z gives 0.
    assert dev(0.7, 100, 3, 0.5, 1.0) < dev(0.7, 100, 0, 0.5, 1.0)
    assert dev(0.4, 10, 2, 0.4, 1.0) == 0.0


def test_c2_tail_bound_holds_by_simulation():
    """P(m >= x_u) <= e^-u for the x_u with D(x_u; n, j, mu) = u (C2), on the
    exact law of a Binomial sum plus j Laplace draws (10^5 draws; the bound
    is checked with a 4-sigma allowance, and it is not vacuous: the
    frequency is above e^-u / 20)."""
    from dpbandits.privacy.bai import bernoulli_laplace_deviation as dev

    rng = np.random.default_rng(7)
    n, j, mu, scale, u = 30, 3, 0.3, 2.0, 3.0
    lo, hi = mu, 1.5
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if dev(mid, n, j, mu, scale) < u else (lo, mid)
    x_u = hi
    draws = 100_000
    sums = rng.binomial(n, mu, draws) + rng.laplace(0.0, scale, (draws, j)).sum(axis=1)
    freq = float((sums >= n * x_u).mean())
    bound = math.exp(-u)
    assert freq <= bound + 4 * math.sqrt(bound / draws)
    assert freq > bound / 20


def test_pair_statistic_reference():
    from dpbandits.privacy.bai import bernoulli_laplace_deviation as dev
    from dpbandits.privacy.bai import chernoff_pair_statistic

    w = chernoff_pair_statistic(0.9, 400, 3, 0.5, 400, 3, 1.0, grid=2000)
    # the infimum over z (the engine's test value): 68.8995 at z = 0.6771
    exact = dev(0.9, 400, 3, 0.6771415601081947, 1.0) + dev(0.5, 400, 3, 0.6771415601081947, 1.0)
    assert abs(exact - 68.89951951326881) < 1e-8
    assert exact - 0.1 < w <= exact
    assert chernoff_pair_statistic(0.5, 10, 1, 0.6, 10, 1, 1.0) == 0.0
