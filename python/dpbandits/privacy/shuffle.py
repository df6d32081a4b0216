"""Privacy amplification by shuffling: the central epsilon of n shuffled eps0-LDP reports.

Hanna, Girgis, Fragouli & Diggavi, §V (Alg. 3), privatize each reward in batch
i with an eps0^(i)-LDP Laplace randomizer and let a trusted shuffler permute
the n_i reports. The shuffler's output is then (eps, delta)-DP with
eps = f_{n_i,delta}(eps0^(i)), and line 8 of Alg. 3 sets
eps0^(i) = f^{-1}_{n_i,delta}(eps). Here ``f`` is the amplification bound of
Feldman, McMillan & Talwar, "Hiding Among the Clones", FOCS 2021 (arXiv
2012.12803; FMT below).

This module computes ``f`` and its inverse in two ways:

``method="closed-form"`` (the paper's calibration)
    The formula that Hanna et al. use. They define it in §V (the unnumbered
    display before Theorem 3) and restate it as Eq. (37) in §IX-A (the proof of
    Theorem 3). It is FMT Theorem 3.1::

        f_{n,delta}(eps0) = ln(1 + (e^eps0 - 1)/(e^eps0 + 1)
                                  * (8 sqrt(e^eps0 ln(4/delta)) / sqrt(n) + 8 e^eps0 / n))

    FMT prove it only for ``eps0 <= ln(n / (16 ln(2/delta)))``. Hanna et al.
    do not restate this condition; we check it. (FMT's reference code tests
    the stricter ``ln(n / (16 ln(4/delta)))``; we follow the theorem.)

``method="numerical"`` (a tighter bound, valid for every eps0 > 0 and n >= 1)
    FMT Theorem 3.2 (the "clones" reduction). Let C ~ Bin(n-1, e^-eps0),
    A | C ~ Bin(C, 1/2) and Delta ~ Bern(e^eps0/(e^eps0+1)), and put
    P = (A + Delta, C - A + 1 - Delta) and Q = (A + 1 - Delta, C - A + Delta).
    If P and Q are (eps, delta)-indistinguishable, then shuffling n reports
    of eps0-DP local randomizers (which may be chosen adaptively) is
    (eps, delta)-DP. Theorem 3.1 is proved by bounding the divergence of
    this same pair, so the numerical value is never larger than the closed
    form. As in FMT's numerical procedure (App. E of the arXiv version), we
    compute delta(eps) of the pair (P, Q) and search for the smallest eps
    with delta(eps) <= delta. The search is Brent's method, not plain
    bisection, to a relative tolerance of 1e-13. :func:`_clones_delta`
    describes how delta(eps) is computed and how the truncation is bounded.
    Note: FMT's later "stronger clones" analysis (SODA 2023) uses
    C ~ Bin(n-1, 2/(e^eps0+1)). Its errata restricts that analysis to a
    subclass of randomizers, so we do not use it here.

The guarantee: if each of the n users sends one report made by an
eps0-DP local randomizer (pure eps0-LDP; for Alg. 3 this is the Laplace noise
on the user's reward, with scale set by the declared reward range), then the
shuffled reports are (eps, delta)-DP in the shuffle model. Two datasets are
neighbours when they differ in one user's input, so what is protected is each
user's reward report. Both methods need a pure eps0 (Hanna et al., Remark 10:
approximate-LDP randomizers such as Gaussian noise are not covered).

Valid argument ranges (a ValueError names the argument otherwise):
``eps0`` finite and > 0, ``eps`` finite and > 0, ``n`` an integer >= 1
(integral floats such as 1e4 are accepted), ``0 < delta < 1``, and
``method`` either ``"closed-form"`` or ``"numerical"``.

Why we return ``min(f, eps0)``: the shuffler's output is a post-processing
of the n reports, and changing one user's input changes only that user's
eps0-DP report. So the shuffled output is (eps0, 0)-DP, and hence
(eps0, delta)-DP, with no appeal to amplification. The closed form itself can
exceed eps0 near the validity limit when delta is large. For example, at
n = 25, delta = 0.5, eps0 = 0.1 (limit 0.1197) it gives f = 0.1300. In that
case we report the trivial eps0. The numerical method never exceeds eps0,
because the pair (P, Q) has delta(eps0) = 0. For eps0 > 700 (e^eps0 would
overflow) the numerical method returns eps0 itself: Pr[C >= 1] <= n e^-eps0
is then below 1e-290.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpbandits._sizes import check_bytes, check_work, work_limit
from dpbandits._validation import in_open_unit, positive, positive_int

__all__ = [
    "closed_form_validity_limit",
    "shuffle_amplification",
    "shuffle_local_epsilon",
]

_METHODS = ("closed-form", "numerical")

# delta(eps) is computed to a relative floating-point error below ~1e-12 (see
# _clones_delta). We compare it with delta * (1 - _SAFETY), which keeps the
# numerical bound valid even if that error were a thousand times larger. The
# cost is a relative change of about 1e-10 in the returned epsilon.
_SAFETY = 1e-9
# Truncation targets for the numerical sum. They affect only tightness: every
# dropped term is replaced by an upper bound.
_WINDOW_LOG_MARGIN = 25.0  # keep the c with Pr[C = c] >= e^-25 delta
_ROW_LOG_DROP = 30.0  # sum each row until the pmf has dropped by ~e^-30
_CHUNK_ELEMENTS = 1 << 20  # rows x terms per chunk (about 8 MB per float array)
_XTOL_REL = 1e-13  # relative tolerance of the root searches
# Above this eps0, e^eps0 nears overflow; then Pr[C >= 1] <= n e^-eps0 < 1e-290
# for any realistic n, so shuffling cannot amplify and the numerical method
# reports the trivial bound eps0 (see shuffle_amplification).
_EPS0_MAX = 700.0
_MAX_ITER = 200


# ------------------------------------------------------------------ public API


def closed_form_validity_limit(n: int, delta: float) -> float:
    """Largest eps0 for which the closed form (FMT Thm 3.1) is proven.

    The limit is ``ln(n / (16 ln(2/delta)))`` (natural logarithms), as stated in
    Feldman, McMillan & Talwar, FOCS 2021, Theorem 3.1. It is <= 0, so that no
    eps0 > 0 is covered, when ``n <= 16 ln(2/delta)`` (n <= 233 at
    delta = 1e-6).

    Arguments: ``n`` an integer >= 1 and ``0 < delta < 1``.
    """
    n = positive_int("n", n)
    delta = in_open_unit("delta", delta)
    return _validity_limit(n, delta)


def shuffle_amplification(local_epsilon: float, n: int, delta: float, method: str = "closed-form") -> float:
    """Central epsilon of shuffling ``n`` reports of a ``local_epsilon``-LDP randomizer.

    This is the function f_{n,delta}(eps0) of Hanna, Girgis, Fragouli &
    Diggavi, §V, Alg. 3 (defined before Theorem 3 and restated as Eq. (37) in
    §IX-A). The shuffled reports are (eps, delta)-DP in the shuffle model for
    the returned eps, and what is protected is each user's reward report.
    See the module docstring for the model and the guarantee.

    Parameters
    ----------
    local_epsilon:
        Pure LDP parameter eps0 of each report, finite and > 0 (the paper's
        eps0; every public function of the package spells its privacy
        parameters ``epsilon`` / ``local_epsilon``).
    n:
        Number of shuffled reports (the batch size n_i), an integer >= 1.
    delta:
        Target delta of the central guarantee, in (0, 1).
    method:
        ``"closed-form"`` uses the formula of Hanna et al. Eq. (37), which is
        Feldman, McMillan & Talwar (FOCS 2021), Thm 3.1. It is valid only for
        ``eps0 <= ln(n / (16 ln(2/delta)))``; outside that range a ValueError
        names ``eps0``. The result is ``min(f, eps0)``; see the module
        docstring for why.
        ``"numerical"`` uses the tighter bound of FMT Thm 3.2: the smallest
        eps with delta(eps) <= delta for the clones pair (P, Q), computed with
        truncation error bounded and added. It is valid for every eps0 > 0
        and n >= 1, and never exceeds the closed form where the closed form
        is valid.

    Returns
    -------
    float
        eps in [0, eps0]. The value 0 occurs only when the two distributions
        of the clones pair are already within total variation delta.

    Examples
    --------
    >>> round(shuffle_amplification(1.0, 10_000, 1e-6), 4)
    0.214
    >>> round(shuffle_amplification(1.0, 10_000, 1e-6, method="numerical"), 3)
    0.053
    """
    eps0 = positive("local_epsilon", local_epsilon)
    n = positive_int("n", n)
    delta = in_open_unit("delta", delta)
    method = _check_method(method)
    if method == "closed-form":
        limit = _validity_limit(n, delta)
        if not eps0 <= limit:
            raise ValueError(
                f"invalid argument `local_epsilon`: the closed form of Feldman, McMillan & Talwar "
                f"(FOCS 2021, Thm 3.1; Hanna et al. Eq. (37)) is proven only for "
                f"eps0 <= ln(n / (16 ln(2/delta))) = {_fmt_limit(limit)} "
                f"(n = {n}, delta = {delta:g}), got eps0 = {eps0!r}; "
                f"use method='numerical' (valid for every eps0) or a larger n"
            )
        return min(_closed_form(eps0, n, delta), eps0)
    if eps0 > _EPS0_MAX:
        return eps0  # trivial (eps0, 0) bound; amplification is below 1e-290 here
    return _numerical_epsilon(eps0, n, delta)


def shuffle_local_epsilon(epsilon: float, n: int, delta: float, method: str = "closed-form") -> float:
    """Largest eps0 whose ``n`` shuffled reports are (epsilon, delta)-DP.

    This is eps0^(i) = f^{-1}_{n_i,delta}(eps) in line 8 of Alg. 3 of Hanna
    et al. (§V). It inverts :func:`shuffle_amplification`, which is
    increasing in eps0, by a bracketing root search to a relative tolerance
    of about 1e-13. The returned eps0 is always one whose guarantee has been
    checked (never a point just past the boundary).

    Parameters
    ----------
    epsilon:
        Target central epsilon, finite and > 0.
    n:
        Number of shuffled reports, an integer >= 1.
    delta:
        Target delta, in (0, 1).
    method:
        ``"closed-form"`` returns ``max(eps, e*)``. Here e* is the largest
        eps0 <= ln(n / (16 ln(2/delta))) with min(f_{n,delta}(eps0), eps0)
        <= eps. The term ``eps`` is the bound without amplification:
        eps-LDP reports are (eps, 0)-DP after shuffling. So the result is
        never below eps, and when n is too small for the closed form to
        apply at all, it is ``eps``. When e* lies strictly inside the valid
        range, ``shuffle_amplification(result, n, delta, "closed-form")``
        equals ``eps`` to about 1e-13.
        ``"numerical"`` returns the largest eps0 with delta_{P,Q}(eps) <= delta
        for the FMT Thm 3.2 pair, which is always >= eps. It is never smaller
        than the closed-form answer, so it calls for less noise.

    Examples
    --------
    >>> e0 = shuffle_local_epsilon(0.214, 10_000, 1e-6)
    >>> round(e0, 3)
    1.0
    """
    return shuffle_local_epsilon_checked(
        positive("epsilon", epsilon), positive_int("n", n), in_open_unit("delta", delta), method
    )


def shuffle_local_epsilon_checked(eps: float, n: int, delta: float, method: str) -> float:
    """:func:`shuffle_local_epsilon` on an epsilon > 0, an integer n >= 1
    and a delta in (0, 1) that its caller validated at its own public
    boundary (``method`` is checked here)."""
    method = _check_method(method)
    cf = _closed_form_inverse(eps, n, delta)
    if method == "closed-form":
        return cf
    return _numerical_local_epsilon(eps, n, delta, cf)


# ---------------------------------------------------------------- closed form


def _check_method(method: str) -> str:
    if method not in _METHODS:
        raise ValueError(f"invalid argument `method`: must be one of {_METHODS}, got {method!r}")
    return method


def _validity_limit(n: int, delta: float) -> float:
    """ln(n / (16 ln(2/delta))): FMT Thm 3.1's condition on eps0."""
    return math.log(n) - math.log(16.0 * math.log(2.0 / delta))


def _fmt_limit(limit: float) -> str:
    return f"{limit:.6g}" + (" (no eps0 > 0 qualifies)" if limit <= 0.0 else "")


def _closed_form(eps0: float, n: int, delta: float) -> float:
    """Hanna et al. Eq. (37) = FMT Thm 3.1, with no validity check.

    (e^eps0 - 1)/(e^eps0 + 1) is written as tanh(eps0/2), which is the same
    number and more precise for small eps0.
    """
    e = math.exp(eps0)
    bracket = 8.0 * math.sqrt(e * math.log(4.0 / delta)) / math.sqrt(n) + 8.0 * e / n
    return math.log1p(math.tanh(0.5 * eps0) * bracket)


def _closed_form_inverse(eps: float, n: int, delta: float) -> float:
    """max(eps, largest valid eps0 with min(f(eps0), eps0) <= eps)."""
    limit = _validity_limit(n, delta)
    if not limit > 0.0:
        return eps  # the closed form covers no eps0: no amplification

    def g(e0: float) -> float:
        return min(_closed_form(e0, n, delta), e0)  # increasing in e0

    if g(limit) <= eps:
        return max(limit, eps)
    # Here eps < g(limit) <= limit and g(eps) <= eps: the boundary is in [eps, limit).
    return _last_feasible(lambda e0: g(e0) - eps, eps, limit)


# ---------------------------------------------------------- root search


def _last_feasible(h: Callable[[float], float], lo: float, hi: float) -> float:
    """Boundary of {x : h(x) <= 0} in [lo, hi], given h(lo) <= 0 < h(hi).

    h is increasing for every caller. The search is Brent's method on the
    bracket, and it returns the feasible end (h <= 0) of a final bracket of
    relative width about _XTOL_REL.
    """
    return _bracket_search(h, lo, hi, feasible_low=True)


def _first_feasible(h: Callable[[float], float], lo: float, hi: float) -> float:
    """Boundary of {x : h(x) <= 0} in [lo, hi], given h(lo) > 0 >= h(hi)."""
    return _bracket_search(h, lo, hi, feasible_low=False)


def _bracket_search(
    h: Callable[[float], float], lo: float, hi: float, *, feasible_low: bool
) -> float:
    """Brent's method (inverse quadratic / secant / bisection) on a bracket.

    This is the classic zeroin algorithm, in the form of scipy's brentq. Only
    the last step differs: we return whichever end of the final bracket is
    feasible (h <= 0), not the best estimate, so every returned value has
    been checked.
    """
    # x_cur starts at the feasible end, x_pre at the infeasible one.
    x_pre, x_cur = (hi, lo) if feasible_low else (lo, hi)
    f_pre, f_cur = h(x_pre), h(x_cur)
    if not f_cur <= 0.0 < f_pre:
        raise RuntimeError("shuffle: root bracket lost (internal error)")
    x_blk = f_blk = 0.0
    s_pre = s_cur = 0.0
    for _ in range(_MAX_ITER):
        if (f_pre <= 0.0) != (f_cur <= 0.0):
            x_blk, f_blk = x_pre, f_pre
            s_pre = s_cur = x_cur - x_pre
        if abs(f_blk) < abs(f_cur):
            x_pre, x_cur, x_blk = x_cur, x_blk, x_cur
            f_pre, f_cur, f_blk = f_cur, f_blk, f_cur
        tol = 0.5 * (1e-300 + _XTOL_REL * abs(x_cur))
        s_bis = 0.5 * (x_blk - x_cur)
        if f_cur == 0.0 or abs(s_bis) < tol:
            break
        finite = math.isfinite(f_pre) and math.isfinite(f_cur) and math.isfinite(f_blk)
        if finite and abs(s_pre) > tol and abs(f_cur) < abs(f_pre):
            if x_pre == x_blk:  # secant
                s_try = -f_cur * (x_cur - x_pre) / (f_cur - f_pre)
            else:  # inverse quadratic interpolation
                d_pre = (f_pre - f_cur) / (x_pre - x_cur)
                d_blk = (f_blk - f_cur) / (x_blk - x_cur)
                s_try = -f_cur * (f_blk * d_blk - f_pre * d_pre) / (d_blk * d_pre * (f_blk - f_pre))
            if 2.0 * abs(s_try) < min(abs(s_pre), 3.0 * abs(s_bis) - tol):
                s_pre, s_cur = s_cur, s_try
            else:
                s_pre = s_cur = s_bis
        else:
            s_pre = s_cur = s_bis
        x_pre, f_pre = x_cur, f_cur
        x_cur += s_cur if abs(s_cur) > tol else (tol if s_bis > 0 else -tol)
        f_cur = h(x_cur)
    # The bracket is [x_cur, x_blk] with h(x_cur) and h(x_blk) of opposite
    # feasibility (or h(x_cur) == 0): return its feasible end.
    return x_cur if f_cur <= 0.0 else x_blk


# ------------------------------------------------------- numerical (FMT 3.2)


def _numerical_epsilon(eps0: float, n: int, delta: float) -> float:
    """Smallest eps with delta_{P,Q}(eps) <= delta for FMT Thm 3.2's pair."""
    target = delta * (1.0 - _SAFETY)
    plan = _ClonesPlan.build(eps0, n, delta)

    def h(eps: float) -> float:
        return _log_ratio(_clones_delta(eps, plan), target)

    if h(0.0) <= 0.0:
        return 0.0
    hi = eps0  # delta(eps0) = 0 exactly
    limit = _validity_limit(n, delta)
    if eps0 <= limit:
        cf = _closed_form(eps0, n, delta)
        if cf < hi and h(cf) <= 0.0:
            hi = cf  # the closed form bounds the numerical value: a tighter start
    return _first_feasible(h, 0.0, hi)


def _numerical_local_epsilon(eps: float, n: int, delta: float, cf: float) -> float:
    """Largest eps0 with delta_{P,Q}(eps; eps0) <= delta."""
    target = delta * (1.0 - _SAFETY)

    def h(eps0: float) -> float:
        return _log_ratio(_clones_delta(eps, _ClonesPlan.build(eps0, n, delta)), target)

    if eps >= _EPS0_MAX:
        return eps  # trivial bound: eps-LDP reports are (eps, 0)-DP after shuffling
    lo = max(cf, eps)  # feasible: eps0 = eps gives delta = 0, and the closed form
    if lo > _EPS0_MAX or h(lo) > 0.0:  # is a valid (looser) certificate
        lo = eps
    hi = min(max(2.0 * lo, lo + 1.0), _EPS0_MAX)
    while h(hi) <= 0.0:  # an eps0 far above ln(n) has C = 0 w.h.p.: infeasible
        if hi >= _EPS0_MAX:
            return _EPS0_MAX  # certified; larger eps0 are not examined
        lo, hi = hi, min(2.0 * hi, _EPS0_MAX)
    return _last_feasible(h, lo, hi)


def _log_ratio(value: float, target: float) -> float:
    """log(value / target); -inf when value == 0."""
    if value <= 0.0:
        return -math.inf
    return math.log(value) - math.log(target)


#: A lower bound on the bytes of a window of clone counts, per count: the
#: counts (int64) and their log-probabilities and probabilities (float64),
#: one temporary more.
_WINDOW_BYTES = 32
#: A lower bound on the seconds the numerical bound spends per count of
#: its window: building the window and the few evaluations of delta(eps)
#: every search makes take about 4 microseconds per count (measured on
#: 4.7e5 counts); a tenth of it.
_WINDOW_SECONDS = 4e-7


@dataclass(frozen=True)
class _ClonesPlan:
    """Everything about C ~ Bin(n-1, e^-eps0) that does not depend on eps.

    ``c`` is the window of clone counts we sum over exactly, ``pi`` their
    probabilities, and ``mass_out`` an upper bound on Pr[C outside the window].
    """

    eps0: float
    c: NDArray[np.int64]
    pi: NDArray[np.float64]
    mass_out: float

    @staticmethod
    def build(eps0: float, n: int, delta: float) -> _ClonesPlan:
        big_n = n - 1
        if big_n == 0:
            return _ClonesPlan(eps0, np.zeros(1, dtype=np.int64), np.ones(1), 0.0)
        p = math.exp(-eps0)
        q = -math.expm1(-eps0)
        log_p, log_q = -eps0, math.log1p(-p)
        if p * big_n < 1e-290:  # C = 0 except on an event of probability <= N p
            return _ClonesPlan(
                eps0, np.zeros(1, dtype=np.int64), np.array([math.exp(big_n * log_q)]), 1e-290
            )
        mean = big_n * p
        sd = math.sqrt(big_n * p * q)
        threshold = math.log(delta) - _WINDOW_LOG_MARGIN
        k = math.sqrt(2.0 * (_WINDOW_LOG_MARGIN - math.log(delta))) + 3.0
        # Generous candidate range (Gaussian width plus room for skewed,
        # Poisson-like tails), then trimmed to where log pmf >= threshold.
        lo = max(0, math.floor(mean - k * sd - k * k))
        hi = min(big_n, math.ceil(mean + k * sd + k * k))
        width = hi - lo + 1
        check_bytes("n", n, _WINDOW_BYTES * width, f"the window of {width} clone counts of the numerical bound")
        # The window holds at most 2 (k sd + k^2) + 3 counts, sd = sqrt(n p q):
        # the largest n whose window fits the work limit, for the message.
        sd_max = max(0.0, ((work_limit()[0] / _WINDOW_SECONDS - 3.0) / 2.0 - k * k) / k)
        check_work("n", n, width * _WINDOW_SECONDS,
                   f"the numerical bound over a window of {width} clone counts (use method='closed-form')",
                   max(1, int(sd_max * sd_max / (p * q))))
        c = np.arange(lo, hi + 1, dtype=np.int64)
        log_pi = _log_binom_pmf(c, big_n, p, q, log_p, log_q)
        keep = np.nonzero(log_pi >= threshold)[0]
        if keep.size == 0:  # cannot happen (the mode is in range); stay safe
            keep = np.array([int(np.argmax(log_pi))])
        i0, i1 = int(keep[0]), int(keep[-1])
        c = c[i0 : i1 + 1]
        pi = np.exp(log_pi[i0 : i1 + 1])
        mass_out = _binom_tail_bound_below(int(c[0]), big_n, p, q, float(pi[0]))
        mass_out += _binom_tail_bound_above(int(c[-1]), big_n, p, q, float(pi[-1]))
        return _ClonesPlan(eps0, c, pi, min(mass_out, 1.0))


def _binom_tail_bound_above(c_hi: int, big_n: int, p: float, q: float, pmf_hi: float) -> float:
    """Upper bound on Pr[Bin(N, p) > c_hi] from the pmf at c_hi.

    The ratio pmf(c+1)/pmf(c) = (N-c)/(c+1) * p/q decreases in c, so the tail
    is at most pmf(c_hi) * r / (1 - r) with r the ratio at c_hi, when r < 1.
    """
    if c_hi >= big_n:
        return 0.0
    r = (big_n - c_hi) / (c_hi + 1.0) * (p / q)
    return pmf_hi * r / (1.0 - r) if r < 1.0 else 1.0


def _binom_tail_bound_below(c_lo: int, big_n: int, p: float, q: float, pmf_lo: float) -> float:
    """Upper bound on Pr[Bin(N, p) < c_lo] (ratio pmf(c-1)/pmf(c) increases in c)."""
    if c_lo <= 0:
        return 0.0
    r = c_lo / (big_n - c_lo + 1.0) * (q / p)
    return pmf_lo * r / (1.0 - r) if r < 1.0 else 1.0


def _clones_delta(eps: float, plan: _ClonesPlan) -> float:
    """Upper bound on delta(eps) = sup_S P(S) - e^eps Q(S) for FMT Thm 3.2's pair.

    Derivation. Given C = c, the two coordinates of P and of Q sum to c + 1, so
    c is seen by the adversary and

        delta(eps) = sum_c Pr[C = c] * D_c,   D_c = sum_x max(0, P_c(x) - e^eps Q_c(x)),

    where x is the first coordinate and, with b_c = pmf of Bin(c, 1/2) and
    alpha = e^eps0/(e^eps0 + 1),

        P_c(x) = alpha b_c(x-1) + (1-alpha) b_c(x),   Q_c(x) = alpha b_c(x) + (1-alpha) b_c(x-1).

    So D_c = sum_x max(0, t_c(x)) with t_c(x) = A b_c(x-1) + B b_c(x), where
    A = alpha - e^eps (1 - alpha) = (1 - e^(eps-eps0))/(1 + e^-eps0) and
    B = (1 - alpha) - e^eps alpha. The ratio P_c/Q_c increases in
    x/(c+1-x), so t_c(x) > 0 exactly on the tail where
    x/(c+1-x) > R = (e^(eps+eps0) - 1)/(e^eps0 - e^eps), that is,
    x >= k_c = floor((c+1) R/(1+R)) + 1. Summing over that tail, with
    S_c(k) = Pr[Bin(c, 1/2) >= k] and A + B = 1 - e^eps:

        D_c = A S_c(k_c - 1) + B S_c(k_c) = A b_c(k_c - 1) - (e^eps - 1) S_c(k_c).

    The map x -> c+1-x swaps P_c and Q_c, so delta(eps) is the same in both
    directions and one direction suffices. For eps >= eps0, A <= 0 and
    delta = 0.

    Numerics, for the window of c values kept by :class:`_ClonesPlan`:

    * b_c(k_c - 1) comes from Loader's saddle-point formula
      (:func:`_log_binom_pmf`), accurate to about 1e-12 relative for c up to
      1e7. Differences of lgamma would lose about 1e-9 at c ~ 1e6.
    * S_c(k_c) is needed only as a lower bound, because it enters with a
      negative sign. At one "anchor" row in every block of rows it is the
      partial sum of b_c(y) for y = k_c, ..., k_c + J - 1. The rest of the
      row, which is dropped, is below e^-30 of the first term. Inside a block
      it is carried along exactly, using

          S_{c+1}(k) = S_c(k) + b_c(k-1)/2,   S_{c+1}(k+1) = S_{c+1}(k) - b_{c+1}(k)

      (the threshold k_c rises by 0 or 1 per row, since R/(1+R) < 1). The
      recursion adds exact terms, so each propagated value is still the true
      tail minus the same dropped remainder: a lower bound.
    * If rounding put k_c one off the true sign change of t_c, the affected
      boundary term (which is then ~0) is corrected for explicitly.
    * Clone counts outside the window contribute at most A * mass_out, since
      D_c <= A. That bound is added.

    The cost is O(number of rows), about 17 sd of Bin(n-1, e^-eps0) rows, plus
    O(rows) for the anchors.
    """
    eps0 = plan.eps0
    if eps >= eps0:
        return 0.0
    e = math.exp(eps)  # eps < eps0 <= _EPS0_MAX: no overflow
    em = math.exp(-eps0)
    a_coef = -math.expm1(eps - eps0) / (1.0 + em)  # alpha - e^eps (1 - alpha) > 0
    b_coef = -(e - em) / (1.0 + em)  # (1 - alpha) - e^eps alpha < 0
    # R/(1+R) with R = u/v, u = 1 - e^(-eps-eps0), v = e^-eps - e^-eps0 (no overflow)
    u = -math.expm1(-eps - eps0)
    v = -math.exp(-eps) * math.expm1(eps - eps0)
    rho = u / (u + v)  # in [1/2, 1]

    c = plan.c
    cf = c.astype(np.float64)
    k = np.minimum(np.floor((cf + 1.0) * rho).astype(np.int64) + 1, c + 1)
    kf = k.astype(np.float64)
    half_log = -math.log(2.0)
    b_km1 = np.exp(_log_binom_pmf(k - 1, c, 0.5, 0.5, half_log, half_log))
    b_k = b_km1 * (cf - kf + 1.0) / kf  # 0 when k = c + 1
    b_km2 = b_km1 * (kf - 1.0) / (cf - kf + 2.0)  # 0 when k = 1
    tail = _tail_lower_bounds(c, k, b_km1, b_k)

    d = a_coef * b_km1 - math.expm1(eps) * tail
    # Boundary terms: t(k) should be > 0 and t(k-1) <= 0; correct if rounding
    # put k one off the sign change (both terms are then ~0).
    t_k = a_coef * b_km1 + b_coef * b_k
    t_km1 = a_coef * b_km2 + b_coef * b_km1
    d += np.maximum(t_km1, 0.0) + np.maximum(-t_k, 0.0)
    d = np.maximum(d, 0.0)
    return float(np.dot(plan.pi, d)) + a_coef * plan.mass_out


def _tail_lower_bounds(
    c: NDArray[np.int64],
    k: NDArray[np.int64],
    b_km1: NDArray[np.float64],
    b_k: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Lower bounds on S_c(k_c) = Pr[Bin(c, 1/2) >= k_c] for consecutive c."""
    w = c.size
    step = np.diff(k)
    if step.size and (step.min() < 0 or step.max() > 1):
        raise RuntimeError("shuffle: threshold not monotone (internal error)")
    cf = c.astype(np.float64)
    # Row length so that the pmf has fallen by ~e^-_ROW_LOG_DROP (Gaussian
    # estimate; any length gives a valid lower bound).
    sd = 0.5 * np.sqrt(cf)
    z = np.maximum((k - 0.5 * cf) / np.where(sd > 0.0, sd, 1.0), 0.0)
    j_row = np.ceil(sd * (np.sqrt(z * z + 2.0 * _ROW_LOG_DROP) - z)) + 2.0
    j_row = np.minimum(j_row, cf - k + 2.0)  # nothing beyond y = c
    j_typ = max(1, int(np.max(j_row)))
    block = max(64, -(-j_typ // 8))  # anchors cost ~ w * 8 terms at most
    anchors = np.arange(0, w, block)
    s_anchor = _partial_tails(c[anchors], k[anchors], b_k[anchors], j_row[anchors])
    if block >= w:
        inc_len = w
    else:
        inc_len = -(-w // block) * block
    # inc[i + 1] = S_{i+1} - S_i = b_{c_i}(k_i - 1)/2 - step_i b_{c_{i+1}}(k_{i+1} - 1)
    inc = np.zeros(inc_len)
    if w > 1:
        inc[1:w] = 0.5 * b_km1[:-1] - step * b_km1[1:]
    blocks = inc.reshape(-1, block) if inc_len >= block else inc.reshape(1, -1)
    blocks[:, 0] = 0.0
    tail = (s_anchor[:, None] + np.cumsum(blocks, axis=1)).ravel()[:w]
    return np.maximum(tail, 0.0)


def _partial_tails(
    c: NDArray[np.int64],
    k: NDArray[np.int64],
    b_k: NDArray[np.float64],
    j_row: NDArray[np.float64],
) -> NDArray[np.float64]:
    """sum_{y = k}^{k + J - 1} Bin(c, 1/2) pmf(y) per row (a lower bound on the tail)."""
    out = np.zeros(c.size)
    j_max = int(max(1.0, float(np.max(j_row)))) if c.size else 1
    rows_per_chunk = max(1, _CHUNK_ELEMENTS // j_max)
    for s in range(0, c.size, rows_per_chunk):
        cs = c[s : s + rows_per_chunk].astype(np.float64)[:, None]
        ks = k[s : s + rows_per_chunk]
        bs = b_k[s : s + rows_per_chunk]
        js = j_row[s : s + rows_per_chunk]
        jj = int(max(1.0, float(np.max(js))))
        y = ks.astype(np.float64)[:, None] + np.arange(jj - 1, dtype=np.float64)[None, :]
        with np.errstate(divide="ignore"):
            log_ratio = np.log(np.maximum(cs - y, 0.0)) - np.log(y + 1.0)
            log_b = np.empty((ks.size, jj))
            log_b[:, 0] = np.log(bs)
        np.cumsum(log_ratio, axis=1, out=log_b[:, 1:])
        log_b[:, 1:] += log_b[:, :1]
        terms = np.exp(log_b)
        terms[np.arange(jj)[None, :] >= js[:, None]] = 0.0  # row lengths differ
        out[s : s + rows_per_chunk] = terms.sum(axis=1)
    return out


# ------------------------------------------------------------ binomial pmf


_LOG_2PI = math.log(2.0 * math.pi)
# stirlerr(k) = ln k! - ln(sqrt(2 pi k) (k/e)^k), exact through lgamma for small k.
_STIRLERR_SMALL = np.array(
    [0.0]
    + [math.lgamma(k + 1.0) - (k + 0.5) * math.log(k) + k - 0.5 * _LOG_2PI for k in range(1, 16)]
)


def _stirlerr(k: NDArray[np.float64]) -> NDArray[np.float64]:
    """Stirling-series error ln k! - ln(sqrt(2 pi k)(k/e)^k) for integers k >= 1."""
    k = np.asarray(k, dtype=np.float64)
    out = np.empty_like(k)
    small = k < 16
    if np.any(small):
        out[small] = _STIRLERR_SMALL[k[small].astype(np.int64)]
    big = ~small
    if np.any(big):
        kb = k[big]
        s2 = 1.0 / (kb * kb)
        # 1/(12k) - 1/(360k^3) + 1/(1260k^5) - 1/(1680k^7) + 1/(1188k^9); error < 1e-17 for k >= 16
        out[big] = (
            1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - s2 / 1188) * s2) * s2) * s2
        ) / kb
    return out


def _bd0(x: NDArray[np.float64], mu: NDArray[np.float64]) -> NDArray[np.float64]:
    """Loader's deviance term x ln(x/mu) + mu - x >= 0, computed without cancellation."""
    x = np.asarray(x, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    x, mu = np.broadcast_arrays(x, mu)
    u = (x - mu) / mu
    near = np.abs(u) < 0.5
    out = np.empty(x.shape, dtype=np.float64)
    un = u[near]
    out[near] = mu[near] * ((1.0 + un) * np.log1p(un) - un)
    far = ~near
    xf, mf = x[far], mu[far]
    with np.errstate(divide="ignore", invalid="ignore"):
        val = xf * np.log(xf / mf) + mf - xf
    out[far] = np.where(xf == 0.0, mf, val)
    return out


def _log_binom_pmf(
    k: NDArray[np.int64] | int,
    n: NDArray[np.int64] | int,
    p: float,
    q: float,
    log_p: float,
    log_q: float,
) -> NDArray[np.float64]:
    """ln Pr[Bin(n, p) = k], elementwise, with q = 1 - p given separately.

    Loader (2000), "Fast and accurate computation of binomial probabilities"
    (the algorithm of R's dbinom):
    ln pmf = stirlerr(n) - stirlerr(k) - stirlerr(n-k) - bd0(k, np) - bd0(n-k, nq)
    + (1/2) ln(n / (2 pi k (n-k))) for 0 < k < n. The relative error is about
    1e-13 for n up to 1e7.
    """
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64))
    out = np.full(k_arr.shape, -np.inf)
    edge0 = (k_arr == 0) & (n_arr >= 0)
    out[edge0] = n_arr[edge0] * log_q
    edge_n = (k_arr == n_arr) & (n_arr > 0)
    out[edge_n] = n_arr[edge_n] * log_p
    inner = (k_arr > 0) & (k_arr < n_arr)
    if np.any(inner):
        kf = k_arr[inner].astype(np.float64)
        nf = n_arr[inner].astype(np.float64)
        lc = (
            _stirlerr(nf)
            - _stirlerr(kf)
            - _stirlerr(nf - kf)
            - _bd0(kf, nf * p)
            - _bd0(nf - kf, nf * q)
        )
        out[inner] = lc + 0.5 * (np.log(nf) - _LOG_2PI - np.log(kf) - np.log(nf - kf))
    return out
