"""Noise scales and confidence constants of LinUCB in the local and shuffle models.

Sources and what could be read of them. The ``search`` tool reaches the
abstracts and introductions of
- Zheng, Cai, Huang, Li & Wang, NeurIPS 2020, "Locally Differentially
  Private (Contextual) Bandits Learning" (arXiv 2006.00701; the issue's
  author list "Zheng, Cheng, Hu, Zhan, Xie & Chen" is not the paper's):
  each user privatizes its own statistics with Gaussian noise, regret
  O~(T^{3/4} / epsilon) under (epsilon, delta)-LDP (abstract; Sec. 5);
- Chowdhury & Zhou, ICML 2022, "Shuffle Private Linear Contextual Bandits"
  (arXiv 2202.05567): batched LinUCB whose batches pass a shuffle protocol,
  instantiated by (i) privacy amplification of a local randomizer and (ii)
  a protocol for summing vectors and matrices of bounded norm; regret
  O~(T^{3/5}) for unique users (abstract; Sec. 1).
The algorithm boxes, theorem statements and constants of both papers were
NOT reachable. What is implemented here is therefore written from first
principles around the structure the abstracts state, and each guarantee is
verified in this package rather than taken from the papers:
- the local randomizer's (epsilon, delta) by the analytic Gaussian
  mechanism (Balle & Wang 2018) on the sensitivity of Eq. (LT2), exactly;
- the vector-sum protocol's guarantee by composition of the CJMP21 scalar
  protocol over the report's coordinates (Eq. (LT5)), checked by the exact
  advanced-composition formula; the scalar protocol itself is checked
  exactly in ``tests/test_elimination_shuffle_sum.py``;
- both randomizers by statistical audits (``tests/test_linucb_trust.py``).

Equations (numbered here, "LT"):

(LT1) report of user t: z_t = (upper triangle of x_t x_t^T row by row,
      y_t x_t), m = d(d+1)/2 + d coordinates.
(LT2) L2 sensitivity (any two inputs with ||x|| <= L, |y| <= B):
      Delta_2^2 = 2 L^4 + 2 B^2 L^2 + max_{0 <= c <= L^2} (2 B^2 c - 2 c^2)
               = 2 L^4 + 2 B^2 L^2 + B^4 / 2   if B^2 <= 2 L^2,
               = 4 B^2 L^2                      otherwise
      (||x x^T - x' x'^T||_F^2 + ||y x - y' x'||^2 with c = |<x, x'>|; the
      upper triangle has at most the Frobenius norm).
(LT3) L1 sensitivity: Delta_1 = 2 sup ||z||_1 = (d + 1) L^2 + 2 sqrt(d) B L
      (||upper(x x^T)||_1 = (||x||^2 + ||x||_1^2) / 2 <= (d + 1) L^2 / 2).
(LT4) coordinate range: |z_c| <= max(L^2, B L) = c_z.
(LT5) vector sum: each of the m coordinates is one run of CJMP21's scalar
      protocol with (epsilon_0, delta_0); one user changes all m runs, so
      by advanced composition (Dwork & Roth Thm 3.20) with delta' = delta/2
      and delta_0 = delta / (2m) the batch is (epsilon, delta)-DP when
      sqrt(2 m ln(2/delta)) eps_0 + m eps_0 (e^eps_0 - 1) <= epsilon, or
      (basic composition) m eps_0 <= epsilon.
      "paper": eps_0 = epsilon / (2 sqrt(2 m ln(2/delta))) (the first term
      at half the budget); "tight": the largest eps_0 meeting the better of
      the two compositions (bisection).
(LT6) regularizer bounds for k released noisy terms, each coordinate's
      noise sigma_k-subgaussian: Upsilon_k = sigma (4 sqrt(d) + 2 ln(2T/alpha))
      sqrt(k) bounds ||N_k|| (the form of Shariff & Sheffet Prop. 11);
      V = G + N + (lambda + 2 Upsilon_k) I, so rho_min = lambda + Upsilon_k,
      rho_max = lambda + 3 Upsilon_k; ||h_k|| <= sigma (sqrt(d) +
      sqrt(2 ln(2T/alpha))) sqrt(k) and gamma_k = that / sqrt(rho_min);
      beta of Shariff & Sheffet Prop. 4 with these bounds.
(LT8) exact blanket-bit count ("tight" vector sum): the analyzer sees, per
      coordinate, R + Binomial(N, p) with R the users' rounded values; one
      user moves R by at most g, so each coordinate is the binomial
      mechanism with integer sensitivity g, whose exact delta(eps_0) is a
      difference of binomial tails (the likelihood ratio of Binomial(N, p)
      and its shift is monotone): :func:`binomial_shift_delta`. "tight"
      takes the smallest blanket-bit constant c_b (p ~ 1/2) with
      delta(eps_0) <= delta_0 at the actual batch size, instead of CJMP21
      Lemma 3.1's c_b = 180 ln(2/delta_0) / eps_0^2 (loose by a factor of
      about 40 in variance at eps_0 ~ 0.08, delta_0 = 0.0025).
(LT7) shuffle batch size: B = ceil(T^{3/5}) (M = T / B batches), the
      balance of the batching cost B against the noise cost sqrt(T)
      M^{1/4} that gives the T^{3/5} rate of the abstract (the paper's
      constants in B were not reachable).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.privacy.analytic_gaussian import gaussian_mu_checked
from dpbandits.privacy.composition import advanced_composition_epsilon
from dpbandits.privacy.discrete_gaussian import lattice_gaussian_calibration_delta_checked
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import (
    LatticeNoise,
    lattice_gaussian,
    lattice_laplace,
)
from dpbandits.privacy.shuffle import shuffle_local_epsilon, shuffle_local_epsilon_checked
from dpbandits.privacy.shuffle_sum import shuffle_sum_parameters

__all__ = [
    "TrustRadiusConstants",
    "amplified_local_epsilon",
    "binomial_shift_delta",
    "classical_gaussian_sigma",
    "coefficients_error_sd",
    "exact_blanket_coefficients",
    "lattice_report_noise",
    "local_gaussian_sigma",
    "local_laplace_scale",
    "report_dimension",
    "report_l1_sensitivity",
    "report_l2_sensitivity",
    "report_range",
    "shuffle_batch_size",
    "trust_guarantee",
    "trust_radius",
    "vector_sum_coordinate_budget",
    "vector_sum_error_sd",
]

LocalCalibration = Literal["tight", "classical"]
VectorCalibration = Literal["tight", "paper"]


def report_dimension(d: int) -> int:
    """m = d(d+1)/2 + d, the coordinates of a report (Eq. (LT1))."""
    d = positive_int("d", d)
    return d * (d + 1) // 2 + d


def report_l2_sensitivity(L: float, B: float) -> float:
    """Delta_2 of Eq. (LT2). ``L``, ``B`` finite > 0. L = B = 1: sqrt(4.5)."""
    L, B = positive("L", L), positive("B_tilde", B)
    c = min(B * B / 2.0, L * L)
    return math.sqrt(2 * L**4 + 2 * B * B * L * L + 2 * B * B * c - 2 * c * c)


def report_l1_sensitivity(d: int, L: float, B: float) -> float:
    """Delta_1 of Eq. (LT3). d = 5, L = B = 1: 6 + 2 sqrt(5)."""
    return _report_l1_sensitivity(positive_int("d", d), positive("L", L), positive("B_tilde", B))


def _report_l1_sensitivity(d: int, L: float, B: float) -> float:
    """:func:`report_l1_sensitivity` of validated arguments."""
    return (d + 1) * L * L + 2.0 * math.sqrt(d) * B * L


def report_range(L: float, B: float) -> float:
    """c_z = max(L^2, B L) of Eq. (LT4)."""
    L, B = positive("L", L), positive("B_tilde", B)
    return max(L * L, B * L)


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Delta sqrt(2 ln(1.25/delta)) / epsilon (Dwork & Roth 2014, Thm A.1,
    valid for epsilon < 1 only: a ValueError names ``epsilon`` otherwise)."""
    eps = positive("epsilon", epsilon)
    if eps >= 1.0:
        raise ValueError(f"invalid argument `epsilon`: calibration='classical' needs epsilon < 1, got {epsilon!r}")
    return positive("sensitivity", sensitivity) * math.sqrt(2.0 * math.log(1.25 / in_open_unit("delta", delta))) / eps


def local_gaussian_sigma(
    epsilon: float, delta: float, d: int, L: float, B: float, calibration: LocalCalibration = "tight",
    lattice: bool = True,
) -> float:
    """Per-coordinate sigma of the local Gaussian randomizer: each report
    (epsilon, delta)-DP in its user's (x, y) (local model).

    ``"tight"``: the analytic Gaussian mechanism (Balle & Wang 2018) on
    Delta_2 of Eq. (LT2); with ``lattice`` the discrete-Gaussian allowance
    of the m coordinates is accounted first
    (:func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
    at 2^10 steps, the coarsest lattice used). ``"classical"``: Dwork & Roth Thm A.1
    (epsilon < 1), the calibration Gaussian-mechanism papers of 2020 quote.
    """
    delta = in_open_unit("delta", delta)
    sens = report_l2_sensitivity(L, B)
    if calibration == "classical":
        return classical_gaussian_sigma(epsilon, delta, sens)
    return local_gaussian_sigma_checked(
        positive("epsilon", epsilon), delta, report_dimension(d), sens, calibration, lattice
    )


def local_gaussian_sigma_checked(
    epsilon: float, delta: float, m: int, sensitivity: float, calibration: str, lattice: bool
) -> float:
    """:func:`local_gaussian_sigma` (``"tight"``; ``"classical"`` is refused
    here, it has its own checks) on an epsilon > 0, a delta in (0, 1), the
    report dimension m and the report's L2 sensitivity (Eq. (LT2)) of
    arguments its caller validated at its own public boundary."""
    if calibration != "tight":
        raise ValueError(f"invalid argument `calibration`: must be 'tight' or 'classical', got {calibration!r}")
    if lattice:
        # At the coarsest lattice the samplers accept (2^10 steps per sigma,
        # secure.capped_lattice_exponent), so long horizons are covered too.
        delta, _ = lattice_gaussian_calibration_delta_checked(epsilon, delta, m, 2.0**10)
    return sensitivity / gaussian_mu_checked(epsilon, delta)


def local_laplace_scale(epsilon: float, d: int, L: float, B: float) -> float:
    """b = Delta_1 / epsilon (Eq. (LT3)): each report epsilon-DP."""
    return report_l1_sensitivity(d, L, B) / positive("epsilon", epsilon)


def local_laplace_scale_checked(epsilon: float, d: int, L: float, B: float) -> float:
    """:func:`local_laplace_scale` on an epsilon > 0, an integer d >= 1 and
    finite L, B > 0 that its caller validated at its own public boundary."""
    return _report_l1_sensitivity(d, L, B) / epsilon


def lattice_report_noise(kind: str, scale: float, d: int, L: float, B: float, horizon: int) -> LatticeNoise:
    """The exact lattice noise replacing continuous noise of ``scale`` on a
    report, the report rounded to the lattice first (the rounding accounted
    by :func:`dpbandits.privacy.secure.lattice_gaussian` / ``lattice_laplace``
    with dim = m); sums of T reports stay exact."""
    m = report_dimension(d)
    bound = positive_int("horizon", horizon) * report_range(L, B) * 2.0
    if kind == "gaussian":
        return lattice_gaussian(scale, report_l2_sensitivity(L, B), dim=m, sum_bound=bound)
    if kind == "laplace":
        return lattice_laplace(scale, report_l1_sensitivity(d, L, B), dim=m, sum_bound=bound)
    raise ValueError(f"invalid argument `noise`: must be 'gaussian' or 'laplace', got {kind!r}")


def vector_sum_coordinate_budget(
    epsilon: float, delta: float, d: int, calibration: VectorCalibration = "tight"
) -> tuple[float, float]:
    """(epsilon_0, delta_0) of each coordinate's scalar protocol (Eq. (LT5)).

    Every returned budget is checked: the composed epsilon (the better of
    basic and advanced composition, exact formulas) is <= ``epsilon``.
    d = 5 (m = 20), epsilon = 1, delta = 0.1, "paper":
    eps_0 = 1 / (2 sqrt(40 ln 20)) = 0.045676..., delta_0 = 0.0025.
    """
    return vector_sum_coordinate_budget_checked(
        positive("epsilon", epsilon), in_open_unit("delta", delta), report_dimension(d), calibration
    )


def vector_sum_coordinate_budget_checked(eps: float, dlt: float, m: int, calibration: str) -> tuple[float, float]:
    """:func:`vector_sum_coordinate_budget` on an epsilon > 0, a delta in
    (0, 1) and the report dimension m = d(d+1)/2 + d of a d that its caller
    validated at its own public boundary (``calibration`` is checked here)."""
    delta0 = dlt / (2 * m)

    def composed(e0: float) -> float:
        return min(m * e0, advanced_composition_epsilon(e0, m, dlt / 2.0))

    if calibration == "paper":
        e0 = eps / (2.0 * math.sqrt(2.0 * m * math.log(2.0 / dlt)))
    elif calibration == "tight":
        lo, hi = eps / m, eps
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if composed(mid) <= eps:
                lo = mid
            else:
                hi = mid
        e0 = lo
    else:
        raise ValueError(f"invalid argument `calibration`: must be 'tight' or 'paper', got {calibration!r}")
    if composed(e0) > eps * (1 + 1e-12):
        raise ValueError(f"invalid argument `epsilon`: the per-coordinate budget for epsilon={eps!r} "
                         "does not compose back under it")
    return e0, delta0


def vector_sum_error_sd(epsilon0: float, delta0: float, batch: int, c_z: float) -> float:
    """Standard deviation of one released coordinate's error in a batch of
    ``batch`` users: 2 c_z sqrt(b n p (1-p) + n/4) / g (binomial noise and
    worst-case rounding of CJMP21 Alg. 1, mapped from [0, 1] to
    [-c_z, c_z])."""
    p = shuffle_sum_parameters(epsilon0, delta0, batch)
    return 2.0 * positive("c_z", c_z) * math.sqrt(p.b * p.n * p.p * (1 - p.p) + p.n / 4.0) / p.g


def _engine_parameters(coefficients: tuple[float, float, float, float], n: int) -> tuple[int, int, float]:
    """(g, b, p) exactly as the engine evaluates them (ShuffleSumCoefficients::parameters)."""
    g_sqrt_n, g_min, bits, ones = coefficients
    nf = float(n)
    g = max(math.ceil(g_sqrt_n * math.sqrt(nf)), math.ceil(g_min))
    b = math.ceil(bits * g * g / nf)
    return g, b, ones * g * g / (b * nf)


def _stirling_rest(x: float) -> float:
    """mu(x) = ln Gamma(x) - (x - 1/2) ln x + x - ln(2 pi) / 2 for x >= 16,
    by its asymptotic series to the x^-9 term (error below 1e-17)."""
    s2 = 1.0 / (x * x)
    return (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - s2 / 1188) * s2) * s2) * s2) / x


def _log_rising_rest(a: float, s: float) -> float:
    """ln Gamma(a + s) - ln Gamma(a) - s ln(a + s) for a >= 1, s >= 0: the
    sum of ln(a + j), j = 0..s-1, less its largest-scale part (taken out so
    that the caller can combine the s ln(.) terms of two such sums into one
    logarithm of a ratio, without cancellation). Stirling's formula in
    both arguments when a >= 16 (exact algebra: (a - 1/2) ln(1 + s/a) - s
    + mu(a + s) - mu(a)); ln Gamma(a) by the library when a < 16."""
    if s == 0.0:
        return 0.0
    if a >= 16.0:
        return (a - 0.5) * math.log1p(s / a) - s + _stirling_rest(a + s) - _stirling_rest(a)
    b = a + s
    if b < 16.0:
        return math.lgamma(b) - math.lgamma(a) - s * math.log(b)
    # ln Gamma(b) by Stirling, less s ln b: (a - 1/2) ln b - b + ln(2 pi)/2 + mu(b).
    return (a - 0.5) * math.log(b) - b + 0.5 * math.log(2.0 * math.pi) + _stirling_rest(b) - math.lgamma(a)


def _log_ratio(y: int, shift: int, N: int, p: float) -> float:
    """ln P(X = y) - ln P(X = y - shift), X ~ Binomial(N, p), shift <= y <= N.

    The ratio is prod_{j < shift} (N - y + 1 + j) / (y - j) * (p / (1 - p))^shift
    = Gamma(A + s) Gamma(B) / (Gamma(A) Gamma(B + s)) (p / (1 - p))^s with
    A = N - y + 1, B = y - s + 1, s = shift: evaluated in O(1) operations
    whatever the shift (:func:`_log_rising_rest`), with the two s ln(.)
    terms merged into s ln((A + s) p / ((B + s)(1 - p))), so the absolute
    error stays about 1e-16 (s + ln N), as for the product of the shift's
    pmf ratios it replaces (which cost O(shift): minutes at shift ~ 1e9)."""
    s = float(shift)
    a, b = float(N - y) + 1.0, float(y - shift) + 1.0
    head = s * math.log(((a + s) * p) / ((b + s) * (1.0 - p)))
    return head + _log_rising_rest(a, s) - _log_rising_rest(b, s)


def _first(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest y in [lo, hi] with pred(y) (pred monotone), hi + 1 if none."""
    hi += 1
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def binomial_shift_delta(epsilon: float, N: int, p: float, shift: int) -> float:
    """Exact delta(epsilon) between X and X + ``shift``, X ~ Binomial(N, p),
    both directions (Eq. (LT8)): the likelihood ratio P(X = y) / P(X = y -
    shift) decreases in y, so each hockey-stick divergence is a difference
    of two binomial tails at the crossing point. N, shift integers >= 1,
    0 < p < 1."""
    from scipy import stats

    eps = positive("epsilon", epsilon)
    N, shift = positive_int("N", N), positive_int("shift", shift)
    if not 0.0 < p < 1.0:
        raise ValueError(f"invalid argument `p`: must be in (0, 1), got {p!r}")
    b = stats.binom(N, p)
    y1 = _first(lambda y: _log_ratio(y, shift, N, p) <= eps, shift, N)
    d1 = b.cdf(y1 - 1) - math.exp(eps) * b.cdf(y1 - 1 - shift)
    y2 = _first(lambda y: _log_ratio(y, shift, N, p) < -eps, shift, N)
    d2 = b.sf(y2 - shift - 1) - math.exp(eps) * b.sf(y2 - 1)
    return max(float(d1), float(d2), 0.0)


def exact_blanket_coefficients(epsilon0: float, delta0: float, batch: int) -> tuple[float, float, float, float]:
    """Engine coefficients (g_sqrt_n = 2, g_min = 4, c_b, c_b / 2) with the
    smallest c_b whose binomial mechanism at the batch size meets
    (epsilon0, delta0) exactly (Eq. (LT8)); the result is re-checked."""
    e0 = positive("epsilon0", epsilon0)
    d0 = in_open_unit("delta0", delta0)
    n = positive_int("batch", batch)

    def ok(bits: float) -> bool:
        g, b, p = _engine_parameters((2.0, 4.0, bits, bits / 2.0), n)
        return binomial_shift_delta(e0, b * n, p, g) <= d0

    hi = 180.0 * math.log(2.0 / d0) / e0**2  # CJMP21 Lemma 3.1's c_b
    if not ok(hi):
        hi *= 4.0
        if not ok(hi):
            raise ValueError(f"invalid argument `epsilon0`: no blanket-bit count found for {epsilon0!r}")
    lo = hi / 1e4
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
        if hi / lo < 1.0 + 1e-6:
            break
    return (2.0, 4.0, hi, hi / 2.0)


def coefficients_error_sd(coefficients: tuple[float, float, float, float], batch: int, c_z: float) -> float:
    """Standard deviation of one released coordinate's error for engine
    coefficients (binomial noise plus worst-case rounding), in value units."""
    g, b, p = _engine_parameters(coefficients, positive_int("batch", batch))
    return 2.0 * positive("c_z", c_z) * math.sqrt(b * batch * p * (1 - p) + batch / 4.0) / g


def amplified_local_epsilon(epsilon: float, delta: float, batch: int, method: str) -> float:
    """eps_0 of a local randomizer whose ``batch`` shuffled reports are
    (epsilon, delta)-DP: the inverse of the amplification bound of Feldman,
    McMillan & Talwar 2021 (``"closed-form"``, Thm 3.1; the bound
    amplification-based shuffle papers use) or its numerical version
    (``"numerical"``, Thm 3.2) (:func:`dpbandits.privacy.shuffle.shuffle_local_epsilon`)."""
    return shuffle_local_epsilon(epsilon, batch, delta, method)


def amplified_local_epsilon_checked(epsilon: float, delta: float, batch: int, method: str) -> float:
    """:func:`amplified_local_epsilon` on an epsilon > 0, a delta in (0, 1)
    and an integer batch >= 1 that its caller validated at its own public
    boundary."""
    return shuffle_local_epsilon_checked(epsilon, batch, delta, method)


def shuffle_batch_size(horizon: int) -> int:
    """B = ceil(T^{3/5}) (Eq. (LT7)); T = 1e6: 3982."""
    T = positive_int("horizon", horizon)
    return max(1, min(T, math.ceil(T**0.6)))


@dataclass(frozen=True)
class TrustRadiusConstants:
    """What the engine evaluates (Eq. (LT6)): Upsilon_k = upsilon_rate sqrt(k),
    beta = noise_sd sqrt(max(0, log_offset + ln det V - d ln rho_min)) + S
    sqrt(rho_max) + gamma_rate sqrt(k) / sqrt(rho_min)."""

    upsilon_rate: float
    noise_sd: float
    log_offset: float
    S: float
    gamma_rate: float


def trust_radius(
    term_sd: float, d: int, horizon: int, alpha: float, sigma: float = 1.0, S: float = 1.0
) -> TrustRadiusConstants:
    """Constants of Eq. (LT6) for noise of per-coordinate standard
    deviation ``term_sd`` in each released term (0: no noise).

    d = 5, T = 1e6, alpha = 1e-6, term_sd = 1: upsilon_rate = 4 sqrt(5) +
    2 ln(2e12), gamma_rate = sqrt(5) + sqrt(2 ln(2e12)); log_offset =
    2 ln(2/alpha)."""
    d = positive_int("d", d)
    T = positive_int("horizon", horizon)
    alpha = in_open_unit("alpha", alpha)
    if not (math.isfinite(term_sd) and term_sd >= 0):
        raise ValueError(f"invalid argument `term_sd`: must be finite and >= 0, got {term_sd!r}")
    log_t = math.log(2.0 * T / alpha)
    return TrustRadiusConstants(
        upsilon_rate=term_sd * (4.0 * math.sqrt(d) + 2.0 * log_t),
        noise_sd=positive("sigma", sigma),
        log_offset=2.0 * math.log(2.0 / alpha),
        S=positive("S", S),
        gamma_rate=term_sd * (math.sqrt(d) + math.sqrt(2.0 * log_t)),
    )


def trust_guarantee(
    model: Literal["local", "shuffle"], epsilon: float, delta: float, basis: str, calibration: str, sampler: str
) -> Guarantee:
    """The guarantee object: (epsilon, delta) in the ``model``, protecting
    each user's (context, reward)."""
    cal = "tight" if calibration == "tight" else "paper"
    # Guarantee checks epsilon itself (its callers validated it already).
    return Guarantee(model, float(epsilon), float(delta), protects="contexts and rewards",
                     basis=basis, calibration=cal, sampler=sampler)  # type: ignore[arg-type]
