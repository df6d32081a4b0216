"""The noise distributions a continual counter can add, as plain specs.

A spec names a distribution and its parameters; its *scale* is decided by
``dpbandits.privacy`` (which builds specs from its calibrations) and the
draws are made in Rust (``rust/src/noise/``). This module imports nothing
else of the package but argument checks, so both ``dpbandits.privacy``
and ``dpbandits.mechanisms`` (which re-exports every spec) read it.
Exact lattice noise is ``dpbandits.privacy.secure.LatticeNoise``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dpbandits._validation import positive

#: A noise value as it crosses into Rust, computed once by the privacy
#: layer: ("zero",); ("laplace" | "gaussian" | "symmetric_gaussian", scale);
#: ("wishart", scale, df); or, exact on a lattice,
#: ("lattice_laplace" | "lattice_gaussian" | "lattice_symmetric_gaussian",
#: integer steps, integer exponent) (``rust/src/py/noise.rs``).
NoiseWire = tuple[str] | tuple[str, float] | tuple[str, float, float] | tuple[str, int, int]

__all__ = [
    "GaussianNoise",
    "LaplaceNoise",
    "NoiseSpec",
    "NoiseWire",
    "SymmetricGaussianNoise",
    "WishartNoise",
    "ZeroNoise",
]


@dataclass(frozen=True)
class ZeroNoise:
    """No noise: an exact counter (non-private learners, tests)."""

    def wire(self) -> NoiseWire:
        """The noise value the Rust engines take: ("zero",)."""
        return ("zero",)


@dataclass(frozen=True)
class LaplaceNoise:
    """i.i.d. Laplace(0, ``scale``) in every entry (Mishra & Thakurta App. A:
    ``scale = log T / epsilon`` for a sensitivity-1 count)."""

    scale: float

    def __post_init__(self) -> None:
        positive("scale", self.scale)

    def wire(self) -> NoiseWire:
        """The noise value the Rust engines take: ("laplace", scale)."""
        return "laplace", float(self.scale)


@dataclass(frozen=True)
class GaussianNoise:
    """i.i.d. N(0, ``sigma``^2) in every entry (Agarwal & Singh Thm. A.1)."""

    sigma: float

    def __post_init__(self) -> None:
        positive("sigma", self.sigma)

    def wire(self) -> NoiseWire:
        """The noise value the Rust engines take: ("gaussian", sigma)."""
        return "gaussian", float(self.sigma)


@dataclass(frozen=True)
class SymmetricGaussianNoise:
    """(Z + Z^T)/sqrt(2) with Z_ij ~ N(0, ``sigma``^2) i.i.d. (Shariff & Sheffet
    §4.2): off-diagonal entries have variance sigma^2, diagonal 2 sigma^2.
    Needs a square (p, p) counter shape."""

    sigma: float

    def __post_init__(self) -> None:
        positive("sigma", self.sigma)

    def wire(self) -> NoiseWire:
        """The noise value the Rust engines take: ("symmetric_gaussian", sigma)."""
        return "symmetric_gaussian", float(self.sigma)


@dataclass(frozen=True)
class WishartNoise:
    """W_p(``scale`` * I, ``df``) (Shariff & Sheffet §4.1, Thm. 8). For the
    paper's mechanism ``scale`` is Ltilde**2 (not Ltilde). ``df`` must exceed
    p - 1. Sampled by the Bartlett decomposition: cost independent of df."""

    scale: float
    df: float

    def __post_init__(self) -> None:
        positive("scale", self.scale)
        positive("df", self.df)

    def wire(self) -> NoiseWire:
        """The noise value the Rust engines take: ("wishart", scale, df)."""
        return "wishart", float(self.scale), float(self.df)


NoiseSpec = ZeroNoise | LaplaceNoise | GaussianNoise | SymmetricGaussianNoise | WishartNoise
"""Any node noise a continual counter can add (the union of the specs above)."""

# The spec of each floating-point wire kind the Rust counters report.
SPECS_BY_KIND: dict[str, Callable[[Sequence[float]], NoiseSpec]] = {
    "zero": lambda p: ZeroNoise(),
    "laplace": lambda p: LaplaceNoise(p[0]),
    "gaussian": lambda p: GaussianNoise(p[0]),
    "symmetric_gaussian": lambda p: SymmetricGaussianNoise(p[0]),
    "wishart": lambda p: WishartNoise(p[0], p[1]),
}


def spec_of_wire(wire: NoiseWire) -> NoiseSpec:
    """The floating-point spec of a noise value; a lattice value
    (kind, steps, exponent) gives the spec of its scale steps 2^-exponent."""
    kind, *params = wire
    if kind.startswith("lattice_"):
        steps, exponent = params
        return SPECS_BY_KIND[kind.removeprefix("lattice_")]([math.ldexp(float(steps), -int(exponent))])
    return SPECS_BY_KIND[kind]([float(p) for p in params])
