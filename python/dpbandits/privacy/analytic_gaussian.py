"""Exact (epsilon, delta) of the Gaussian mechanism: the analytic Gaussian
mechanism of Balle & Wang 2018.

A Gaussian mechanism adds N(0, sigma^2 I) to a statistic of L2 sensitivity
Delta. Everything about its privacy depends on one number, the
*normalized sensitivity* mu = Delta / sigma (the mechanism is mu-GDP,
Dong, Roth & Su 2022, Def. 2.6). Balle & Wang 2018, Thm. 8, give the exact
privacy profile: the mechanism is (epsilon, delta)-DP if and only if

    delta >= delta_mu(epsilon) = Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu),

where Phi is the standard normal CDF. The classical calibration
sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon (Dwork & Roth 2014, Thm. A.1;
Shariff & Sheffet App. A.1) is a sufficient condition for epsilon < 1; the
functions here are necessary and sufficient, hence never more noise than
needed and valid for every epsilon >= 0.

>>> from dpbandits.privacy import gaussian_delta, gaussian_epsilon, analytic_gaussian_sigma
>>> round(gaussian_delta(1.0, 1.0), 10)
0.1269367375
>>> round(analytic_gaussian_sigma(1.0, 1e-5, sensitivity=1.0), 6)
3.730632

Numerics. delta_mu is evaluated in log space, ln delta = ln Phi(a) +
ln(1 - exp(epsilon + ln Phi(b) - ln Phi(a))), with ln Phi computed from
``math.erfc`` and, far in the lower tail (x < -20), from the Laplace
continued fraction of the Mills ratio, so e^epsilon Phi(b) neither
overflows nor underflows for any finite epsilon. The inverses bisect to
adjacent floating-point numbers (relative error ~1e-16 in the argument)
and return the endpoint on the private side: the returned epsilon (or mu)
satisfies ``gaussian_delta(mu, epsilon) <= delta`` exactly as computed.
Relative error of gaussian_delta, checked against 50-digit mpmath for mu
in [1e-8, 1e3]: below 4e-14 for delta >= 1e-30, below 3e-13 down to 1e-300.

Valid ranges (every function): mu > 0 finite, epsilon >= 0 finite,
0 < delta < 1, sensitivity > 0 finite.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from dpbandits._validation import in_open_unit, non_negative, positive

__all__ = [
    "analytic_gaussian_sigma",
    "compose_gaussian_mu",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "gaussian_zcdp_rho",
]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
_MILLS_TERMS = 40  # continued-fraction depth; converged to 1 ulp for x <= -20
_MAX_BISECTIONS = 2_000  # bisection stops earlier, at adjacent floats
_LOG_CLOSED_FORM_MAX_RATIO = math.log(0.9)  # closed form loses < 4 bits
_QUADRATURE_MAX_A = 5.0  # for a > 5 the closed form never cancels badly
_PANELS = 8
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)
_GAUSS_LEGENDRE = tuple(zip(map(float, _NODES), map(float, _WEIGHTS), strict=True))


def _log_normal_cdf(x: float) -> float:
    """ln Phi(x), accurate to a few ulp for every finite x."""
    if x > 0.0:
        return math.log1p(-0.5 * math.erfc(x * _SQRT_HALF))
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x * _SQRT_HALF))
    # Phi(-y) = phi(y) / (y + 1/(y + 2/(y + 3/(y + ...)))), y > 0 (Laplace's
    # continued fraction for the Mills ratio; Abramowitz & Stegun 26.2.14).
    y = -x
    fraction = y
    for k in range(_MILLS_TERMS, 0, -1):
        fraction = y + k / fraction
    return -0.5 * y * y - _HALF_LOG_2PI - math.log(fraction)


def _log_gaussian_delta(mu: float, epsilon: float) -> float:
    """ln delta_mu(epsilon) of Balle & Wang 2018, Thm. 8 (-inf when it underflows).

    Closed form Phi(a) - e^epsilon Phi(a - mu), a = mu/2 - epsilon/mu, when
    the second term is at most 0.9 times the first; otherwise the two terms
    nearly cancel (small mu) and the same delta is integrated directly as
    the hockey-stick divergence between N(mu, 1) and N(0, 1): substituting
    x = epsilon/mu + mu/2 + s (the privacy loss mu x - mu^2/2 exceeds
    epsilon for s > 0),

        delta = int_0^inf phi(s - a) (1 - e^{-mu s}) ds,

    whose integrand is positive, so no digits cancel.
    """
    a = 0.5 * mu - epsilon / mu
    log_first = _log_normal_cdf(a)
    log_ratio = epsilon + _log_normal_cdf(a - mu) - log_first
    if log_ratio <= _LOG_CLOSED_FORM_MAX_RATIO or a > _QUADRATURE_MAX_A:
        if not log_ratio < 0.0:  # delta below the resolution of the logs
            return -math.inf
        return log_first + math.log(-math.expm1(log_ratio))
    return _log_hockey_stick_integral(mu, -a)


def _log_hockey_stick_integral(mu: float, y: float) -> float:
    """ln int_0^inf phi(s + y) (1 - e^{-mu s}) ds by composite Gauss-Legendre.

    For y > 0, phi(s + y) = phi(y) e^{-y s - s^2/2} decays on the scale
    1/y, so the range is [0, 40/y] for y > 1, else [0, 12 + max(-y, 0)]. Beyond,
    the integrand is below e^-40 of its mass.
    """
    shift = max(y, 0.0)  # factor phi(shift) out; s (s + 2y) avoids cancelling (s + y)^2 - y^2
    upper = 40.0 / y if y > 1.0 else 12.0 - min(y, 0.0)
    width = upper / _PANELS
    total = 0.0
    for panel in range(_PANELS):
        left = panel * width
        for node, weight in _GAUSS_LEGENDRE:
            s = left + 0.5 * width * (node + 1.0)
            exponent = s * (s + 2.0 * y) if y > 0.0 else (s + y) ** 2
            total += weight * math.exp(-0.5 * exponent) * -math.expm1(-mu * s)
    total *= 0.5 * width
    if total <= 0.0:
        return -math.inf
    return -0.5 * shift * shift - _HALF_LOG_2PI + math.log(total)


def gaussian_delta(mu: float, epsilon: float) -> float:
    """delta of the Gaussian mechanism with normalized sensitivity mu at epsilon.

    Balle & Wang 2018, Thm. 8: the Gaussian mechanism with L2 sensitivity
    Delta and noise N(0, sigma^2), mu = Delta / sigma, is (epsilon, delta)-DP
    exactly for delta >= Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu).
    This returns that smallest delta. It decreases in epsilon and increases
    in mu; it lies in [0, 1) (in floating point it underflows to 0 below
    ~1e-308 and rounds to 1.0 within 1e-16 of 1, e.g. mu >= 17 at epsilon 0).

    ``mu`` > 0 finite; ``epsilon`` >= 0 finite.
    """
    return gaussian_delta_checked(positive("mu", mu), non_negative("epsilon", epsilon))


def gaussian_delta_checked(mu: float, epsilon: float) -> float:
    """:func:`gaussian_delta` on a finite mu > 0 and a finite epsilon >= 0
    that its caller validated at its own public boundary."""
    return math.exp(_log_gaussian_delta(mu, epsilon))


def _bisect(private_at: Callable[[float], bool], private: float, public: float) -> float:
    """Shrink [private, public] (either order) around the boundary of the
    predicate ``private_at`` (True at ``private``, False at ``public``)
    until the endpoints are adjacent floats; return the private endpoint."""
    for _ in range(_MAX_BISECTIONS):
        middle = 0.5 * (private + public)
        if middle in (private, public):
            break
        if private_at(middle):
            private = middle
        else:
            public = middle
    return private


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest epsilon for which the Gaussian mechanism with normalized
    sensitivity mu is (epsilon, delta)-DP (Balle & Wang 2018, Thm. 8).

    Returns 0.0 when the mechanism is already (0, delta)-DP, i.e. when
    delta_mu(0) = 2 Phi(mu/2) - 1 <= delta. Decreasing in sigma (increasing
    in mu) and in delta.

    ``mu`` > 0 finite; 0 < ``delta`` < 1.
    """
    return gaussian_epsilon_checked(positive("mu", mu), in_open_unit("delta", delta))


def gaussian_epsilon_checked(mu: float, delta: float) -> float:
    """:func:`gaussian_epsilon` on a finite mu > 0 and a delta in (0, 1)
    that its caller validated at its own public boundary."""

    def private_at(epsilon: float) -> bool:
        return math.exp(_log_gaussian_delta(mu, epsilon)) <= delta

    if private_at(0.0):
        return 0.0
    high = 1.0
    while not private_at(high):
        high *= 2.0
    return _bisect(private_at, high, 0.0 if high == 1.0 else 0.5 * high)


def gaussian_mu(epsilon: float, delta: float) -> float:
    """Largest normalized sensitivity mu = Delta / sigma for which the
    Gaussian mechanism is (epsilon, delta)-DP (Balle & Wang 2018, Thm. 8;
    their Algorithm 1 solves the same equation by a different search).

    delta_mu(epsilon) increases continuously from 0 (mu -> 0) to 1
    (mu -> inf), so the answer exists and is unique for every epsilon >= 0
    and 0 < delta < 1. Increasing in epsilon and in delta.

    ``epsilon`` >= 0 finite; 0 < ``delta`` < 1.
    """
    return gaussian_mu_checked(non_negative("epsilon", epsilon), in_open_unit("delta", delta))


def gaussian_mu_checked(epsilon: float, delta: float) -> float:
    """:func:`gaussian_mu` on an epsilon >= 0 and a delta in (0, 1) that
    its caller validated at its own public boundary."""

    def private_at(mu: float) -> bool:
        return math.exp(_log_gaussian_delta(mu, epsilon)) <= delta

    low = high = 1.0
    if private_at(1.0):
        while private_at(high):
            low, high = high, 2.0 * high
    else:
        while not private_at(low):
            high, low = low, 0.5 * low
    return _bisect(private_at, low, high)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest noise standard deviation sigma for which adding N(0, sigma^2)
    per coordinate to a statistic of L2 sensitivity ``sensitivity`` is
    (epsilon, delta)-DP: sigma = sensitivity / gaussian_mu(epsilon, delta)
    (the analytic Gaussian mechanism, Balle & Wang 2018, Thm. 8 and Alg. 1).

    ``epsilon`` >= 0 finite; 0 < ``delta`` < 1; ``sensitivity`` > 0 finite.
    """
    sensitivity = positive("sensitivity", sensitivity)
    return sensitivity / gaussian_mu(epsilon, delta)


def compose_gaussian_mu(mus: Iterable[float]) -> float:
    """mu of the adaptive composition of Gaussian mechanisms with mu_1, ..., mu_k:
    sqrt(mu_1^2 + ... + mu_k^2), exactly (Dong, Roth & Su 2022, Cor. 3.3:
    the composition of mu_i-GDP mechanisms is sqrt(sum mu_i^2)-GDP, and
    mu-GDP is exactly the privacy profile of gaussian_delta(mu, .)).

    ``mus``: a non-empty iterable of finite values > 0.
    """
    values = [positive(f"mus[{i}]", mu) for i, mu in enumerate(mus)]
    if not values:
        raise ValueError("invalid argument `mus`: must contain at least one mu")
    return math.hypot(*values)


def gaussian_zcdp_rho(mu: float) -> float:
    """rho = mu^2 / 2: the Gaussian mechanism with normalized sensitivity mu
    is rho-zCDP (Bun & Steinke 2016, Prop. 1.6, with mu = Delta / sigma).

    ``mu`` > 0 finite.
    """
    mu = positive("mu", mu)
    return 0.5 * mu * mu
