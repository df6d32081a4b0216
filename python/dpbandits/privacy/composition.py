"""Composition: the guarantee of several mechanisms run on the same users.

All three results hold for *adaptive* composition (each mechanism may be
chosen after seeing the earlier outputs), with privacy parameters fixed in
advance (with parameters chosen adaptively one needs privacy filters,
Rogers, Roth, Ullman & Vadhan 2016).

- :func:`basic_composition`: (eps_i, delta_i) -> (sum eps_i, sum delta_i)
  (Dwork & Roth 2014, Thm. 3.16; adaptive: Dwork, Rothblum & Vadhan 2010).
- :func:`advanced_composition` / :func:`advanced_composition_epsilon`:
  k-fold (eps, delta) -> (sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1),
  k delta + delta') (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014,
  Thm. 3.20), as Shariff & Sheffet 2018, App. A.2 use it.
- :func:`compose_zcdp`: rho_i -> sum rho_i (Bun & Steinke 2016, Lemma 2.3).

Gaussian mechanisms compose exactly in mu
(:func:`dpbandits.privacy.compose_gaussian_mu`); conversions between
notions are in :mod:`dpbandits.privacy.conversion`
(:func:`zcdp_to_dp_epsilon` is re-exported here, where the calibrations
import it from).

>>> from dpbandits.privacy import advanced_composition, basic_composition
>>> basic_composition([(0.5, 1e-6), (0.25, 0.0)])
(0.75, 1e-06)
>>> eps, delta = advanced_composition(0.1, 0.0, k=100, delta_prime=1e-6)
>>> round(eps, 6), delta
(6.308231, 1e-06)
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from dpbandits._validation import delta_in_unit, in_open_unit, non_negative, positive, positive_int
from dpbandits.privacy.conversion import zcdp_to_dp_epsilon

__all__ = [
    "advanced_composition",
    "advanced_composition_epsilon",
    "basic_composition",
    "compose_zcdp",
    "zcdp_to_dp_epsilon",
]


def basic_composition(parts: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """(sum eps_i, sum delta_i): the adaptive composition of (eps_i, delta_i)-DP
    mechanisms (Dwork & Roth 2014, Thm. 3.16; Dwork, Rothblum & Vadhan 2010
    for the adaptive case).

    ``parts``: (epsilon_i, delta_i) pairs with epsilon_i >= 0 finite and
    0 <= delta_i < 1; an empty iterable gives (0.0, 0.0). Sums are exactly
    rounded (``math.fsum``). The total delta may reach 1 (a vacuous
    guarantee); callers compare it with their budget.
    """
    epsilons: list[float] = []
    deltas: list[float] = []
    for i, part in enumerate(parts):
        try:
            epsilon, delta = part
        except (TypeError, ValueError):
            raise ValueError(
                f"invalid argument `parts[{i}]`: expected an (epsilon, delta) pair, got {part!r}"
            ) from None
        epsilons.append(non_negative(f"parts[{i}].epsilon", epsilon))
        deltas.append(delta_in_unit(f"parts[{i}].delta", delta))
    return math.fsum(epsilons), math.fsum(deltas)


def _advanced_epsilon(epsilon: float, k: int, delta_prime: float) -> float:
    # Dwork & Roth 2014, Thm. 3.20
    return math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) * epsilon + k * epsilon * math.expm1(
        epsilon
    )


def advanced_composition(
    epsilon: float, delta: float, k: int, delta_prime: float
) -> tuple[float, float]:
    """(eps', k delta + delta'): the k-fold adaptive composition of
    (epsilon, delta)-DP mechanisms, with

        eps' = sqrt(2 k ln(1/delta')) epsilon + k epsilon (e^epsilon - 1)

    (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm. 3.20). Better
    than :func:`basic_composition` (k epsilon) only for small epsilon and
    large k; callers may take the smaller of the two.

    Arguments: epsilon >= 0 finite, 0 <= delta < 1, k integer >= 1,
    0 < delta_prime < 1.
    """
    epsilon = non_negative("epsilon", epsilon)
    delta = delta_in_unit("delta", delta)
    k = positive_int("k", k)
    delta_prime = in_open_unit("delta_prime", delta_prime)
    return _advanced_epsilon(epsilon, k, delta_prime), math.fsum([k * delta, delta_prime])


def advanced_composition_epsilon(node_epsilon: float, k: int, delta_prime: float) -> float:
    """epsilon of the k-fold adaptive composition of node_epsilon-DP mechanisms.

    Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014,
    Thm 3.20): k mechanisms that are each (eps0, delta0)-DP compose to
    (eps', k delta0 + delta')-DP with

        eps' = sqrt(2 k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1).

    Shariff & Sheffet 2018, App. A.2 quote this as
    O(k eps0^2 + eps0 sqrt(2 k ln(1/delta'))); this is the exact form.
    The epsilon part of :func:`advanced_composition`.

    Arguments: node_epsilon > 0 finite, k integer >= 1, 0 < delta_prime < 1.
    """
    eps0 = positive("node_epsilon", node_epsilon)
    k = positive_int("k", k)
    delta_prime = in_open_unit("delta_prime", delta_prime)
    return _advanced_epsilon(eps0, k, delta_prime)


def compose_zcdp(rhos: Iterable[float]) -> float:
    """sum rho_i: the adaptive composition of rho_i-zCDP mechanisms is
    (sum rho_i)-zCDP (Bun & Steinke 2016, Lemma 2.3).

    ``rhos``: values >= 0 finite; an empty iterable gives 0.0. Exactly
    rounded sum (``math.fsum``).
    """
    return math.fsum(non_negative(f"rhos[{i}]", rho) for i, rho in enumerate(rhos))
