"""Fixed-confidence best-arm identification (BAI) under global differential
privacy, for Bernoulli arms: the characteristic times of the lower bounds,
the stopping thresholds and the noise radii of the learners of
:mod:`dpbandits.learners.bai`, each once, with its source:

- the non-private characteristic time (Garivier & Kaufmann 2016, "Optimal
  best arm identification with fixed confidence", Thm 1):
  T*(mu)^-1 = sup_{w in simplex} inf_{lambda in Alt(mu)} sum_a w_a kl(mu_a, lambda_a),
  and E[tau] >= T*(mu) kl(delta, 1 - delta) >= T*(mu) ln(1 / (2.4 delta))
  (:func:`characteristic_time` with ``divergence="kl"``);
- Azize, Jourdan, Al Marjani & Basu 2023, "On the complexity of
  differentially private best-arm identification with fixed confidence"
  (NeurIPS, arXiv 2309.02202), the lower bound under epsilon-global DP:
  E[tau] >= max(T*_KL(mu), T*_TV(mu) / (6 epsilon)) ln(1 / (3 delta)), with
  the Total Variation characteristic time T*_TV (KL replaced by TV, for
  Bernoulli laws TV = |mu_a - lambda_a|; closed form
  T*_TV = 1 / Delta_min + sum_{a != a*} 1 / Delta_a, derived below)
  (:func:`tv_characteristic_time`, :func:`azize2023_lower_bound`). The
  constants 6 and 3 are those of the paper's statement as we read it from
  its abstract-level summaries (reconstructed: the full text was not
  reachable); the tests check the TV closed form, not these constants;
- Jourdan & Azize 2025, "Optimal best arm identification under
  differential privacy" (arXiv 2510.17348): the transportation cost that
  trades KL against epsilon-scaled TV. We use the divergence
  d_eps(x, y) = inf_{z between x and y} eps |z - x| + kl(z, y)
  (:func:`dpbandits.privacy.azize.d_eps`, the same authors' divergence of
  the regret lower bound, arXiv 2505.05613) in place of kl:
  T*_eps(mu)^-1 = sup_w inf_lambda sum_a w_a d_eps(mu_a, lambda_a)
  (:func:`characteristic_time` with ``divergence="dp"``), and report
  T*_eps(mu) ln(1 / delta) (:func:`jourdan_azize2025_lower_bound`).
  Reconstructed: the paper's exact divergence and constant were not in the
  text we could reach; d_eps has the properties its abstract states
  (d_eps <= kl, d_eps <= eps TV, d_eps -> kl as eps -> infinity,
  d_eps ~ eps TV as eps -> 0), which the tests check;
- the Kaufmann & Koolen 2021 GLR threshold ("Mixture martingales
  revisited", JMLR, Thm 7 with the Gaussian calibration C_G of its Thm 9)
  used by every stopping rule of the learners (:func:`glr_threshold`);
- the radius of a sum of k Laplace (or discrete Laplace) draws from its
  exact moment generating function (Chernoff), which makes the private
  stopping rules delta-correct (:func:`laplace_sum_radius`,
  :func:`noise_radii`).

The inner optimisation (Garivier & Kaufmann 2016, Thm 5's reduction). With
the best arm's weight normalised to 1 and x_b = w_b / w_*, the cost of arm b
is g_b(x) = inf_{y in [mu_b, mu_*]} d(mu_*, y) + x d(mu_b, y), increasing
from 0 to d(mu_*, mu_b); at the optimum every g_b(x_b) equals a common value
s, and T*^-1 = max over s in (0, min_b d(mu_*, mu_b)) of
s / (1 + sum_b x_b(s)), x_b the inverse of g_b. Each inner infimum is a
one-dimensional convex problem (d(mu, .) is convex for kl, TV and d_eps:
d_eps is the partial minimum of a jointly convex function), solved by golden
section; x_b(s) by bisection; the outer maximum by golden section.

TV closed form. With d = TV the cost is g_b(x) = min(1, x) Delta_b (the
infimum of a linear function of y on [mu_b, mu_*] is at an end point), so
x_b(s) = s / Delta_b for s < Delta_min, and s / (1 + sum_b s / Delta_b)
increases up to s = Delta_min: T*_TV = 1 / Delta_min + sum_b 1 / Delta_b.

Two arms (the hand-checkable case, used by the tests): by the minimax
theorem (convex in y, linear in w),
T*^-1 = inf_y max(d(mu_1, y), d(mu_2, y)), reached where the two costs are
equal.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dpbandits._validation import in_open_unit, positive, positive_int

__all__ = [
    "CharacteristicTime",
    "azize2023_lower_bound",
    "bernoulli_laplace_deviation",
    "characteristic_time",
    "chernoff_pair_statistic",
    "chernoff_pair_thresholds",
    "gaussian_calibration",
    "glr_threshold",
    "jourdan_azize2025_lower_bound",
    "laplace_sum_radius",
    "noise_mgf_cap",
    "noise_radii",
    "randomised_response",
    "tv_characteristic_time",
]

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _means(means: Sequence[float]) -> tuple[list[float], int]:
    try:
        mu = [float(m) for m in means]
    except (TypeError, ValueError):
        raise TypeError(f"invalid argument `means`: expected a sequence of numbers, got {means!r}") from None
    if len(mu) < 2:
        raise ValueError(f"invalid argument `means`: needs at least 2 arms, got {len(mu)}")
    if not all(math.isfinite(m) and 0.0 <= m <= 1.0 for m in mu):
        raise ValueError(f"invalid argument `means`: Bernoulli means must lie in [0, 1], got {means!r}")
    best = max(mu)
    if sum(m == best for m in mu) > 1:
        raise ValueError(f"invalid argument `means`: needs a unique best arm (T* is infinite), got {means!r}")
    return mu, mu.index(best)


def _golden_min(
    f: Callable[[float], float], lo: float, hi: float, iters: int = 80, tol: float = 1e-13
) -> tuple[float, float]:
    """(argmin, min) of a unimodal f on [lo, hi] by golden section (until the
    bracket is narrower than ``tol`` times the interval)."""
    width = tol * (hi - lo)
    a, b = lo, hi
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
        if b - a < width:
            break
    x = 0.5 * (a + b)
    candidates = [(f(lo), lo), (f(hi), hi), (f(x), x)]
    v, x = min(candidates)
    return x, v


def _kl(x: float, y: float) -> float:
    """kl_bernoulli without argument checks (hot loop of the optimisation)."""
    y = min(max(y, 1e-15), 1.0 - 1e-15)
    v = 0.0
    if x > 0.0:
        v += x * math.log(x / y)
    if x < 1.0:
        v += (1.0 - x) * math.log((1.0 - x) / (1.0 - y))
    return max(v, 0.0)


def _d_eps(x: float, y: float, eps: float) -> float:
    """:func:`dpbandits.privacy.azize.d_eps` without argument checks (same
    closed form; for x > y written with e^-eps, which does not overflow)."""
    if x <= y:
        e = math.exp(-eps)
        den = 1.0 - y + y * e
        return _kl(x, y) if x >= y * e / den else max(-eps * x - math.log(den), 0.0)
    e = math.exp(-eps)
    den = y + (1.0 - y) * e  # (1 - y + y e^eps) e^-eps
    return _kl(x, y) if x <= y / den else max(eps * (x - 1.0) - math.log(den), 0.0)


def _divergence(divergence: str, epsilon: float | None) -> Callable[[float, float], float]:
    if divergence == "kl":
        return _kl
    if divergence == "tv":
        return lambda x, y: abs(x - y)
    if divergence == "dp":
        if epsilon is None:
            raise ValueError("invalid argument `epsilon`: divergence='dp' needs epsilon > 0")
        eps = positive("epsilon", epsilon)
        return lambda x, y: _d_eps(x, y, eps)
    raise ValueError(f"invalid argument `divergence`: must be 'kl', 'tv' or 'dp', got {divergence!r}")


@dataclass(frozen=True)
class CharacteristicTime:
    """T*(mu) and the optimal allocation w* (summing to 1) for one divergence."""

    value: float
    weights: tuple[float, ...]
    best_arm: int


def characteristic_time(
    means: Sequence[float], divergence: str = "kl", epsilon: float | None = None
) -> CharacteristicTime:
    """T*(mu) = (sup_w inf_{lambda in Alt(mu)} sum_a w_a d(mu_a, lambda_a))^-1
    for Bernoulli ``means`` with a unique best arm, ``divergence`` 'kl'
    (Garivier & Kaufmann 2016), 'tv' (Azize et al. 2023's T*_TV) or 'dp'
    (d_eps with ``epsilon``, our reading of Jourdan & Azize 2025); the inner
    and outer optimisations solved numerically (module docstring), relative
    accuracy about 1e-7."""
    mu, best = _means(means)
    d = _divergence(divergence, epsilon)
    top = mu[best]
    others = [b for b in range(len(mu)) if b != best]

    def cost(b: int, x: float) -> float:
        lo, hi = mu[b], top
        if divergence == "kl":  # the minimiser is the weighted mean (Garivier & Kaufmann 2016, Lemma 3)
            y = (top + x * lo) / (1.0 + x)
            return d(top, y) + x * d(lo, y)
        return _golden_min(lambda y: d(top, y) + x * d(lo, y), lo, hi, tol=1e-9)[1]

    caps = {b: d(top, mu[b]) for b in others}

    def inverse(b: int, s: float) -> float:
        # Smallest x with g_b(x) >= s (g_b increasing, g_b(inf) = caps[b] > s).
        hi = 1.0
        while cost(b, hi) < s:
            hi *= 2.0
            if hi > 1e15:
                return math.inf
        lo = 0.0
        for _ in range(70):
            mid = 0.5 * (lo + hi)
            if cost(b, mid) < s:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-9 * hi:
                break
        return hi

    s_max = min(caps.values())

    def neg_rate(s: float) -> float:
        total = 1.0 + sum(inverse(b, s) for b in others)
        return -s / total if math.isfinite(total) else 0.0

    s_opt, v = _golden_min(neg_rate, 1e-12 * s_max, s_max * (1.0 - 1e-12), iters=90, tol=1e-8)
    rate = -v
    xs = {b: inverse(b, s_opt) for b in others}
    total = 1.0 + sum(xs.values())
    w = [0.0] * len(mu)
    w[best] = 1.0 / total
    for b in others:
        w[b] = xs[b] / total
    return CharacteristicTime(1.0 / rate, tuple(w), best)


def tv_characteristic_time(means: Sequence[float]) -> float:
    """T*_TV(mu) = 1 / Delta_min + sum_{a != a*} 1 / Delta_a (Azize et al.
    2023, the Total Variation characteristic time for Bernoulli arms; closed
    form derived in the module docstring)."""
    mu, best = _means(means)
    gaps = [mu[best] - m for i, m in enumerate(mu) if i != best]
    return 1.0 / min(gaps) + sum(1.0 / g for g in gaps)


def azize2023_lower_bound(means: Sequence[float], epsilon: float, delta: float) -> float:
    """max(T*_KL(mu), T*_TV(mu) / (6 epsilon)) ln(1 / (3 delta)) (Azize et al.
    2023, the lower bound on E[tau] of a delta-correct epsilon-global-DP
    strategy; constants as read, see the module docstring)."""
    eps = positive("epsilon", epsilon)
    dl = in_open_unit("delta", delta)
    t = max(characteristic_time(means, "kl").value, tv_characteristic_time(means) / (6.0 * eps))
    return t * math.log(1.0 / (3.0 * dl))


def jourdan_azize2025_lower_bound(means: Sequence[float], epsilon: float, delta: float) -> float:
    """T*_eps(mu) ln(1 / delta) with T*_eps the d_eps characteristic time
    (:func:`characteristic_time` ``divergence="dp"``): the reference of the
    ``private-bai`` experiment's ratios (module docstring for what is
    reconstructed)."""
    dl = in_open_unit("delta", delta)
    return characteristic_time(means, "dp", epsilon).value * math.log(1.0 / dl)


# ---------------------------------------------------------------------------
# Local randomised response (CTB-TT)

#: Bits of the flip probability of the randomised response: f = num / 2^62.
RESPONSE_FLIP_BITS = 62
#: Largest epsilon the randomised response takes.
RESPONSE_EPSILON_MAX = 2.0**19


@dataclass(frozen=True)
class RandomisedResponse:
    """The local randomiser of CTB-TT (Azize, Jourdan, Al Marjani & Basu,
    extended version, arXiv 2406.06408: the epsilon-local-DP Top Two): a
    reward y in [0, 1] becomes a bit b ~ Bernoulli(y), and b is flipped with
    probability ``flip`` = ``num`` / 2^``bits``, the flip probability
    1 / (1 + e^epsilon) of Warner's randomised response (Warner 1965)
    rounded up to the lattice 2^-62, which the engine draws exactly from 62
    uniform bits. P(out | y) / P(out | y') <= (1 - flip) / flip for every
    y, y' and output: epsilon'-local DP of each reward with
    ``epsilon`` = epsilon' = ln((2^bits - num) / num) <= epsilon (rounded
    up to the next float, at most epsilon)."""

    num: int
    bits: int
    epsilon: float
    flip: float


def randomised_response(epsilon: float) -> RandomisedResponse:
    """The randomised response of privacy ``epsilon`` (finite, > 0, at most
    2^19): num = ceil(2^62 / (1 + e^epsilon)) (at least 1), so that
    (2^62 - num) / num <= e^epsilon, and epsilon' = ln((2^62 - num) / num)
    (computed with 80 significant digits; num carries a relative margin of
    1e-50 against the rounding of e^epsilon)."""
    eps = positive("epsilon", epsilon)
    if not math.isfinite(eps) or eps > RESPONSE_EPSILON_MAX:
        raise ValueError(f"invalid argument `epsilon`: must be finite and at most 2^19, got {epsilon!r}")
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        ctx.Emax = 10**7
        scale = decimal.Decimal(2) ** RESPONSE_FLIP_BITS
        e = decimal.Decimal(eps).exp()
        num = max(1, math.ceil(scale / (1 + e) * (1 + decimal.Decimal("1e-50"))))
        exact = ((scale - num) / num).ln()
    # exact <= eps by the choice of num; the float above exact, capped at eps.
    exact_f = min(eps, math.nextafter(float(exact), math.inf))
    return RandomisedResponse(num, RESPONSE_FLIP_BITS, exact_f, num / 2.0**RESPONSE_FLIP_BITS)


# ---------------------------------------------------------------------------
# Stopping thresholds


def _zeta(s: float) -> float:
    """Riemann zeta(s), s > 1, by Euler-Maclaurin (N = 12, three Bernoulli
    terms; absolute error below 1e-10 for s in (1, 3])."""
    n = 12
    head = sum(k ** (-s) for k in range(1, n))
    tail = n ** (1.0 - s) / (s - 1.0) + 0.5 * n ** (-s)
    tail += s * n ** (-s - 1.0) / 12.0
    tail -= s * (s + 1.0) * (s + 2.0) * n ** (-s - 3.0) / 720.0
    tail += s * (s + 1.0) * (s + 2.0) * (s + 3.0) * (s + 4.0) * n ** (-s - 5.0) / 30240.0
    return head + tail


def gaussian_calibration(x: float) -> float:
    """C_G(x) = min_{lambda in (1/2, 1)} (g_G(lambda) + x) / lambda with
    g_G(lambda) = 2 lambda - 2 lambda ln(4 lambda) + ln zeta(2 lambda)
    - ln(1 - lambda) / 2 (Kaufmann & Koolen 2021, Thm 9); C_G(x) = x + ln(x) / 2 + O(1)."""
    x = positive("x", x)

    def f(lam: float) -> float:
        g = 2.0 * lam - 2.0 * lam * math.log(4.0 * lam) + math.log(_zeta(2.0 * lam)) - 0.5 * math.log(1.0 - lam)
        return (g + x) / lam

    return _golden_min(f, 0.5 + 1e-9, 1.0 - 1e-12, iters=120)[1]


def batch_sum_laplace_scale(epsilon: float) -> float:
    """The Laplace scale of one released batch sum of rewards in [0, 1]:
    1 / epsilon (L1 sensitivity 1). Every reward lies in exactly one batch
    of its arm, so the releases compose in parallel and the learner is
    epsilon-DP in the rewards (Azize et al. 2023, Sec. 4, AdaP-TT's
    per-episode Laplace mechanism; Jourdan & Azize 2025, the geometric
    batching of the private mean estimator)."""
    return 1.0 / positive("epsilon", epsilon)


def forgetting_thresholds(k: int, delta: float, batches: int) -> list[float]:
    """The GLR constant c0 for each larger batch index j = 1..``batches`` of
    a pair when means are read from the last batch only (forgetting): a
    union over the pair's batch indices with weights 1 / j^3 and over the
    k - 1 challengers, c0_j = 2 C_G(ln((k - 1) s j^3 / delta) / 2) with
    s = 2 zeta(2) - zeta(3) (the sum over pairs of batch indices of the
    weight of the larger one; Kaufmann & Koolen 2021, Thm 7 per pair)."""
    k = positive_int("k", k)
    dl = in_open_unit("delta", delta)
    s = 2.0 * math.pi**2 / 6.0 - 1.2020569031595942
    return [2.0 * gaussian_calibration(0.5 * math.log((k - 1) * s * j**3 / dl)) for j in range(1, batches + 1)]


def glr_threshold(k: int, delta: float) -> tuple[float, float]:
    """The GLR stopping threshold of every learner of
    :mod:`dpbandits.learners.bai` as (c0, c1): stop for the pair (a, b) when
    the cost reaches c0 + c1 (ln(1 + ln N_a) + ln(1 + ln N_b)), with
    c0 = 2 C_G(ln((k - 1) / delta) / 2) and c1 = 3 (Kaufmann & Koolen 2021,
    Thm 7 on the two arms of a pair, one-parameter exponential families,
    union over the k - 1 challengers): with probability >= 1 - delta, for
    every time and every pair, sum_{a in pair} N_a kl(mu^_a, mu_a) stays
    below the threshold."""
    k = positive_int("k", k)
    if k < 2:
        raise ValueError(f"invalid argument `k`: BAI needs at least 2 arms, got {k}")
    dl = in_open_unit("delta", delta)
    return 2.0 * gaussian_calibration(0.5 * math.log((k - 1) / dl)), 3.0


def _log_mgf(s: float, scale: float, lattice: tuple[int, float] | None) -> float:
    """ln E[exp(s X)] for X ~ Laplace(scale) (continuous, s < 1 / scale) or,
    ``lattice`` = (t, g), X = g Y with Y discrete Laplace of t steps
    (P(Y = y) proportional to exp(-|y| / t), s g < 1 / t)."""
    if lattice is None:
        u = s * scale
        return -math.log1p(-u * u)
    t, g = lattice
    a = 1.0 / t
    u = s * g
    # E[e^{uY}] = (1 - p)^2 / ((1 - p e^u)(1 - p e^-u)), p = e^{-1/t}.
    return 2.0 * math.log(-math.expm1(-a)) - math.log(-math.expm1(u - a)) - math.log(-math.expm1(-u - a))


def laplace_sum_radius(k: int, scale: float, delta: float, lattice: tuple[int, float] | None = None) -> float:
    """The smallest r with P(|X_1 + ... + X_k| >= r) <= ``delta`` by Chernoff's
    bound on the exact moment generating function, X_i i.i.d. Laplace(``scale``)
    (or, with ``lattice`` = (t, g), g times a discrete Laplace of t steps, the
    noise the engines draw): r = inf_{s} (k ln M(s) + ln(2 / delta)) / s."""
    k = positive_int("k", k)
    scale = positive("scale", scale)
    dl = in_open_unit("delta", delta)
    cap = 1.0 / scale if lattice is None else (1.0 / lattice[0]) / lattice[1]
    log2d = math.log(2.0 / dl)

    def f(s: float) -> float:
        return (k * _log_mgf(s, scale, lattice) + log2d) / s

    return _golden_min(f, cap * 1e-9, cap * (1.0 - 1e-9), iters=200)[1]


def noise_radii(
    k_arms: int, delta_noise: float, scale: float, batches: int, lattice: tuple[int, float] | None = None,
    cumulative: bool = True,
) -> list[float]:
    """Radii R_1, ..., R_batches of the noise in an arm's private sum after j
    released batches, valid for every arm and every j at once with
    probability >= 1 - ``delta_noise``: level delta_j = delta_noise 6 /
    (pi^2 k_arms j^2) for each (arm, j) (a union bound). ``cumulative``: the
    sum of the j batch noises (no forgetting); otherwise the j-th batch's
    own draw (forgetting learners)."""
    positive_int("k_arms", k_arms)
    positive_int("batches", batches)
    dn = in_open_unit("delta_noise", delta_noise)
    out = []
    for j in range(1, batches + 1):
        level = dn * 6.0 / (math.pi**2 * k_arms * j * j)
        out.append(laplace_sum_radius(j if cumulative else 1, scale, level, lattice))
    return out


# ---------------------------------------------------------------------------
# The Chernoff stopping rule of the private Top Two (no delta split)
#
# Concentration of a Bernoulli sum plus Laplace sums (the form the stopping
# rule of Jourdan & Azize 2025 needs; the statement and proof below are ours,
# their text was not reachable). Let an arm's released statistic after j
# batches be X = S_n + L_1 + ... + L_j, S_n a sum of n i.i.d. rewards in
# [0, 1] of mean mu, the L_i i.i.d. noise draws with log moment generating
# function Lambda(s) (finite for |s| < s_max: Laplace(b): -ln(1 - b^2 s^2),
# s_max = 1 / b; the engines' lattice noise: :func:`_log_mgf`), n and j fixed
# by the batch schedule. With m = X / n and
#
#   (C1)  D(m; n, j, z) = sup_{|s| < s_max} [ s n m - n psi_z(s) - j Lambda(s) ],
#         psi_z(s) = ln(1 - z + z e^s)  (the Bernoulli log-MGF),
#
# Chernoff's bound (psi_mu dominates the log-MGF of any reward in [0, 1] of
# mean mu, Hoeffding's convexity argument) gives, for every u >= 0,
#
#   (C2)  P(m > mu and D(m; n, j, mu) >= u) <= e^-u   (and the same for m < mu):
#
# D is continuous and nondecreasing in m on m >= mu, so the event is
# {m >= x_u} with D(x_u) = u, and P(X >= n x_u) <= exp(-D(x_u)). Without
# noise D = n kl(m, z); with j = 0 and s restricted to |s| <= eps it is
# n d_eps(m, z) (Fenchel duality: d_eps is the inf-convolution of kl with
# eps |.|), so D <= n d_{s_max}(m, z) and D / n -> d_eps as n grows with
# j = O(ln n): the cost of the lower bound.
#
# Pair statistic of a leader a and a challenger b, m_a > m_b:
#
#   (C3)  W(a, b) = inf_{z in [m_b, m_a]} D_a(m_a; z) + D_b(m_b; z).
#
# If mu_a <= mu_b (the leader is not better), taking z = mu_a, m_a or m_b
# (whichever lies in [m_b, m_a] and the monotonicity of D in z) gives
# W(a, b) <= X_a + Y_b with X_a = D_a(m_a; mu_a) 1{m_a > mu_a} and
# Y_b = D_b(m_b; mu_b) 1{m_b < mu_b}, independent for fixed batch indices
# (j_a, j_b) and each dominated by an Exp(1) variable by (C2), so
#
#   (C4)  P(X_a + Y_b >= c) <= (1 + c) e^-c   (the tail of a Gamma(2, 1)).
#
# Stopping when W(a, b) >= c(j_a + j_b) for the leader a and every other b,
# a wrong answer needs, for some arm a that is not the best and some
# (j_a, j_b), X_a + Y_{a*} >= c(j_a + j_b); the union over the k - 1 arms
# and over the pairs of batch indices with weight 2 / ((s - 1) s (s + 1))
# for the pair of sum s = j_a + j_b (there are s - 1 such pairs, and
# sum_{s >= 2} 2 / (s (s + 1)) = 1) makes the error probability at most
# delta when
#
#   (C5)  (1 + c_s) e^{-c_s} = 2 delta / ((k - 1) (s - 1) s (s + 1)).
#
# The engine computes the sup in (C1) by a safeguarded Newton iteration (any
# s gives a lower bound of D) and the inf in (C3) by bisection with the
# certificate inf_{z in [l, h]} >= D_a(m_a; h) + D_b(m_b; l) (D_a decreases
# and D_b increases in z on [m_b, m_a]), so a stop is never declared on an
# approximation that overestimates W.


def _c5_solve(target: float) -> float:
    """The c > 0 with (1 + c) e^-c = ``target`` (< 1), i.e. c - ln(1 + c) =
    ln(1 / target), by Newton's method from c = ln(1 / target) + ln(2 + ln(1 / target))."""
    lt = math.log(1.0 / target)
    c = lt + math.log(2.0 + lt)
    for _ in range(60):
        f = c - math.log1p(c) - lt
        step = f / (c / (1.0 + c))
        c -= step
        if abs(step) <= 1e-15 * c:
            break
    return c


def chernoff_pair_thresholds(k: int, delta: float, max_sum: int) -> list[float]:
    """The thresholds c_s of the Chernoff stopping rule for s = j_a + j_b =
    2, ..., ``max_sum`` (entry s - 2): the c with (1 + c) e^-c =
    2 delta / ((k - 1) (s - 1) s (s + 1)), equation (C5) of the comment
    block above (the pair bound (C4) with a union over the k - 1 arms and
    the batch-index pairs)."""
    k = positive_int("k", k)
    if k < 2:
        raise ValueError(f"invalid argument `k`: BAI needs at least 2 arms, got {k}")
    dl = in_open_unit("delta", delta)
    max_sum = positive_int("max_sum", max_sum)
    if max_sum < 2:
        raise ValueError(f"invalid argument `max_sum`: must be >= 2 (two arms with a batch each), got {max_sum}")
    return [_c5_solve(2.0 * dl / ((k - 1) * (s - 1) * s * (s + 1))) for s in range(2, max_sum + 1)]


def noise_mgf_cap(scale: float, lattice: tuple[int, float] | None = None) -> float:
    """s_max of (C1): the noise's moment generating function is finite for
    |s| < s_max = 1 / ``scale`` (Laplace) or 1 / (t g) (``lattice`` = (t, g),
    g times a discrete Laplace of t steps)."""
    if lattice is None:
        return 1.0 / positive("scale", scale)
    return 1.0 / (lattice[0] * lattice[1])


def bernoulli_laplace_deviation(
    m: float, n: int, batches: int, z: float, scale: float, lattice: tuple[int, float] | None = None
) -> float:
    """D(m; n, j, z) of equation (C1): the Chernoff exponent of a mean of
    ``n`` rewards in [0, 1] plus ``batches`` noise draws (Laplace of
    ``scale`` or the lattice noise) reaching ``m`` when the reward mean is
    ``z``; 0 when m == z. Computed by golden section on the concave
    exponent (a reference for the engine, which uses Newton's method)."""
    n = positive_int("n", n)
    if m == z:
        return 0.0
    cap = noise_mgf_cap(scale, lattice)

    def g(s: float) -> float:
        psi = math.log1p(z * math.expm1(s)) if s < 700 else math.log(z) + s
        return s * n * m - n * psi - batches * _log_mgf(s, scale, lattice)

    lo, hi = (0.0, cap * (1.0 - 1e-12)) if m > z else (-cap * (1.0 - 1e-12), 0.0)
    _, v = _golden_min(lambda s: -g(s), lo, hi, iters=200, tol=1e-15)
    return max(-v, 0.0)


def chernoff_pair_statistic(
    ma: float, na: int, ja: int, mb: float, nb: int, jb: int, scale: float,
    lattice: tuple[int, float] | None = None, grid: int = 4000,
) -> float:
    """W(a, b) of equation (C3), from below: min over the ``grid`` cells
    [l, h] of [m_b, m_a] of D_a(m_a; h) + D_b(m_b; l) (a lower bound of the
    infimum; 0 when m_a <= m_b). A reference for the engine's bisection."""
    if ma <= mb:
        return 0.0
    zs = [mb + (ma - mb) * i / grid for i in range(grid + 1)]
    da = [bernoulli_laplace_deviation(ma, na, ja, z, scale, lattice) for z in zs]
    db = [bernoulli_laplace_deviation(mb, nb, jb, z, scale, lattice) for z in zs]
    return min(da[i + 1] + db[i] for i in range(grid))
