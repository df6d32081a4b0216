"""The lattice of secure sampling, and what it does to the guarantee.

Secure mode (``TreeCounter(..., secure=True)``, ``laplace(..., secure=True)``,
``gaussian(..., secure=True)``) replaces floating-point noise by exact
discrete noise on the lattice g Z with g = 2^-j (Mironov 2012, "On
significance of the least significant bits for differential privacy":
floating-point Laplace outputs can reveal the input; his fix snaps outputs
to a power-of-two grid) sampled with integer arithmetic only (Canonne,
Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
Alg. 1-3). The Rust side is ``rust/src/noise/`` (``lattice/`` and the samplers).

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
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from dpbandits._validation import positive, positive_int

__all__ = [
    "LATTICE_RESOLUTION_BITS",
    "MAX_GAUSSIAN_SCALE_STEPS",
    "MAX_SCALE_STEPS",
    "SAMPLERS",
    "LatticeNoise",
    "capped_lattice_exponent",
    "exact_lattice_noise",
    "lattice_exponent",
    "lattice_gaussian",
    "lattice_laplace",
    "lattice_step",
    "lattice_steps",
    "round_to_lattice_steps",
    "sampler_choice",
    "secure_gaussian_sensitivity",
    "secure_laplace_epsilon",
]

#: The scale spans [2^(bits-1), 2^bits) lattice steps.
LATTICE_RESOLUTION_BITS = 20

#: Largest scale in steps the exact samplers accept (rust/src/noise/):
#: discrete Laplace t <= 2^21, the default limit of all lattice noise.
MAX_SCALE_STEPS = 2**21
#: Largest sigma in steps of the discrete Gaussian samplers, used when a
#: rounding allowance needs a finer lattice: 2^25 steps (variance <= 2^50,
#: the cell sampler's range); the symmetric matrix Gaussian 2^24 (its
#: diagonal draws twice the variance).
MAX_GAUSSIAN_SCALE_STEPS = {"gaussian": 2**25, "symmetric_gaussian": 2**24}


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


def lattice_steps(scale: float, exponent: int) -> int:
    """ceil(``scale`` 2^``exponent``): ``scale`` in steps of the lattice
    2^-exponent, rounded up (never less noise, nor less sensitivity, than
    the continuous value). Raises OverflowError when ``scale`` 2^exponent
    exceeds the float range (as ``math.ldexp``)."""
    return math.ceil(math.ldexp(scale, exponent))


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
        return (lattice_steps(sensitivity_l1, j) + dim) / lattice_steps(scale, j)
    except OverflowError:  # a huge sensitivity overflows ldexp
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


# --------------------------------------------------------------------------
# Lattice noise of the learners: calibration that accounts for the rounding
# --------------------------------------------------------------------------

#: The default law of every released value. "float" is the opt-in
#: floating-point law, open to low-bit attacks (Mironov 2012).
SAMPLERS = ("lattice", "float")


Sampler = Literal["lattice", "float"]


def sampler_choice(sampler: str) -> Sampler:
    """Validates a learner's ``sampler`` argument: "lattice" (default) or "float"."""
    if sampler == "lattice":
        return "lattice"
    if sampler == "float":
        return "float"
    raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")


def round_to_lattice_steps(value: float, exponent: int) -> int:
    """The lattice point nearest ``value`` * 2^exponent, in steps, rounding
    halves away from zero exactly as the engines do (Rust ``f64::round``).

    Rounding to nearest is monotone, which is what the calibration below
    rests on: an input confined to [lo, hi] is confined, after rounding, to
    [round(lo), round(hi)].
    """
    x = math.ldexp(value, exponent)
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


@dataclass(frozen=True)
class LatticeNoise:
    """Per-draw noise exact on the lattice g Z, g = 2^-exponent.

    ``scale`` (Laplace b or Gaussian sigma, in the values' units) is an exact
    multiple of g: ``steps`` g. The engine draws the discrete Laplace with
    t = ``steps`` (Canonne, Kamath & Steinke 2020, Alg. 2) or the discrete
    Gaussian with variance ``steps``^2 steps^2 (Alg. 3).
    """

    kind: str
    scale: float
    exponent: int
    steps: int

    @property
    def step(self) -> float:
        """g = 2^-exponent."""
        return math.ldexp(1.0, -self.exponent)

    def wire(self) -> tuple[str, int, int]:
        """The noise value the Rust engines take, unchanged: (kind, integer
        scale in lattice steps, lattice exponent). Rust rounds and rescales
        nothing (``rust/src/py/noise.rs``)."""
        return f"lattice_{self.kind}", int(self.steps), int(self.exponent)


def exact_lattice_noise(kind: str, scale: float, sum_bound: float | None = None) -> LatticeNoise:
    """Noise of ``kind`` ("laplace", "gaussian", "symmetric_gaussian") and
    ``scale`` drawn exactly on its lattice: exponent
    :func:`capped_lattice_exponent` (``scale``, ``sum_bound``), scale rounded
    up to whole steps (:func:`lattice_steps`). No rounding allowance: the
    caller accounts for the rounding of its inputs
    (:func:`secure_laplace_epsilon`, :func:`secure_gaussian_sensitivity`);
    the learners' calibrations use :func:`lattice_laplace` and
    :func:`lattice_gaussian`, which include it."""
    if kind not in ("laplace", "gaussian", "symmetric_gaussian"):
        raise ValueError(
            f"invalid argument `kind`: exact lattice noise is 'laplace', 'gaussian' or 'symmetric_gaussian', "
            f"got {kind!r}"
        )
    exponent = capped_lattice_exponent(scale, sum_bound)
    steps = lattice_steps(scale, exponent)
    return LatticeNoise(kind, math.ldexp(steps, -exponent), exponent, steps)


#: Sums of inputs stay exact in f64 while they are below 2^53 steps (the
#: engines refuse an input of 2^51 / horizon steps or more; the lattice
#: keeps a further factor 2 of margin).
EXACT_SUM_BITS = 50


def _exact_sum_exponent(sum_bound: float | None) -> int | None:
    """The largest j with 2^j sum_bound <= 2^51 (None: no bound)."""
    if sum_bound is None or not sum_bound > 0:
        return None
    _, e = math.frexp(positive("sum_bound", sum_bound))
    return EXACT_SUM_BITS - e


def capped_lattice_exponent(scale: float, sum_bound: float | None = None) -> int:
    """:func:`lattice_exponent` (``scale``), made coarser when needed so that
    sums up to ``sum_bound`` (the largest magnitude of any statistic: horizon
    times the largest input) stay exact: 2^j sum_bound <= 2^51. The scale
    must still span at least 2^10 steps: ValueError otherwise (use the
    floating-point sampler for such horizons)."""
    j = lattice_exponent(scale)
    cap = _exact_sum_exponent(sum_bound)
    if cap is not None:
        j = min(j, cap)
        if math.ldexp(scale, j) < 2**10:
            raise ValueError(
                f"invalid argument `horizon`: sums of up to {sum_bound:g} cannot stay exact on a lattice fine "
                f"enough for noise of scale {scale:g}; use sampler='float' for this horizon"
            )
    return j


def _steps_with_allowance(scale: float, ratio: Fraction, exponent: int) -> int:
    # steps >= scale 2^j * ratio, the smallest integer: at least as private
    # as the continuous noise of `scale` (ratio >= 1 carries the rounding).
    return math.ceil(_steps_of(scale, exponent) * ratio)


def _lattice(kind: str, scale: float, ratio: Fraction, exponent: int, limit: int = MAX_SCALE_STEPS) -> LatticeNoise:
    steps = _steps_with_allowance(scale, ratio, exponent)
    if steps > limit:
        raise ValueError(
            f"invalid argument `scale`: {scale!r} needs {steps} lattice steps after the rounding allowance, "
            f"more than the {limit} the exact samplers support"
        )
    return LatticeNoise(kind, math.ldexp(steps, -exponent), exponent, steps)


def _steps_of(x: float, exponent: int) -> Fraction:
    return Fraction(x) * 2**exponent if exponent >= 0 else Fraction(x) / 2**-exponent


def lattice_laplace(
    scale: float,
    sensitivity_l1: float,
    *,
    dim: int = 1,
    value_range: tuple[float, float] | None = None,
    sum_bound: float | None = None,
) -> LatticeNoise:
    """The discrete Laplace that replaces continuous Laplace(``scale``) noise
    on a statistic of L1 sensitivity ``sensitivity_l1`` with no loss of
    privacy, the statistic's entries being rounded to the lattice first.

    Continuous Laplace(b) on sensitivity Delta is (Delta / b)-DP per draw.
    The discrete Laplace with t steps on a statistic whose rounded value
    moves by at most S steps is (S / t)-DP (the ratio exp(-|k|/t) /
    exp(-|k - s|/t) <= exp(s/t) at integer s). So t = ceil(S b / Delta)
    steps (computed in exact rational arithmetic) is at least as private,
    whatever composition the continuous calibration went through, and
    the released value is an exact multiple of g = 2^-j, j =
    :func:`lattice_exponent` (``scale``).

    S, the rounded statistic's sensitivity in steps:

    - ``value_range=(lo, hi)``: the statistic is a sum of inputs, one of
      which changes, and each of its ``dim`` entries lies in [lo, hi];
      ``sensitivity_l1`` must be dim (hi - lo). Rounding is monotone, so a
      rounded entry moves by at most round(hi) - round(lo) steps:
      S = dim (round(hi 2^j) - round(lo 2^j)) (= Delta 2^j when lo, hi lie
      on the lattice: no allowance at all);
    - otherwise (norm-bounded inputs): each entry's rounding moves it by at
      most half a step on each side, S = ceil(Delta 2^j) + dim (as
      :func:`secure_laplace_epsilon`).

    ``sum_bound``: the largest magnitude a released sum can reach (the
    lattice is made coarser if needed: :func:`capped_lattice_exponent`).
    ``scale``, ``sensitivity_l1`` finite > 0, ``dim`` >= 1.
    """
    scale = positive("scale", scale)
    sensitivity = positive("sensitivity_l1", sensitivity_l1)
    dim = positive_int("dim", dim)
    j = capped_lattice_exponent(scale, sum_bound)
    if value_range is not None:
        lo, hi = value_range
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"invalid argument `value_range`: needs finite lo < hi, got {value_range!r}")
        if not math.isclose(sensitivity, dim * (hi - lo), rel_tol=1e-12):
            raise ValueError(
                f"invalid argument `sensitivity_l1`: with value_range {value_range!r} and dim {dim} it must be "
                f"dim (hi - lo) = {dim * (hi - lo)!r}, got {sensitivity!r}"
            )
        s = dim * (round_to_lattice_steps(hi, j) - round_to_lattice_steps(lo, j))
        ratio = Fraction(s) / _steps_of(sensitivity, j)
    else:
        s = math.ceil(_steps_of(sensitivity, j)) + dim
        ratio = Fraction(s) / _steps_of(sensitivity, j)
    return _lattice("laplace", scale, max(ratio, Fraction(1)), j)


def lattice_gaussian(
    sigma: float, sensitivity_l2: float, *, dim: float = 1, kind: str = "gaussian", sum_bound: float | None = None
) -> LatticeNoise:
    """The discrete Gaussian that replaces continuous N(0, ``sigma``^2) noise
    on a statistic of L2 sensitivity ``sensitivity_l2`` with ``dim`` entries
    (rounded to the lattice first).

    Rounding moves each entry by at most g/2, so the rounded statistic has
    L2 sensitivity at most Delta + sqrt(dim) g; sigma' = sigma (Delta +
    sqrt(dim) g) / Delta, rounded up to whole steps, keeps Delta / sigma,
    hence:

    - zCDP (the paper calibrations' accounting): the product of discrete
      Gaussians N_Z(0, s^2) is (S^2 / 2 s^2)-zCDP for integer shifts of L2
      norm S (Canonne, Kamath & Steinke 2020, Thm. 4 per coordinate; Renyi
      divergences of products add), the continuous rho or less;
    - exact (epsilon, delta) accounting (the tight calibrations): the
      caller calibrates sigma at the delta of
      :func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`.

    The discrete Gaussian is sigma'-subgaussian with variance <= sigma'^2
    (CKS 2020, Cor. 23 and Prop. 19), so confidence bounds written for the
    continuous noise of sigma' hold. ``kind``: "gaussian" or
    "symmetric_gaussian" (diagonal variance 2 sigma'^2, Shariff & Sheffet
    §4.2; pass dim = p^2 / 2 for the whitened (p, p) statistic, whose
    rounding error has Frobenius norm <= p g, i.e. p g / sqrt(2) whitened).
    """
    sigma = positive("sigma", sigma)
    sensitivity = positive("sensitivity_l2", sensitivity_l2)
    dim_f = positive("dim", dim)
    if kind not in ("gaussian", "symmetric_gaussian"):
        raise ValueError(f"invalid argument `kind`: must be 'gaussian' or 'symmetric_gaussian', got {kind!r}")
    j = capped_lattice_exponent(sigma, sum_bound)

    def ratio_at(exponent: int) -> Fraction:
        # (Delta + sqrt(dim) g) / Delta, rounded up to a rational >= the real one.
        allowance = math.sqrt(dim_f) * math.ldexp(1.0, -exponent) / sensitivity
        return Fraction(1) + Fraction(math.nextafter(allowance * (1 + 1e-15), math.inf))

    if _steps_with_allowance(sigma, ratio_at(j), j) <= MAX_SCALE_STEPS:
        return _lattice(kind, sigma, ratio_at(j), j)
    # A rounding allowance of more than the sigma itself (many coordinates
    # rounded, e.g. the T entries of a factorization counter's encoded
    # stream): a finer lattice shrinks it, up to the discrete Gaussian's
    # 2^25 steps (2^24 for the symmetric matrix) and while sums up to
    # sum_bound stay exact. The finest
    # lattice that fits gives the least noise (sigma' = sigma (1 + a 2^-k)).
    finest, limit = j, MAX_GAUSSIAN_SCALE_STEPS[kind]
    cap = _exact_sum_exponent(sum_bound)
    while finest < j + 6 and (cap is None or finest + 1 <= cap) and (
        _steps_with_allowance(sigma, ratio_at(finest + 1), finest + 1) <= limit
    ):
        finest += 1
    return _lattice(kind, sigma, ratio_at(finest), finest, limit)
