"""Shuffle amplification (dpbandits.privacy.shuffle): the f_{n,delta} of Hanna,
Girgis, Fragouli & Diggavi §V / Eq. (37), i.e. Feldman, McMillan & Talwar
(FMT, FOCS 2021) Thm 3.1, and the numerical bound of FMT Thm 3.2.

Reference values:

- Closed form: computed with mpmath at 30 significant digits (independent of
  the implementation, which uses tanh(eps0/2) and log1p). The arithmetic is
  written out step by step for the main case.
- Numerical: checked against a brute-force hockey-stick divergence of the
  FMT Thm 3.2 pair. That divergence is computed over the full support with
  scipy's binomial pmf, in both directions, with no truncation. FMT's own
  published example is also checked: their README reports (eps, 1e-6)-DP
  with eps between 0.16754 and 0.17279 for n = 1e5, eps0 = 4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbandits.privacy.shuffle import (
    closed_form_validity_limit,
    shuffle_amplification,
    shuffle_local_epsilon,
)

stats = pytest.importorskip("scipy.stats")

CF = "closed-form"
NUM = "numerical"


# ------------------------------------------------------- closed form by hand


def test_closed_form_hand_computed_main_case() -> None:
    # n = 1e4, eps0 = 1, delta = 1e-6 (the issue's example):
    #   (e - 1)/(e + 1)            = 1.718281828459045 / 3.718281828459045 = 0.46211715726000976
    #   ln(4/delta) = ln(4e6)      = 15.201804919084165
    #   sqrt(e * ln(4/delta))      = sqrt(41.32224...) = 6.4282804910275821
    #   8 * 6.42828049... / sqrt(1e4) = 0.51426243928220656
    #   8 e / 1e4                  = 0.0021746254627672362
    #   bracket                    = 0.5164370647449738
    #   0.46211715726 * bracket    = 0.2386544282636509
    #   ln(1.2386544282636509)     = 0.21402565193083783
    e = math.e
    step_ratio = (e - 1.0) / (e + 1.0)
    assert step_ratio == pytest.approx(0.46211715726000976, rel=1e-15)
    step_sqrt = math.sqrt(e * math.log(4.0 / 1e-6))
    assert step_sqrt == pytest.approx(6.4282804910275821, rel=1e-15)
    bracket = 8.0 * step_sqrt / 100.0 + 8.0 * e / 1e4
    assert bracket == pytest.approx(0.5164370647449738, rel=1e-15)
    assert math.log(1.0 + step_ratio * bracket) == pytest.approx(0.21402565193083783, rel=1e-14)

    assert shuffle_amplification(1.0, 10_000, 1e-6) == pytest.approx(0.21402565193083783, rel=1e-13)
    assert shuffle_amplification(1.0, 10_000, 1e-6, method=CF) == pytest.approx(
        0.21402565193083783, rel=1e-13
    )


@pytest.mark.parametrize(
    ("eps0", "n", "delta", "expected"),
    [
        # mpmath, 30 digits: ln(1 + tanh(eps0/2)(8 sqrt(e^eps0 ln(4/delta)/n) + 8 e^eps0/n))
        (1.0, 10_000, 1e-6, 0.21402565193083783),
        (0.5, 100_000, 1e-6, 0.030579330543759096),
        (2.0, 100_000, 1e-8, 0.20988541943651565),
        (0.1, 300, 1e-6, 0.091715067931873447),
        (1.0, 200, 0.5, 0.51387454565520726),
        (0.05, 52, 0.1, 0.056993350380506102),  # f > eps0 here: reported as eps0
    ],
)
def test_closed_form_reference_values(eps0: float, n: int, delta: float, expected: float) -> None:
    assert shuffle_amplification(eps0, n, delta, CF) == pytest.approx(
        min(expected, eps0), rel=1e-13
    )


def test_closed_form_never_above_eps0() -> None:
    # Near the validity limit with a large delta the formula itself exceeds eps0:
    # n = 25, delta = 0.5, eps0 = 0.1: limit = ln(25/(16 ln 4)) = 0.11965 >= 0.1,
    # f = 0.13001366504054087 (mpmath) > 0.1. Shuffling is post-processing of
    # eps0-DP reports, so (eps0, 0)-DP holds anyway: the function reports eps0.
    assert closed_form_validity_limit(25, 0.5) == pytest.approx(0.11965284265013853, rel=1e-13)
    assert shuffle_amplification(0.1, 25, 0.5, CF) == 0.1
    for eps0 in np.linspace(0.01, 0.119, 30):
        assert shuffle_amplification(float(eps0), 25, 0.5, CF) <= eps0


# --------------------------------------------------------- validity condition


def test_validity_limit_value() -> None:
    # ln(1e4 / (16 ln(2e6))) = ln(10000 / (16 * 14.508657738524219))
    #                        = ln(43.0779...) = 3.76300609...
    assert closed_form_validity_limit(10_000, 1e-6) == pytest.approx(3.763006093078982, rel=1e-14)
    assert closed_form_validity_limit(1e4, 1e-6) == closed_form_validity_limit(10_000, 1e-6)


def test_closed_form_outside_validity_raises_naming_eps0() -> None:
    limit = closed_form_validity_limit(10_000, 1e-6)
    shuffle_amplification(limit, 10_000, 1e-6, CF)  # the boundary itself is allowed
    with pytest.raises(ValueError, match=r"`local_epsilon`.*ln\(n / \(16 ln\(2/delta\)\)\)"):
        shuffle_amplification(limit + 1e-9, 10_000, 1e-6, CF)
    with pytest.raises(ValueError, match=r"`local_epsilon`.*numerical"):
        shuffle_amplification(4.0, 10_000, 1e-6, CF)
    # n <= 16 ln(2/delta) (= 232.1 at delta = 1e-6): no eps0 at all qualifies.
    assert closed_form_validity_limit(232, 1e-6) < 0.0
    with pytest.raises(ValueError, match=r"`local_epsilon`.*no eps0 > 0 qualifies"):
        shuffle_amplification(0.01, 232, 1e-6, CF)
    # The numerical bound has no such condition.
    assert 0.0 < shuffle_amplification(4.0, 10_000, 1e-6, NUM) < 4.0
    assert 0.0 < shuffle_amplification(0.01, 232, 1e-6, NUM) <= 0.01


# ------------------------------------------------------ the issue's magnitudes


def test_issue_magnitudes_n1e4_eps1_delta1e6() -> None:
    num = shuffle_amplification(1.0, 10_000, 1e-6, NUM)
    cf = shuffle_amplification(1.0, 10_000, 1e-6, CF)
    assert 0.04 <= num <= 0.07
    assert 0.2 <= cf <= 0.23
    # Pinned: 0.0530053164... (brute force below agrees) and 0.2140256519...
    assert num == pytest.approx(0.05300531648, rel=1e-8)
    assert cf == pytest.approx(0.21402565193083783, rel=1e-13)


def test_fmt_published_example() -> None:
    # FMT's reference implementation (apple/ml-shuffling-amplification README):
    # shuffling 1e5 4-DP reports is (eps, 1e-6)-DP for eps between 0.16754 and 0.17279.
    eps = shuffle_amplification(4.0, 100_000, 1e-6, NUM)
    assert 0.16754 <= eps <= 0.17279
    assert eps == pytest.approx(0.16976974727, rel=1e-8)


# ------------------------------------------------- numerical vs brute force


def brute_force_delta(eps: float, eps0: float, n: int) -> float:
    """max over both directions of sup_S P(S) - e^eps Q(S), full support, no truncation.

    The FMT Thm 3.2 pair: C ~ Bin(n-1, e^-eps0), A ~ Bin(C, 1/2),
    Delta ~ Bern(e^eps0/(e^eps0+1)); P = (A+Delta, C-A+1-Delta),
    Q = (A+1-Delta, C-A+Delta). Both coordinates are enumerated.
    """
    alpha = math.exp(eps0) / (math.exp(eps0) + 1.0)
    p_clone = math.exp(-eps0)
    c = np.arange(n)[:, None]  # rows: C = c
    x = np.arange(n + 1)[None, :]  # first coordinate; the second is c + 1 - x
    weight = stats.binom.pmf(c, n - 1, p_clone)
    b_x = stats.binom.pmf(x, c, 0.5)
    b_xm1 = stats.binom.pmf(x - 1, c, 0.5)
    joint_p = weight * (alpha * b_xm1 + (1 - alpha) * b_x)
    joint_q = weight * (alpha * b_x + (1 - alpha) * b_xm1)
    assert joint_p.sum() == pytest.approx(1.0, abs=1e-12)
    gamma = math.exp(eps)
    forward = np.maximum(joint_p - gamma * joint_q, 0.0).sum()
    backward = np.maximum(joint_q - gamma * joint_p, 0.0).sum()
    return float(max(forward, backward))


@pytest.mark.parametrize(
    ("eps0", "n", "delta"),
    [
        (1.0, 300, 1e-6),
        (0.5, 400, 1e-4),
        (2.0, 200, 1e-3),
        (3.0, 100, 1e-2),
        (1.0, 1, 1e-6),
        (0.2, 5, 0.01),
        (5.0, 50, 1e-6),
    ],
)
def test_numerical_matches_brute_force(eps0: float, n: int, delta: float) -> None:
    eps = shuffle_amplification(eps0, n, delta, NUM)
    assert 0.0 < eps <= eps0
    # Valid: the reduced pair is (eps, delta)-indistinguishable...
    assert brute_force_delta(eps, eps0, n) <= delta * (1.0 + 1e-9)
    # ...and tight: a slightly smaller eps is not.
    assert brute_force_delta(eps * (1.0 - 1e-6), eps0, n) > delta


def test_single_report_is_exact_conversion() -> None:
    # n = 1: C = 0, and the pair is randomized response Bern(alpha) vs
    # Bern(1-alpha). delta(eps) = (e^eps0 - e^eps)/(e^eps0 + 1), so
    # eps = ln(e^eps0 - delta (e^eps0 + 1)). For eps0 = 1, delta = 1e-6:
    # ln(2.718281828459045 - 3.718281828459045e-6) = 0.99999863211963...
    expected = math.log(math.e - 1e-6 * (math.e + 1.0))
    assert shuffle_amplification(1.0, 1, 1e-6, NUM) == pytest.approx(expected, rel=1e-9)


def test_zero_when_total_variation_below_delta() -> None:
    # eps0 = 1e-6: TV(P, Q) <= 2 alpha - 1 = tanh(eps0/2) ~ 5e-7 <= delta = 1e-6.
    assert shuffle_amplification(1e-6, 10_000, 1e-6, NUM) == 0.0


# --------------------------------------------------- numerical <= closed form


@pytest.mark.parametrize("n", [500, 1_000, 10_000, 100_000])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_numerical_at_most_closed_form_where_valid(n: int, delta: float) -> None:
    limit = closed_form_validity_limit(n, delta)
    # The grid is chosen so that the closed form covers some eps0.
    assert limit > 0.0
    for eps0 in np.linspace(limit / 20.0, limit, 12):
        num = shuffle_amplification(float(eps0), n, delta, NUM)
        cf = shuffle_amplification(float(eps0), n, delta, CF)
        assert num <= cf * (1.0 + 1e-12)


# ----------------------------------------------------------------- monotone


@pytest.mark.parametrize("method", [CF, NUM])
def test_monotone_in_eps0(method: str) -> None:
    n, delta = 10_000, 1e-6
    top = closed_form_validity_limit(n, delta) if method == CF else 8.0
    eps0s = np.linspace(0.02, top, 60)
    values = [shuffle_amplification(float(e), n, delta, method) for e in eps0s]
    assert np.all(np.diff(values) > 0.0)
    assert all(v <= e for v, e in zip(values, eps0s, strict=True))


@pytest.mark.parametrize("method", [CF, NUM])
def test_monotone_in_n(method: str) -> None:
    eps0, delta = 1.0, 1e-6
    ns = [1_000, 3_000, 10_000, 30_000, 100_000, 1_000_000]  # cf valid from n = 633
    if method == NUM:
        ns = [300, 500, *ns]
    values = [shuffle_amplification(eps0, n, delta, method) for n in ns]
    assert np.all(np.diff(values) < 0.0)


def test_numerical_monotone_in_n_small_batches() -> None:
    values = [shuffle_amplification(1.0, n, 1e-6, NUM) for n in range(1, 400, 7)]
    assert np.all(np.diff(values) <= 0.0)


@pytest.mark.parametrize("method", [CF, NUM])
def test_smaller_delta_gives_larger_eps(method: str) -> None:
    deltas = [1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12]
    values = [shuffle_amplification(1.0, 100_000, d, method) for d in deltas]
    assert np.all(np.diff(values) > 0.0)


def test_numerical_never_above_eps0_grid() -> None:
    for n in [1, 2, 3, 10, 100, 1_000]:
        for eps0 in [0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 50.0]:
            assert shuffle_amplification(eps0, n, 1e-6, NUM) <= eps0


def test_numerical_large_n_runs() -> None:
    num = shuffle_amplification(1.0, 1_000_000, 1e-6, NUM)
    cf = shuffle_amplification(1.0, 1_000_000, 1e-6, CF)
    assert 0.0 < num < cf
    # sqrt(n) scaling from n = 1e4 (0.0530) to 1e6: roughly a factor 10.
    assert 8.0 < 0.05300531648 / num < 14.0


# ---------------------------------------------------------------- inverses


@pytest.mark.parametrize("method", [CF, NUM])
@pytest.mark.parametrize("n", [1_000, 10_000, 100_000])
@pytest.mark.parametrize("eps", [0.01, 0.05, 0.2])
def test_inverse_round_trip_eps(method: str, n: int, eps: float) -> None:
    eps0 = shuffle_local_epsilon(eps, n, 1e-6, method)
    assert eps0 >= eps
    assert shuffle_amplification(eps0, n, 1e-6, method) == pytest.approx(eps, abs=1e-9)
    # The guarantee actually holds at the returned eps0 (feasible side).
    assert shuffle_amplification(eps0, n, 1e-6, method) <= eps + 1e-12


@pytest.mark.parametrize("method", [CF, NUM])
@pytest.mark.parametrize(("eps0", "n"), [(0.5, 10_000), (1.0, 10_000), (2.0, 100_000)])
def test_inverse_round_trip_eps0(method: str, eps0: float, n: int) -> None:
    eps = shuffle_amplification(eps0, n, 1e-6, method)
    assert shuffle_local_epsilon(eps, n, 1e-6, method) == pytest.approx(eps0, abs=1e-9)


def test_inverse_is_largest_feasible() -> None:
    n, delta, eps = 10_000, 1e-6, 0.1
    for method in (CF, NUM):
        eps0 = shuffle_local_epsilon(eps, n, delta, method)
        assert shuffle_amplification(eps0, n, delta, method) <= eps + 1e-12
        assert shuffle_amplification(eps0 * (1.0 + 1e-7), n, delta, method) > eps


def test_numerical_inverse_allows_more_local_epsilon() -> None:
    for n in [1_000, 10_000, 100_000]:
        for eps in [0.01, 0.1, 0.5]:
            cf = shuffle_local_epsilon(eps, n, 1e-6, CF)
            num = shuffle_local_epsilon(eps, n, 1e-6, NUM)
            assert num >= cf >= eps


def test_closed_form_inverse_small_batch_falls_back_to_no_amplification() -> None:
    # n = 100 < 16 ln(2e6) = 232.1: the closed form certifies nothing, so
    # eps0 = eps (eps-LDP reports are (eps, 0)-DP after shuffling).
    assert shuffle_local_epsilon(0.3, 100, 1e-6, CF) == 0.3
    # The numerical inverse still amplifies.
    assert shuffle_local_epsilon(0.3, 100, 1e-6, NUM) > 0.3


def test_closed_form_inverse_capped_at_validity_limit() -> None:
    # n = 1000, delta = 1e-6: limit = ln(1000/232.14) = 1.46042..., where
    # f = 0.8317 < 1: every eps0 up to the limit is certified, none beyond.
    limit = closed_form_validity_limit(1_000, 1e-6)
    assert shuffle_amplification(limit, 1_000, 1e-6, CF) < 1.0
    assert shuffle_local_epsilon(1.0, 1_000, 1e-6, CF) == limit
    # And when eps exceeds the limit, eps itself (no amplification) is larger.
    assert shuffle_local_epsilon(2.0, 1_000, 1e-6, CF) == 2.0


def test_hanna_alg3_usage_eps0_per_batch() -> None:
    # Alg. 3 line 8: eps0^(i) = f^{-1}_{n_i,delta}(eps), growing with the batch size.
    batches = [500, 2_000, 8_000, 32_000, 128_000]
    for method in (CF, NUM):
        e0 = [shuffle_local_epsilon(0.1, n, 1e-6, method) for n in batches]
        assert np.all(np.diff(e0) > 0.0)
        for n, x in zip(batches, e0, strict=True):
            assert shuffle_amplification(x, n, 1e-6, method) <= 0.1 + 1e-12


# ------------------------------------------------------------ bad arguments


@pytest.mark.parametrize("method", [CF, NUM])
@pytest.mark.parametrize("eps0", [0.0, -1.0, math.nan, math.inf])
def test_bad_eps0(method: str, eps0: float) -> None:
    with pytest.raises(ValueError, match="`local_epsilon`"):
        shuffle_amplification(eps0, 10_000, 1e-6, method)


@pytest.mark.parametrize("method", [CF, NUM])
@pytest.mark.parametrize("eps", [0.0, -0.5, math.nan, math.inf])
def test_bad_eps(method: str, eps: float) -> None:
    with pytest.raises(ValueError, match="`epsilon`"):
        shuffle_local_epsilon(eps, 10_000, 1e-6, method)


@pytest.mark.parametrize("method", [CF, NUM])
@pytest.mark.parametrize("n", [0, -5])
def test_bad_n(method: str, n: int) -> None:
    with pytest.raises(ValueError, match="`n`"):
        shuffle_amplification(1.0, n, 1e-6, method)
    with pytest.raises(ValueError, match="`n`"):
        shuffle_local_epsilon(0.1, n, 1e-6, method)
    with pytest.raises(ValueError, match="`n`"):
        closed_form_validity_limit(n, 1e-6)


def test_non_integer_n_is_rejected() -> None:
    with pytest.raises(TypeError, match="`n`"):
        shuffle_amplification(1.0, 100.5, 1e-6)


@pytest.mark.parametrize("method", [CF, NUM])
@pytest.mark.parametrize("delta", [0.0, 1.0, 1.5, -1e-6, math.nan])
def test_bad_delta(method: str, delta: float) -> None:
    with pytest.raises(ValueError, match="`delta`"):
        shuffle_amplification(1.0, 10_000, delta, method)
    with pytest.raises(ValueError, match="`delta`"):
        shuffle_local_epsilon(0.1, 10_000, delta, method)


def test_bad_method() -> None:
    with pytest.raises(ValueError, match="`method`"):
        shuffle_amplification(1.0, 10_000, 1e-6, method="exact")
    with pytest.raises(ValueError, match="`method`"):
        shuffle_local_epsilon(0.1, 10_000, 1e-6, method="closed_form")


# ------------------------------------------------------------- extremes


def test_extreme_arguments_do_not_crash() -> None:
    assert shuffle_amplification(800.0, 100_000, 1e-6, NUM) == 800.0  # trivial bound
    assert 699.99 < shuffle_amplification(700.0, 100_000, 1e-6, NUM) <= 700.0
    assert 0.0 < shuffle_amplification(1.0, 10_000, 1e-300, NUM) < 1.0
    assert shuffle_amplification(1.0, 10_000, 0.999999, NUM) == 0.0
    assert shuffle_local_epsilon(800.0, 1_000, 1e-6, NUM) == 800.0
    assert 0.0 < shuffle_amplification(3.0, 10**7, 1e-6, NUM) < 0.01
