"""Composition bounds that the calibrations rest on.

Two textbook results, used to check that a paper's noise really meets the
(epsilon, delta) it is asked for (the papers state them with O(.) or leave
them implicit). They are checks, not calibrations: the noise scales
themselves are in :mod:`dpbandits.privacy.calibration`.
"""

from __future__ import annotations

import math

from dpbandits._validation import in_open_unit, positive, positive_int

__all__ = ["advanced_composition_epsilon", "zcdp_to_dp_epsilon"]


def advanced_composition_epsilon(node_epsilon: float, k: int, delta_prime: float) -> float:
    """epsilon of the k-fold adaptive composition of node_epsilon-DP mechanisms.

    Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014,
    Thm 3.20): k mechanisms that are each (eps0, delta0)-DP compose to
    (eps', k delta0 + delta')-DP with

        eps' = sqrt(2 k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1).

    Shariff & Sheffet 2018, App. A.2 quote this as
    O(k eps0^2 + eps0 sqrt(2 k ln(1/delta'))); this is the exact form.

    Arguments: node_epsilon > 0 finite, k integer >= 1, 0 < delta_prime < 1.
    """
    eps0 = positive("node_epsilon", node_epsilon)
    k = positive_int("k", k)
    delta_prime = in_open_unit("delta_prime", delta_prime)
    return math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) * eps0 + k * eps0 * math.expm1(eps0)


def zcdp_to_dp_epsilon(rho: float, delta: float) -> float:
    """epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    Bun & Steinke 2016, Prop. 1.3: rho-zCDP implies
    (rho + 2 sqrt(rho ln(1/delta)), delta)-DP for every delta in (0, 1).

    Arguments: rho > 0 finite, 0 < delta < 1.
    """
    rho = positive("rho", rho)
    delta = in_open_unit("delta", delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
