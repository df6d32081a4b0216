"""Conversions between privacy notions: pure DP -> zCDP -> (epsilon, delta)-DP.

- :func:`pure_dp_to_zcdp_rho`: epsilon-DP implies (epsilon^2 / 2)-zCDP
  (Bun & Steinke 2016, Prop. 1.4).
- :func:`zcdp_to_dp_epsilon`: rho-zCDP implies
  (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (Bun & Steinke 2016, Prop. 1.3).
- :func:`zcdp_to_dp_epsilon_cks`, :func:`zcdp_to_dp_delta_cks`: the tighter
  conversion of Canonne, Kamath & Steinke 2020 (NeurIPS; arXiv:2004.00010),
  Prop. 12 applied at every Renyi order, their Cor. 13:

      delta = inf_{a > 1} exp((a - 1)(a rho - epsilon)) / (a - 1) * (1 - 1/a)^a,

  equivalently

      epsilon = inf_{a > 1} a rho + (ln(1/delta) + (a - 1) ln(1 - 1/a) - ln a) / (a - 1).

  Every order a gives a valid bound, so the numerical minimization can only
  err on the safe side. The minimizer searches t = a - 1 on a log grid
  around the Bun-Steinke optimum t = sqrt(ln(1/delta)/rho), then refines by
  golden section in ln t; the minimum is found to ~1e-15 relative.
- :func:`max_zcdp_rho`: the inverse, the largest rho whose CKS conversion
  meets a target (epsilon, delta), for calibrating zCDP mechanisms.

Pointwise in a the CKS expression is the Bun-Steinke one (a rho +
ln(1/delta)/(a - 1)) plus the negative terms ln(1 - 1/a) - ln(a)/(a - 1),
so CKS <= Bun-Steinke always. A Gaussian mechanism with normalized
sensitivity mu is exactly mu^2/2-zCDP, and its exact epsilon
(:func:`dpbandits.privacy.gaussian_epsilon`) is below both.

>>> from dpbandits.privacy import zcdp_to_dp_epsilon, zcdp_to_dp_epsilon_cks
>>> round(zcdp_to_dp_epsilon(0.5, 1e-5), 6), round(zcdp_to_dp_epsilon_cks(0.5, 1e-5), 6)
(5.298526, 4.728387)
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpbandits._validation import in_open_unit, non_negative, positive

__all__ = [
    "max_zcdp_rho",
    "pure_dp_to_zcdp_rho",
    "zcdp_to_dp_delta_cks",
    "zcdp_to_dp_epsilon",
    "zcdp_to_dp_epsilon_cks",
]

_GRID_HALF_WIDTH = 12.0  # ln t searched over u0 +/- 12 first (a factor e^12 ~ 1.6e5)
_GRID_STEP = 0.25
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
_GOLDEN_TOLERANCE = 1e-10  # in ln t; the minimum value is flat to second order
_MAX_BISECTIONS = 2_000
_MAX_ABS_LOG_ORDER = 680.0  # |ln(a - 1)|; exp stays finite and nonzero


def pure_dp_to_zcdp_rho(epsilon: float) -> float:
    """rho = epsilon^2 / 2: epsilon-DP implies rho-zCDP (Bun & Steinke 2016, Prop. 1.4).

    ``epsilon`` >= 0 finite.
    """
    epsilon = non_negative("epsilon", epsilon)
    return 0.5 * epsilon * epsilon


def zcdp_to_dp_epsilon(rho: float, delta: float) -> float:
    """epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    Bun & Steinke 2016, Prop. 1.3: rho-zCDP implies
    (rho + 2 sqrt(rho ln(1/delta)), delta)-DP for every delta in (0, 1).
    :func:`zcdp_to_dp_epsilon_cks` is never larger.

    Arguments: rho >= 0 finite, 0 < delta < 1.
    """
    rho = non_negative("rho", rho)
    delta = in_open_unit("delta", delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def _minimize_over_log_order(objective: Callable[[float], float], start: float) -> float:
    """min over u of objective(u), u = ln(a - 1), for an objective that tends
    to +inf at both ends (grid scan, then golden section around the best
    grid point). Any u gives a valid bound, so an imperfect search is safe."""
    center = start
    while True:
        grid = [center + _GRID_STEP * k
                for k in range(-int(_GRID_HALF_WIDTH / _GRID_STEP),
                               int(_GRID_HALF_WIDTH / _GRID_STEP) + 1)]
        values = [objective(u) for u in grid]
        best = min(range(len(grid)), key=values.__getitem__)
        if 0 < best < len(grid) - 1 or not math.isfinite(values[best]):
            break
        if abs(grid[best]) > _MAX_ABS_LOG_ORDER:  # a - 1 leaves the floats: stop here
            return values[best]
        center = grid[best]  # minimum at the edge: recentre and scan again
    if best in (0, len(grid) - 1):
        return values[best]
    low, high = grid[best - 1], grid[best + 1]
    inner_low = high - _GOLDEN * (high - low)
    inner_high = low + _GOLDEN * (high - low)
    f_low, f_high = objective(inner_low), objective(inner_high)
    while high - low > _GOLDEN_TOLERANCE:
        if f_low <= f_high:
            high, inner_high, f_high = inner_high, inner_low, f_low
            inner_low = high - _GOLDEN * (high - low)
            f_low = objective(inner_low)
        else:
            low, inner_low, f_low = inner_low, inner_high, f_high
            inner_high = low + _GOLDEN * (high - low)
            f_high = objective(inner_high)
    return min(values[best], f_low, f_high)


def _cks_epsilon(rho: float, log_inv_delta: float) -> float:
    """min over a > 1 of Cor. 13's epsilon, clipped at 0 (validated inputs, rho > 0)."""

    def epsilon_at(u: float) -> float:
        t = math.exp(u)  # t = a - 1 > 0
        # a rho + (ln(1/delta) - ln a)/(a - 1) + ln(1 - 1/a), ln(1 - 1/a) = -ln(1 + 1/t)
        return (1.0 + t) * rho + (log_inv_delta - math.log1p(t)) / t - math.log1p(1.0 / t)

    start = 0.5 * (math.log(log_inv_delta) - math.log(rho))  # Bun-Steinke optimum
    return max(0.0, _minimize_over_log_order(epsilon_at, start))


def zcdp_to_dp_epsilon_cks(rho: float, delta: float) -> float:
    """Smallest epsilon that Canonne, Kamath & Steinke 2020, Cor. 13 certifies:
    rho-zCDP implies (epsilon, delta)-DP with

        epsilon = inf_{a > 1} a rho + (ln(1/delta) + (a - 1) ln(1 - 1/a) - ln a) / (a - 1).

    Never larger than :func:`zcdp_to_dp_epsilon` (Bun & Steinke, Prop. 1.3).
    A negative infimum means (0, delta)-DP already holds (delta(epsilon) of
    Prop. 12 decreases in epsilon); 0.0 is returned then.

    Arguments: rho >= 0 finite (0 gives 0.0), 0 < delta < 1.
    """
    rho = non_negative("rho", rho)
    delta = in_open_unit("delta", delta)
    if rho == 0.0:
        return 0.0
    return _cks_epsilon(rho, -math.log(delta))


def zcdp_to_dp_delta_cks(rho: float, epsilon: float) -> float:
    """Smallest delta that Canonne, Kamath & Steinke 2020, Cor. 13 certifies:
    rho-zCDP implies (epsilon, delta)-DP with

        delta = inf_{a > 1} exp((a - 1)(a rho - epsilon)) / (a - 1) * (1 - 1/a)^a,

    capped at 1. Inverse of :func:`zcdp_to_dp_epsilon_cks` in delta.

    Arguments: rho >= 0 finite (0 gives 0.0), epsilon >= 0 finite.
    """
    rho = non_negative("rho", rho)
    epsilon = non_negative("epsilon", epsilon)
    if rho == 0.0:
        return 0.0

    def log_delta_at(u: float) -> float:
        t = math.exp(u)  # t = a - 1
        # (a-1)(a rho - eps) - ln(a-1) + a ln(1 - 1/a), ln(1 - 1/a) = -ln(1 + 1/t)
        return t * ((1.0 + t) * rho - epsilon) - u - (1.0 + t) * math.log1p(1.0 / t)

    start = math.log(max((epsilon - rho) / (2.0 * rho), 1e-3))  # a ~ (eps + rho) / (2 rho)
    return min(1.0, math.exp(_minimize_over_log_order(log_delta_at, start)))


def max_zcdp_rho(epsilon: float, delta: float) -> float:
    """Largest rho such that rho-zCDP implies (epsilon, delta)-DP by
    :func:`zcdp_to_dp_epsilon_cks` (Canonne, Kamath & Steinke 2020, Cor. 13).

    The CKS epsilon increases in rho (every term of the infimum does), so
    this is found by bisection to adjacent floats, returning the side whose
    computed epsilon is <= ``epsilon``. It is at least the Bun-Steinke
    inverse (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2.

    Arguments: epsilon > 0 finite, 0 < delta < 1. Returns 0.0 when epsilon
    is so small that the answer underflows.
    """
    return max_zcdp_rho_checked(positive("epsilon", epsilon), in_open_unit("delta", delta))


def max_zcdp_rho_checked(epsilon: float, delta: float) -> float:
    """:func:`max_zcdp_rho` on an epsilon > 0 and a delta in (0, 1) that
    its caller validated at its own public boundary."""
    log_inv_delta = -math.log(delta)

    def private_at(rho: float) -> bool:
        return rho == 0.0 or _cks_epsilon(rho, log_inv_delta) <= epsilon

    low = (math.sqrt(log_inv_delta + epsilon) - math.sqrt(log_inv_delta)) ** 2  # Bun-Steinke
    # An epsilon so small that rho* underflows has no positive answer; the
    # loops below are bounded by the float range either way.
    low = max(low, math.ulp(0.0))
    while low > 0.0 and not private_at(low):  # only by rounding: CKS <= Bun-Steinke
        low *= 0.5
    if low == 0.0:
        return 0.0
    high = 2.0 * low
    while high < math.inf and private_at(high):
        low, high = high, 2.0 * high
    for _ in range(_MAX_BISECTIONS):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if private_at(middle):
            low = middle
        else:
            high = middle
    return low
