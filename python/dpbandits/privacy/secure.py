"""The lattice of secure sampling, and what it does to the guarantee.

Secure mode (``TreeCounter(..., secure=True)``, ``laplace(..., secure=True)``,
``gaussian(..., secure=True)``) replaces floating-point noise by exact
discrete noise on the lattice g Z with g = 2^-j (Mironov 2012, "On
significance of the least significant bits for differential privacy":
floating-point Laplace outputs can reveal the input; his fix snaps outputs
to a power-of-two grid) sampled with integer arithmetic only (Canonne,
Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
Alg. 1-3). The Rust side is ``rust/src/noise/secure.rs``.

The lattice. For a noise scale b (Laplace scale or Gaussian sigma) the
exponent is ``lattice_exponent(b)`` = j with b * 2^j in [2^19, 2^20): the
scale spans about half a million lattice steps, so the discrete noise has
the continuous one's shape to six significant digits. In steps, the
discrete scale is t = ceil(b * 2^j) (rounded up: never less noise than
asked).

The guarantee. Values are rounded to the nearest lattice point before
they enter the mechanism (post-processing of the input, not of the
output), so a change of an entry by Delta changes its rounded value by at
most Delta + g (each rounding moves it by at most g/2). Hence:

- discrete Laplace with t steps on every entry of a statistic of L1
  sensitivity Delta_1 over ``dim`` entries is
  epsilon = ceil(Delta_1 2^j + dim) / t-DP, at most
  (Delta_1 + dim g) / b: :func:`secure_laplace_epsilon`. With b 2^j >= 2^19
  the excess over Delta_1 / b is at most dim * 2^-19;
- the discrete Gaussian with sigma^2 = s^2 steps^2 is
  (Delta_2 + sqrt(dim) g)^2 / (2 (s g)^2)-zCDP (CKS 2020, Thm. 4 with
  the rounded sensitivity), the same rho as the continuous Gaussian of that
  sigma and sensitivity: :func:`secure_gaussian_sensitivity` gives the
  sensitivity to calibrate against.

When the data already lie on the lattice (integers, or multiples of g) the
rounding is the identity and epsilon = Delta_1 2^j / t exactly.
"""

from __future__ import annotations

import math

from dpbandits._validation import positive, positive_int

__all__ = [
    "LATTICE_RESOLUTION_BITS",
    "lattice_exponent",
    "lattice_step",
    "secure_gaussian_sensitivity",
    "secure_laplace_epsilon",
]

#: The scale spans [2^(bits-1), 2^bits) lattice steps.
LATTICE_RESOLUTION_BITS = 20


def lattice_exponent(scale: float) -> int:
    """j such that ``scale`` * 2^j lies in [2^19, 2^20) (the lattice is g Z, g = 2^-j).

    Exact: with scale = f 2^e, f in [0.5, 1) (``math.frexp``), j = 20 - e.
    ``scale`` finite > 0 (Laplace scale b or Gaussian sigma).
    """
    _, e = math.frexp(positive("scale", scale))
    j = LATTICE_RESOLUTION_BITS - e
    if not -1000 <= j <= 1000:
        raise ValueError(f"invalid argument `scale`: {scale!r} is outside the range secure sampling supports")
    return j


def lattice_step(scale: float) -> float:
    """g = 2^-j, the lattice step used for noise of this scale."""
    return math.ldexp(1.0, -lattice_exponent(scale))


def _steps(scale: float) -> int:
    """ceil(scale 2^j): the discrete scale in lattice steps (rounded up)."""
    return math.ceil(math.ldexp(scale, lattice_exponent(scale)))


def secure_laplace_epsilon(sensitivity_l1: float, scale: float, dim: int = 1) -> float:
    """Pure-DP epsilon of secure (discrete, lattice) Laplace noise of ``scale``
    per entry on a statistic of L1 sensitivity ``sensitivity_l1`` with
    ``dim`` entries, after rounding the inputs to the lattice.

    A rounded entry moves by at most Delta + g, so the rounded statistic's
    L1 sensitivity in steps is at most ceil(Delta_1 2^j) + dim; the discrete
    Laplace with t steps is (sensitivity / t)-DP (the privacy-loss ratio
    of exp(-|k|/t) at integer distance s is exp(s/t)). Hence
    epsilon = (ceil(Delta_1 2^j) + dim) / ceil(b 2^j) <= (Delta_1 + dim g) / b.

    ``sensitivity_l1``, ``scale`` finite > 0; ``dim`` integer >= 1.
    """
    sensitivity_l1 = positive("sensitivity_l1", sensitivity_l1)
    scale = positive("scale", scale)
    dim = positive_int("dim", dim)
    j = lattice_exponent(scale)
    try:
        return (math.ceil(math.ldexp(sensitivity_l1, j)) + dim) / _steps(scale)
    except OverflowError:  # bug fix (fuzzing): a huge sensitivity overflowed ldexp
        raise ValueError(f"invalid argument `sensitivity_l1`: {sensitivity_l1!r} is too large") from None


def secure_gaussian_sensitivity(sensitivity_l2: float, sigma: float, dim: int = 1) -> float:
    """The L2 sensitivity to calibrate secure Gaussian noise against:
    Delta_2 + sqrt(dim) g, with g = lattice_step(sigma) (rounding each of
    ``dim`` entries moves it by at most g/2 on each side).

    The discrete Gaussian with sigma' = ceil(sigma 2^j) g >= sigma on a
    statistic of this sensitivity is Delta^2 / (2 sigma'^2)-zCDP (CKS
    2020, Thm. 4). ``sensitivity_l2``, ``sigma`` finite > 0; ``dim`` >= 1.
    """
    sensitivity_l2 = positive("sensitivity_l2", sensitivity_l2)
    sigma = positive("sigma", sigma)
    dim = positive_int("dim", dim)
    return sensitivity_l2 + math.sqrt(dim) * lattice_step(sigma)
