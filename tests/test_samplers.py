"""The samplers of ``dpbandits.mechanisms`` draw from the laws they name.

Statistical rules of the project: every seed is fixed, and every threshold is
derived from the distribution and the sample size, never tuned:

- Kolmogorov-Smirnov tests pass at p > ALPHA = 1e-3 (Bonferroni-corrected when
  one test makes several comparisons), and each family has a power control
  showing that the same test at the same sample size rejects a slightly wrong
  law, so the check can fail;
- a sample mean lies within Z * sd / sqrt(n) of its expectation, Z = 5
  (two-sided normal tail 5.7e-7);
- a sample variance s^2 lies within Z * sqrt((mu4 - sigma^4) / n) of sigma^2,
  mu4 the fourth central moment (exact where known, else estimated);
- an empirical tail frequency lies within Z binomial standard deviations.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats

from dpbandits import mechanisms as mech
from dpbandits.errors import NotPositiveDefiniteError

ALPHA = 1e-3
Z = 5.0

# A non-identity, non-diagonal SPD scale matrix (eigenvalues 0.68, 1.56, 2.26).
S3 = np.array([[2.0, 0.5, -0.3], [0.5, 1.0, 0.2], [-0.3, 0.2, 1.5]])

# ---------------------------------------------------------------- helpers


def assert_mean(x: np.ndarray, mean: float, var: float, what: str = "") -> None:
    """Sample mean within Z standard errors of ``mean`` (``var`` = Var of one draw)."""
    n = x.size
    tol = Z * math.sqrt(var / n)
    assert abs(float(np.mean(x)) - mean) <= tol, f"{what} mean {np.mean(x)} want {mean} +- {tol}"


def assert_variance(x: np.ndarray, var: float, mu4: float | None = None, what: str = "") -> None:
    """Unbiased sample variance within Z sd of ``var``; sd^2 = (mu4 - var^2) / n.

    ``mu4`` is the fourth central moment; when it is not known in closed form
    it is estimated from the sample (consistent, so the bound is asymptotically
    exact).
    """
    n = x.size
    if mu4 is None:
        mu4 = float(np.mean((x - np.mean(x)) ** 4))
    tol = Z * math.sqrt((mu4 - var**2) / n)
    got = float(np.var(x, ddof=1))
    assert abs(got - var) <= tol, f"{what} variance {got} want {var} +- {tol}"


def assert_tail(x: np.ndarray, threshold: float, prob: float, what: str = "") -> None:
    """The count of |x| > threshold is within Z binomial sd of n * prob."""
    n = x.size
    count = int(np.count_nonzero(np.abs(x) > threshold))
    tol = Z * math.sqrt(n * prob * (1 - prob))
    assert abs(count - n * prob) <= tol, (
        f"{what} P(|X| > {threshold}): {count} of {n}, want {n * prob} +- {tol}"
    )


def ks_p(x: np.ndarray, cdf) -> float:
    return float(stats.kstest(x, cdf).pvalue)


# ---------------------------------------------------------------- Laplace

N_SCALAR = 200_000


@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_laplace_matches_scipy_laplace(scale: float) -> None:
    x = mech.laplace(scale, size=N_SCALAR, seed=101)
    assert x.shape == (N_SCALAR,)
    assert x.dtype == np.float64
    assert np.all(np.isfinite(x))
    assert ks_p(x, stats.laplace(0.0, scale).cdf) > ALPHA


def test_laplace_ks_has_power_against_a_five_percent_scale_error() -> None:
    x = mech.laplace(1.0, size=N_SCALAR, seed=101)
    assert ks_p(x, stats.laplace(0.0, 1.05).cdf) < ALPHA


@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_laplace_mean_zero_variance_two_b_squared(scale: float) -> None:
    # Laplace(0, b): Var = 2 b^2, fourth central moment 24 b^4.
    x = mech.laplace(scale, size=N_SCALAR, seed=102)
    var = 2 * scale**2
    assert_mean(x, 0.0, var)
    assert_variance(x, var, mu4=24 * scale**4)


def test_laplace_tails_are_exponential() -> None:
    # P(|X| > k b) = exp(-k); k = 10 still expects ~45 of 1e6 draws.
    b = 1.7
    x = mech.laplace(b, size=1_000_000, seed=103)
    for k in (1, 3, 6, 10):
        assert_tail(x, k * b, math.exp(-k), what=f"k={k}")
    # Symmetry: the count of positive draws is Binomial(n, 1/2).
    pos = int(np.count_nonzero(x > 0))
    assert abs(pos - x.size / 2) <= Z * math.sqrt(x.size / 4)


def test_laplace_scalar_and_shaped_output() -> None:
    v = mech.laplace(1.0, seed=1)
    assert isinstance(v, float) and math.isfinite(v)
    assert mech.laplace(1.0, size=(2, 3), seed=1).shape == (2, 3)
    assert mech.laplace(1.0, size=0, seed=1).shape == (0,)
    assert mech.laplace(1.0, size=np.int64(4), seed=1).shape == (4,)


# ---------------------------------------------------------------- Gaussian


@pytest.mark.parametrize("sigma", [0.5, 3.0])
def test_gaussian_matches_scipy_norm(sigma: float) -> None:
    x = mech.gaussian(sigma, size=N_SCALAR, seed=201)
    assert x.shape == (N_SCALAR,)
    assert np.all(np.isfinite(x))
    assert ks_p(x, stats.norm(0.0, sigma).cdf) > ALPHA


def test_gaussian_ks_has_power_against_a_five_percent_sigma_error() -> None:
    x = mech.gaussian(1.0, size=N_SCALAR, seed=201)
    assert ks_p(x, stats.norm(0.0, 1.05).cdf) < ALPHA


@pytest.mark.parametrize("sigma", [0.5, 3.0])
def test_gaussian_mean_zero_variance_sigma_squared(sigma: float) -> None:
    # N(0, s^2): fourth central moment 3 s^4.
    x = mech.gaussian(sigma, size=N_SCALAR, seed=202)
    assert_mean(x, 0.0, sigma**2)
    assert_variance(x, sigma**2, mu4=3 * sigma**4)


def test_gaussian_tails_match_the_normal_law() -> None:
    # The Ziggurat's tail branch is rare; KS cannot see it, tail counts can.
    # 2 P(Z > 4) = 6.3e-5: ~63 of 1e6 draws.
    sigma = 1.3
    x = mech.gaussian(sigma, size=1_000_000, seed=203)
    for k in (1, 2, 3, 4):
        assert_tail(x, k * sigma, 2 * stats.norm.sf(k), what=f"k={k}")
    pos = int(np.count_nonzero(x > 0))
    assert abs(pos - x.size / 2) <= Z * math.sqrt(x.size / 4)


def test_gaussian_scalar_and_shaped_output() -> None:
    v = mech.gaussian(1.0, seed=1)
    assert isinstance(v, float) and math.isfinite(v)
    assert mech.gaussian(1.0, size=[3, 2], seed=1).shape == (3, 2)


# ------------------------------------------------------ symmetric Gaussian

P_SYM = 4
N_SYM = 40_000


def _upper(w: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The p(p+1)/2 entries on and above the diagonal, one column each."""
    p = w.shape[-1]
    idx = [(i, j) for i in range(p) for j in range(i, p)]
    return np.stack([w[:, i, j] for i, j in idx], axis=1), idx


def test_symmetric_gaussian_is_exactly_symmetric() -> None:
    w = mech.symmetric_gaussian(1.0, P_SYM, size=2000, seed=301)
    assert w.shape == (2000, P_SYM, P_SYM)
    assert np.array_equal(w, np.swapaxes(w, 1, 2))
    single = mech.symmetric_gaussian(1.0, 5, seed=301)
    assert single.shape == (5, 5)
    assert np.array_equal(single, single.T)


def test_symmetric_gaussian_entries_match_the_paper_variances() -> None:
    # Shariff & Sheffet §4.2, footnote 4: (Z + Z^T)/sqrt(2) has off-diagonal
    # entries N(0, s^2) and diagonal entries N(0, 2 s^2). Each of the 10
    # upper-triangle positions is tested on its own (Bonferroni over 10).
    sigma = 1.5
    w = mech.symmetric_gaussian(sigma, P_SYM, size=N_SYM, seed=302)
    cols, idx = _upper(w)
    level = ALPHA / len(idx)
    for col, (i, j) in zip(cols.T, idx, strict=True):
        var = (2.0 if i == j else 1.0) * sigma**2
        assert ks_p(col, stats.norm(0.0, math.sqrt(var)).cdf) > level, (i, j)
        assert_mean(col, 0.0, var, what=f"({i},{j})")
        assert_variance(col, var, mu4=3 * var**2, what=f"({i},{j})")


def test_symmetric_gaussian_ks_has_power_against_swapped_variances() -> None:
    # If the diagonal had the off-diagonal variance, the test above would see it.
    w = mech.symmetric_gaussian(1.0, P_SYM, size=N_SYM, seed=302)
    assert ks_p(w[:, 0, 0], stats.norm(0.0, 1.0).cdf) < ALPHA
    assert ks_p(w[:, 0, 1], stats.norm(0.0, math.sqrt(2.0)).cdf) < ALPHA


def test_symmetric_gaussian_distinct_upper_entries_are_uncorrelated() -> None:
    # Under independence sqrt(n) r -> N(0, 1) for every pair; with 45 pairs
    # and two statistics (entries and their squares, the latter catching a
    # shared scale), Bonferroni gives the bound z / sqrt(n) below.
    w = mech.symmetric_gaussian(1.0, P_SYM, size=N_SYM, seed=303)
    cols, idx = _upper(w)
    q = len(idx)
    pairs = q * (q - 1) // 2
    z = stats.norm.isf(ALPHA / (2 * 2 * pairs))
    bound = z / math.sqrt(N_SYM)
    off = ~np.eye(q, dtype=bool)
    for stat in (cols, cols**2):
        r = np.corrcoef(stat, rowvar=False)
        worst = float(np.max(np.abs(r[off])))
        assert worst <= bound, f"max |correlation| {worst} > {bound}"


def test_symmetric_gaussian_correlation_bound_has_power() -> None:
    # A matrix whose (0,1) entry copied half of the (0,0) draw would be caught.
    w = mech.symmetric_gaussian(1.0, P_SYM, size=N_SYM, seed=303)
    leaked = w[:, 0, 1] + 0.05 * w[:, 0, 0]
    q = P_SYM * (P_SYM + 1) // 2
    z = stats.norm.isf(ALPHA / (2 * 2 * q * (q - 1) // 2))
    assert abs(np.corrcoef(leaked, w[:, 0, 0])[0, 1]) > z / math.sqrt(N_SYM)


def test_symmetric_gaussian_one_by_one() -> None:
    w = mech.symmetric_gaussian(1.0, 1, size=N_SYM, seed=304)
    assert w.shape == (N_SYM, 1, 1)
    assert ks_p(w[:, 0, 0], stats.norm(0.0, math.sqrt(2.0)).cdf) > ALPHA


# ---------------------------------------------------------------- Wishart

N_WISHART = 20_000


def _quadratic_forms() -> list[np.ndarray]:
    return [np.eye(3)[0], np.eye(3)[1], np.eye(3)[2], np.array([1.0, -1.0, 0.0]), np.ones(3)]


@pytest.mark.parametrize("k", [7.5, 40.0])
def test_wishart_mean_is_k_times_scale(k: float) -> None:
    # E[W] = k S; Var(W_ij) = k (S_ij^2 + S_ii S_jj).
    w = mech.wishart(S3, k, size=N_WISHART, seed=401)
    assert w.shape == (N_WISHART, 3, 3)
    assert np.array_equal(w, np.swapaxes(w, 1, 2))
    for i in range(3):
        for j in range(i, 3):
            var = k * (S3[i, j] ** 2 + S3[i, i] * S3[j, j])
            assert_mean(w[:, i, j], k * S3[i, j], var, what=f"({i},{j})")


@pytest.mark.parametrize("k", [7.5, 40.0])
def test_wishart_entry_variances(k: float) -> None:
    w = mech.wishart(S3, k, size=N_WISHART, seed=402)
    for i in range(3):
        for j in range(i, 3):
            var = k * (S3[i, j] ** 2 + S3[i, i] * S3[j, j])
            if i == j:
                # W_ii = S_ii chi^2_k: fourth central moment 12 k (k + 4) S_ii^4.
                mu4 = 12 * k * (k + 4) * S3[i, i] ** 4
            else:
                mu4 = None
            assert_variance(w[:, i, j], var, mu4=mu4, what=f"({i},{j})")


@pytest.mark.parametrize("k", [2.5, 4.0, 7.5])
def test_wishart_quadratic_forms_are_chi_square_k(k: float) -> None:
    # a^T W a / a^T S a ~ chi^2_k for every fixed a != 0 (a = e_0 is
    # W_00 / S_00). k = 2.5 is just above p - 1 = 2, where the last Bartlett
    # chi-square has 0.5 degrees of freedom. Bonferroni over 5 directions.
    w = mech.wishart(S3, k, size=N_WISHART, seed=403)
    forms = _quadratic_forms()
    for a in forms:
        ratio = np.einsum("i,nij,j->n", a, w, a) / (a @ S3 @ a)
        assert ks_p(ratio, stats.chi2(k).cdf) > ALPHA / len(forms), (k, a)


def test_wishart_chi_square_check_has_power() -> None:
    # Half a degree of freedom off on one Bartlett diagonal shows up.
    w = mech.wishart(S3, 4.0, size=N_WISHART, seed=403)
    ratio = w[:, 0, 0] / S3[0, 0]
    assert ks_p(ratio, stats.chi2(4.5).cdf) < ALPHA


@pytest.mark.parametrize("k", [4.0, 7.5])
def test_wishart_agrees_with_scipy_wishart(k: float) -> None:
    # Two-sample KS against scipy.stats.wishart on statistics that mix the
    # entries: trace, an off-diagonal entry, log det (Bartlett: a product of
    # chi-squares, sensitive to every diagonal's degrees of freedom), and the
    # smallest eigenvalue. Bonferroni over 4.
    ours = mech.wishart(S3, k, size=N_WISHART, seed=404)
    ref = stats.wishart(df=k, scale=S3).rvs(size=N_WISHART, random_state=np.random.default_rng(404))
    statistics = [
        lambda w: np.trace(w, axis1=1, axis2=2),
        lambda w: w[:, 0, 2],
        lambda w: np.linalg.slogdet(w)[1],
        lambda w: np.linalg.eigvalsh(w)[:, 0],
    ]
    for f in statistics:
        assert stats.ks_2samp(f(ours), f(ref)).pvalue > ALPHA / len(statistics)


def test_wishart_one_by_one_is_scaled_chi_square() -> None:
    w = mech.wishart([[2.5]], 3.3, size=N_WISHART, seed=405)
    assert w.shape == (N_WISHART, 1, 1)
    assert ks_p(w[:, 0, 0] / 2.5, stats.chi2(3.3).cdf) > ALPHA


@pytest.mark.parametrize("k", [1e5, 1e6])
def test_wishart_large_degrees_of_freedom(k: float) -> None:
    # Shariff & Sheffet §4.1 uses k ~ 1e5-1e6. Bartlett costs O(p^3) per draw
    # whatever k is: summing k outer products would make these 20 000 draws
    # take 1e10-1e11 operations (see benches/samplers.rs for timings).
    w = mech.wishart(S3, k, size=N_WISHART, seed=406)
    assert np.all(np.isfinite(w))
    scaled = w / k
    for i in range(3):
        for j in range(i, 3):
            var = (S3[i, j] ** 2 + S3[i, i] * S3[j, j]) / k
            assert_mean(scaled[:, i, j], S3[i, j], var, what=f"k={k} ({i},{j})")
    # W_00 / (k S_00) has variance 2 / k, fourth central moment 12 (k + 4) / k^3.
    assert_variance(scaled[:, 0, 0] / S3[0, 0], 2 / k, mu4=12 * (k + 4) / k**3)
    assert np.all(np.linalg.eigvalsh(w) > 0)


def test_wishart_single_draw_shape() -> None:
    w = mech.wishart(S3, 5.0, seed=1)
    assert w.shape == (3, 3)
    assert np.array_equal(w, w.T)
    assert np.all(np.linalg.eigvalsh(w) > 0)


@pytest.mark.parametrize("df", [2.0, 1.5, 1.0, 0.5])
def test_wishart_rejects_df_at_most_p_minus_one(df: float) -> None:
    with pytest.raises(ValueError, match="`df`"):
        mech.wishart(S3, df, seed=1)


@pytest.mark.parametrize("df", [0.0, -1.0, math.nan, math.inf, -math.inf])
def test_wishart_rejects_nonpositive_or_nonfinite_df(df: float) -> None:
    with pytest.raises(ValueError, match="`df`"):
        mech.wishart(S3, df, seed=1)


@pytest.mark.parametrize(
    "scale",
    [
        pytest.param(np.array([[1.0, 2.0], [2.0, 1.0]]), id="indefinite"),
        pytest.param(np.array([[1.0, 1.0], [1.0, 1.0]]), id="singular"),
        pytest.param(-np.eye(3), id="negative-definite"),
        pytest.param(np.zeros((2, 2)), id="zero"),
    ],
)
def test_wishart_rejects_non_positive_definite_scale(scale: np.ndarray) -> None:
    with pytest.raises(NotPositiveDefiniteError, match="`scale`"):
        mech.wishart(scale, 5.0, seed=1)


@pytest.mark.parametrize(
    "scale",
    [
        pytest.param(np.array([[2.0, 0.5], [0.4, 1.0]]), id="non-symmetric"),
        pytest.param(np.ones((2, 3)), id="non-square"),
        pytest.param(np.ones(3), id="vector"),
        pytest.param(np.ones((2, 2, 2)), id="3-d"),
        pytest.param(np.zeros((0, 0)), id="empty"),
        pytest.param(np.array([[1.0, np.nan], [np.nan, 1.0]]), id="nan"),
        pytest.param(np.array([[np.inf, 0.0], [0.0, 1.0]]), id="inf"),
    ],
)
def test_wishart_rejects_malformed_scale(scale: np.ndarray) -> None:
    with pytest.raises(ValueError, match="`scale`"):
        mech.wishart(scale, 5.0, seed=1)


# ---------------------------------------------------------- reproducibility

SAMPLERS = {
    "laplace": lambda seed: mech.laplace(1.0, size=1000, seed=seed),
    "gaussian": lambda seed: mech.gaussian(1.0, size=1000, seed=seed),
    "symmetric_gaussian": lambda seed: mech.symmetric_gaussian(1.0, 4, size=100, seed=seed),
    "wishart": lambda seed: mech.wishart(S3, 6.0, size=100, seed=seed),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_same_seed_same_draws(name: str) -> None:
    draw = SAMPLERS[name]
    for seed in (0, 1, 12345, 2**64 - 1):
        assert np.array_equal(draw(seed), draw(seed))


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_different_seeds_different_draws(name: str) -> None:
    draw = SAMPLERS[name]
    seeds = (0, 1, 2, 2**63, 2**64 - 1)
    outs = [draw(s) for s in seeds]
    for a in range(len(seeds)):
        for b in range(a + 1, len(seeds)):
            assert not np.array_equal(outs[a], outs[b]), (seeds[a], seeds[b])


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_seed_none_draws_from_entropy(name: str) -> None:
    draw = SAMPLERS[name]
    a, b = draw(None), draw(None)
    assert a.shape == draw(0).shape
    assert np.all(np.isfinite(a))
    assert not np.array_equal(a, b)
    assert not np.array_equal(a, draw(0))


# ------------------------------------------------------------- bad inputs

NONPOSITIVE = [0.0, -1.0, -0.0, math.nan, math.inf, -math.inf]
NOT_REALS = [True, False, "1.0", None, [1.0], 1 + 0j]


def _raises_naming(call, exc, name: str) -> None:
    with pytest.raises(exc) as info:
        call()
    assert f"`{name}`" in str(info.value), f"message does not name `{name}`: {info.value}"


@pytest.mark.parametrize("bad", NONPOSITIVE)
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("scale", lambda v: mech.laplace(v, size=3, seed=0)),
        ("sigma", lambda v: mech.gaussian(v, size=3, seed=0)),
        ("sigma", lambda v: mech.symmetric_gaussian(v, 3, seed=0)),
        ("df", lambda v: mech.wishart(np.eye(2), v, seed=0)),
    ],
)
def test_nonpositive_parameter_is_a_value_error(name, call, bad) -> None:
    _raises_naming(lambda: call(bad), ValueError, name)


@pytest.mark.parametrize("bad", NOT_REALS)
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("scale", lambda v: mech.laplace(v, size=3, seed=0)),
        ("sigma", lambda v: mech.gaussian(v, size=3, seed=0)),
        ("sigma", lambda v: mech.symmetric_gaussian(v, 3, seed=0)),
        ("df", lambda v: mech.wishart(np.eye(2), v, seed=0)),
    ],
)
def test_non_real_parameter_is_a_type_error(name, call, bad) -> None:
    _raises_naming(lambda: call(bad), TypeError, name)


SIZED = [
    lambda size, seed: mech.laplace(1.0, size=size, seed=seed),
    lambda size, seed: mech.gaussian(1.0, size=size, seed=seed),
    lambda size, seed: mech.symmetric_gaussian(1.0, 2, size=size, seed=seed),
    lambda size, seed: mech.wishart(np.eye(2), 3.0, size=size, seed=seed),
]


@pytest.mark.parametrize("call", SIZED)
@pytest.mark.parametrize(
    ("size", "exc"),
    [
        (-1, ValueError),
        ((2, -1), ValueError),
        (2**64, ValueError),
        (2.5, TypeError),
        ("3", TypeError),
    ],
)
def test_bad_size(call, size, exc) -> None:
    _raises_naming(lambda: call(size, 0), exc, "size")


@pytest.mark.parametrize("call", SIZED)
@pytest.mark.parametrize(
    ("seed", "exc"), [(-1, ValueError), (2**64, ValueError), (1.5, TypeError), ("7", TypeError)]
)
def test_bad_seed(call, seed, exc) -> None:
    _raises_naming(lambda: call(3, seed), exc, "seed")


@pytest.mark.parametrize(
    ("p", "exc"), [(0, ValueError), (-2, ValueError), (2.5, TypeError), ("3", TypeError)]
)
def test_bad_matrix_side(p, exc) -> None:
    _raises_naming(lambda: mech.symmetric_gaussian(1.0, p, seed=0), exc, "p")


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("size", lambda: mech.laplace(1.0, size=True, seed=0)),
        ("size", lambda: mech.wishart(np.eye(2), 3.0, size=(2, False), seed=0)),
        ("seed", lambda: mech.gaussian(1.0, size=3, seed=True)),
        ("p", lambda: mech.symmetric_gaussian(1.0, True, seed=0)),
    ],
)
def test_bool_for_an_integer_argument_is_a_type_error(name, call) -> None:
    _raises_naming(call, TypeError, name)


@pytest.mark.parametrize("scale", ["abc", [["a", "b"], ["c", "d"]], {"a": 1}])
def test_non_numeric_scale_matrix_is_rejected_naming_scale(scale) -> None:
    _raises_naming(lambda: mech.wishart(scale, 5.0, seed=0), (TypeError, ValueError), "scale")


def _run_isolated(body: str) -> subprocess.CompletedProcess[str]:
    """Runs ``body`` in a fresh interpreter: an abort must not take pytest down."""
    header = "import numpy as np\nfrom dpbandits import mechanisms as mech\n"
    script = header + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


def test_sizes_that_overflow_are_a_value_error_not_a_panic() -> None:
    # p * p * count overflowed u64 in Rust and panicked before the fix.
    proc = _run_isolated(
        """
        cases = [
            lambda: mech.symmetric_gaussian(1.0, 2**32, seed=0),
            lambda: mech.symmetric_gaussian(1.0, 2**31, size=2**32, seed=0),
            lambda: mech.laplace(1.0, size=(2**40, 2**40), seed=0),
            lambda: mech.wishart(np.eye(2), 3.0, size=2**62, seed=0),
        ]
        for case in cases:
            try:
                case()
            except ValueError as e:
                assert "`p`" in str(e) or "`size`" in str(e), e
            else:
                raise SystemExit("accepted")
        print("survived")
        """
    )
    assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-2000:]


def test_an_impossible_allocation_raises_instead_of_aborting() -> None:
    # 8e15 bytes exceeds the 47-bit address space, so it fails on any machine.
    proc = _run_isolated(
        """
        for call in (mech.laplace, mech.gaussian):
            try:
                call(1.0, size=10**15, seed=0)
            except (MemoryError, ValueError):
                pass
        print("survived")
        """
    )
    assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-500:]
