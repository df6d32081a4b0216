"""What the discrete Gaussian on a lattice costs the exact (epsilon, delta) calibration.

The tight Gaussian calibrations (:func:`dpbandits.privacy.tree.gaussian_tree_sigma`,
:func:`dpbandits.privacy.factorization.factorization_gaussian_sigma`, the
local reports of :mod:`dpbandits.privacy.linucb_trust`) find the largest
normalized sensitivity mu = Delta / sigma for which the *continuous*
Gaussian mechanism meets (epsilon, delta) on its exact privacy curve
(Balle & Wang 2018, Thm. 8). With ``sampler="lattice"`` the learner draws
instead the discrete Gaussian N_Z(0, s^2) on a lattice of s steps per
sigma, its inputs rounded to the lattice first (the rounding widens the
sensitivity: :func:`dpbandits.privacy.secure.lattice_gaussian`). This
module says at which delta' the continuous curve must be calibrated so
that the discrete mechanism is (epsilon, delta)-DP. Two arguments hold;
:func:`lattice_gaussian_calibration_delta` takes the better one, for any
epsilon > 0, any delta in (0, 1) and any number of draws.

1. Coupling (:func:`discrete_gaussian_delta_allowance`). Per coordinate,
   TV(N_Z(0, s^2), round(N(0, s^2))) <= 1 / (4 s^2) for s >= 2^10, and the
   rounded continuous Gaussian has the continuous privacy curve (post-
   processing), so delta' = delta - (1 + e^epsilon) c / (4 s^2) for a user
   whose data reach c draws. Exact to the continuous curve, but the
   allowance grows with c (a factorization counter reaches every later
   draw: c = horizon x entries), and it is void once it reaches delta.

2. Renyi (:func:`renyi_calibration_delta`). For an integer shift k and
   any real sigma > 0, with theta(c) = sum_{j in Z} exp(-(j - c)^2 / (2 sigma^2)),

       sum_j p(j)^a p(j - k)^(1 - a)
           = exp(a (a - 1) k^2 / (2 sigma^2)) theta((1 - a) k) / theta(0)
           <= exp(a (a - 1) k^2 / (2 sigma^2)),

   because theta(c) = sigma sqrt(2 pi) sum_m exp(-2 pi^2 sigma^2 m^2) cos(2 pi m c)
   (Poisson summation) is largest at c = 0. So D_a(N_Z(0, s^2) || k + N_Z(0, s^2))
   <= a k^2 / (2 s^2) at every order a > 1 (Canonne, Kamath & Steinke
   2020, "The discrete Gaussian for differential privacy", Prop. 5 and
   Thm. 4: the discrete Gaussian is k^2 / (2 s^2)-zCDP). Renyi divergences
   of independent coordinates add, and adaptive compositions compose
   (Mironov 2017, Prop. 1), so a mechanism whose continuous counterpart is
   a mu-Gaussian mechanism (Dong, Roth & Su 2022) is (mu^2 / 2)-zCDP when
   drawn on the lattice, whatever the number of draws. It is then
   (epsilon, delta)-DP when mu^2 / 2 <= :func:`dpbandits.privacy.conversion.max_zcdp_rho`
   (epsilon, delta) (CKS 2020, Cor. 13), i.e. when the continuous curve is
   met at delta' = gaussian_delta(sqrt(2 rho*), epsilon). This costs 3% to
   10% of sigma against the exact curve at delta in [1e-12, 1e-6] (up to
   28% at epsilon = 0.01, delta = 1e-3) and never fails.

Both are exact statements about the sampled law; neither depends on the
lattice being fine beyond the s >= 2^10 of the coupling bound, and the
second does not depend on the lattice at all.
"""

from __future__ import annotations

import math
from typing import Literal

from dpbandits._validation import in_open_unit, positive, positive_int

__all__ = [
    "discrete_gaussian_delta_allowance",
    "lattice_gaussian_calibration_delta",
    "renyi_calibration_delta",
]

#: TV(N_Z(0, s^2), round(N(0, s^2))) <= 1 / (4 s^2) for s >= 2^10; at the
#: usual s >= 2^19 steps each coordinate costs at most 2^-40.
DISCRETE_GAUSSIAN_TV_PER_COORDINATE = 2.0**-40

Argument = Literal["coupling", "renyi"]


def discrete_gaussian_delta_allowance(epsilon: float, coordinates: int, steps: float = 2.0**19) -> float:
    """The delta that exact (epsilon, delta) accounting of continuous
    Gaussian noise must reserve when the noise is drawn as the discrete
    Gaussian on a lattice, for a user whose data reach ``coordinates``
    noise draws (argument 1 of the module docstring).

    Let A be the lattice mechanism (rounded input + discrete Gaussian
    N_Z(0, s^2) per coordinate, s >= 2^10 steps) and B the same with the
    rounded continuous Gaussian round(N(0, s^2)): B is the continuous
    Gaussian mechanism on the rounded input, post-processed by rounding, so
    B has the exact continuous privacy curve for the rounded sensitivity.
    Per coordinate, with phi_s the N(0, s^2) density,
    P_A(k) = phi_s(k) / (1 + e_Z) with 0 <= e_Z <= 3 exp(-2 pi^2 s^2)
    (Poisson summation) and P_B(k) = phi_s(k) int_{-1/2}^{1/2}
    cosh(k u / s^2) exp(-u^2 / 2 s^2) du, between phi_s(k) exp(-1/(8 s^2))
    and phi_s(k) cosh(k / 2 s^2); summing, TV <= 1 / (4 s^2). Coordinates
    a user's data do not reach have the same law under neighbours and drop
    out of the privacy loss, so for any event E, P_A(E) <= P_B(E) + c TV <=
    e^eps P'_B(E) + delta_B + c TV <= e^eps P'_A(E) + delta_B +
    (1 + e^eps) c TV, with c = ``coordinates``. Hence the allowance
    (1 + e^eps) c / (4 s^2), s = ``steps`` (a lower bound on the discrete
    sigma in lattice steps, >= 2^10): 2^-40 (1 + e^eps) per coordinate at
    s = 2^19.

    ``epsilon`` finite > 0; ``coordinates`` integer >= 1; ``steps`` >= 2^10.
    """
    return discrete_gaussian_delta_allowance_checked(
        positive("epsilon", epsilon), positive_int("coordinates", coordinates), steps
    )


def discrete_gaussian_delta_allowance_checked(epsilon: float, coordinates: int, steps: float) -> float:
    """:func:`discrete_gaussian_delta_allowance` on an epsilon > 0 and an
    integer ``coordinates`` >= 1 that its caller validated at its own
    public boundary (``steps``, computed by the caller, is checked here)."""
    if not steps >= 2**10:
        raise ValueError(f"invalid argument `steps`: the bound needs a discrete sigma of >= 2^10 steps, got {steps!r}")
    return (1.0 + math.exp(min(epsilon, 700.0))) * coordinates / (4.0 * steps * steps)


def renyi_calibration_delta(epsilon: float, delta: float) -> float:
    """delta' such that a Gaussian mechanism whose normalized sensitivity mu
    meets the exact continuous curve at (epsilon, delta') is, drawn as the
    discrete Gaussian on a lattice, (epsilon, delta)-DP (argument 2 of the
    module docstring): delta' = delta_mu*(epsilon) with
    mu* = sqrt(2 rho*), rho* = max_zcdp_rho(epsilon, delta).

    ``epsilon`` finite > 0, ``delta`` in (0, 1). The result lies in (0, delta]
    (0.0 only for an epsilon so small that rho* underflows).
    """
    return renyi_calibration_delta_checked(positive("epsilon", epsilon), in_open_unit("delta", delta))


def renyi_calibration_delta_checked(epsilon: float, delta: float) -> float:
    """:func:`renyi_calibration_delta` on arguments its caller validated."""
    from dpbandits.privacy.analytic_gaussian import gaussian_delta_checked
    from dpbandits.privacy.conversion import max_zcdp_rho_checked

    # Shrunk by 1e-12 so that the callers' inversion gaussian_mu(epsilon,
    # delta') (bisection to the private side) cannot land above sqrt(2 rho*)
    # through the rounding of gaussian_delta.
    rho = max_zcdp_rho_checked(epsilon, delta)
    if not rho > 0.0:
        return 0.0  # an epsilon so small that rho* underflows: no delta from this argument
    mu = math.sqrt(2.0 * rho) * (1.0 - 1e-12)
    return min(delta, gaussian_delta_checked(mu, epsilon))


def lattice_gaussian_calibration_delta(
    epsilon: float, delta: float, coordinates: int, steps: float
) -> tuple[float, Argument]:
    """The delta at which to calibrate the continuous Gaussian's exact curve
    when the noise is the discrete Gaussian on a lattice: the larger (less
    noise) of the coupling's delta - allowance (when positive) and the
    Renyi argument's delta' (module docstring), with the argument used.

    ``coordinates``: noise draws one user's data reach; ``steps``: a lower
    bound on the discrete sigma in lattice steps (>= 2^10 for the coupling;
    below that only the Renyi argument is used). ``epsilon`` > 0 finite,
    ``delta`` in (0, 1); every (epsilon, delta) has an answer.
    """
    return lattice_gaussian_calibration_delta_checked(
        positive("epsilon", epsilon), in_open_unit("delta", delta), positive_int("coordinates", coordinates),
        positive("steps", steps),
    )


def lattice_gaussian_calibration_delta_checked(
    epsilon: float, delta: float, coordinates: int, steps: float
) -> tuple[float, Argument]:
    """:func:`lattice_gaussian_calibration_delta` on arguments its caller validated."""
    renyi = renyi_calibration_delta_checked(epsilon, delta)
    if steps >= 2**10:
        coupled = delta - discrete_gaussian_delta_allowance_checked(epsilon, coordinates, steps)
        if coupled >= renyi and coupled > 0.0:
            return coupled, "coupling"
    if not renyi > 0.0:
        raise ValueError(f"invalid argument `epsilon`: {epsilon!r} is too small for any Gaussian calibration")
    return renyi, "renyi"
