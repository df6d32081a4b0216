"""What a learner promises: the privacy model, the parameters, who is protected
and the result the promise rests on.

Every learner exposes one :class:`Guarantee` as ``learner.privacy``. A guarantee is a plain
value: frozen, comparable, printable on one line.

>>> from dpbandits.privacy import Guarantee
>>> g = Guarantee("joint", 1.0, 0.1, protects="contexts and rewards",
...               basis="Shariff & Sheffet 2018, Claim 7", sampler="lattice")
>>> print(g)
(1, 0.1)-joint DP of contexts and rewards [Shariff & Sheffet 2018, Claim 7; paper calibration; exact lattice noise]
>>> print(Guarantee.none())
not private [non-private learner]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpbandits._validation import positive

__all__ = ["CalibrationKind", "Guarantee", "PrivacyModel"]

PrivacyModel = Literal["none", "central", "joint", "local", "shuffle"]
"""Whose view a guarantee constrains (:data:`dpbandits.privacy.notions.PRIVACY_MODELS`)."""
CalibrationKind = Literal["paper", "tight", "none"]
"""Which calibration produced the noise: the paper's formula, the tight one, or none (non-private)."""

_MODELS = ("none", "central", "joint", "local", "shuffle")
_CALIBRATIONS = ("paper", "tight", "none")
SamplerKind = Literal["lattice", "float", "mixed", "none"]
_SAMPLERS = ("lattice", "float", "mixed", "none")
_SAMPLER_TEXT = {
    "lattice": "exact lattice noise",
    "float": "floating-point noise: not protected against low-bit attacks",
    "mixed": "partly floating-point noise (see basis): not fully protected against low-bit attacks",
    "none": "no noise",
}


@dataclass(frozen=True)
class Guarantee:
    """A differential-privacy guarantee of a learner.

    Attributes
    ----------
    model:
        ``"central"`` (a trusted curator releases noisy statistics),
        ``"joint"`` (joint DP, Kearns et al. 2014; Shariff & Sheffet 2018,
        Def. 1: everything shown to users other than t is DP in user t's
        data), ``"local"``, ``"shuffle"``, or ``"none"`` for a non-private
        learner (build that one with :meth:`none`).
    epsilon:
        Finite and > 0 for a private model; ``inf`` exactly when the model is
        ``"none"``.
    delta:
        In [0, 1); 0 means pure epsilon-DP. 0 for ``"none"``.
    rho:
        Optional rho > 0 of a rho-zCDP guarantee (Bun & Steinke 2016) that
        holds *as well as* (epsilon, delta); ``None`` when none is claimed.
    protects:
        Who/what neighbouring inputs differ in, e.g. ``"rewards"`` or
        ``"contexts and rewards"`` (Shariff & Sheffet: one user's row
        (x_t, y_t), the context-derived action and its reward).
    basis:
        The theorem/proposition/equation the guarantee rests on.
    calibration:
        ``"paper"`` (noise set by the published formula), ``"tight"``
        (smallest noise meeting the same guarantee under exact accounting),
        ``"none"`` (non-private learners only).
    sampler:
        How the released values' noise is drawn: ``"lattice"`` (exact
        discrete noise on a power-of-two lattice, inputs rounded to it and
        the rounding accounted: the released doubles carry no
        floating-point channel), ``"float"`` (floating-point noise: the
        guarantee holds for the ideal real-valued mechanism, and the
        released doubles' low bits are open to attacks of the kind of
        Mironov 2012), ``"mixed"`` (some released values of each kind,
        named in ``basis``), ``"none"`` (no noise).
    """

    model: PrivacyModel
    epsilon: float
    delta: float = 0.0
    rho: float | None = None
    protects: str = ""
    basis: str = ""
    calibration: CalibrationKind = "paper"
    sampler: SamplerKind = "float"

    def __post_init__(self) -> None:
        if self.sampler not in _SAMPLERS:
            raise ValueError(f"invalid argument `sampler`: must be one of {_SAMPLERS}, got {self.sampler!r}")
        if self.model not in _MODELS:
            raise ValueError(
                f"invalid argument `model`: must be one of {_MODELS}, got {self.model!r}"
            )
        if self.calibration not in _CALIBRATIONS:
            raise ValueError(
                f"invalid argument `calibration`: must be one of {_CALIBRATIONS}, "
                f"got {self.calibration!r}"
            )
        if self.model == "none":
            self._check_non_private()
            return
        object.__setattr__(self, "epsilon", positive("epsilon", self.epsilon))
        delta = float(self.delta)
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"invalid argument `delta`: must lie in [0, 1), got {self.delta!r}")
        object.__setattr__(self, "delta", delta)
        if self.rho is not None:
            object.__setattr__(self, "rho", positive("rho", self.rho))
        if not isinstance(self.protects, str) or not self.protects.strip():
            raise ValueError(
                "invalid argument `protects`: a private guarantee must say what it protects"
            )
        if self.calibration == "none":
            raise ValueError(
                "invalid argument `calibration`: 'none' is only for the non-private model; "
                "use 'paper' or 'tight'"
            )

    def _check_non_private(self) -> None:
        eps = self.epsilon
        if not (isinstance(eps, (int, float)) and math.isinf(eps) and eps > 0):
            raise ValueError(
                f"invalid argument `epsilon`: model 'none' requires epsilon = inf, got {eps!r}"
            )
        if self.delta != 0.0 or self.rho is not None:
            raise ValueError(
                "invalid argument `delta`/`rho`: model 'none' takes delta = 0 and no rho"
            )
        if self.calibration != "none":
            raise ValueError(
                f"invalid argument `calibration`: model 'none' requires 'none', "
                f"got {self.calibration!r}"
            )

    @classmethod
    def none(cls, basis: str = "non-private learner") -> Guarantee:
        """The guarantee of a non-private learner: no privacy (epsilon = inf)."""
        return cls(model="none", epsilon=math.inf, delta=0.0, protects="nothing",
                   basis=basis, calibration="none", sampler="none")

    @property
    def is_private(self) -> bool:
        """False only for :meth:`none`."""
        return self.model != "none"

    @property
    def is_pure(self) -> bool:
        """True for a pure epsilon-DP guarantee (delta = 0) of a private model."""
        return self.is_private and self.delta == 0.0

    def __str__(self) -> str:
        if not self.is_private:
            return f"not private [{self.basis}]"
        params = f"{self.epsilon:g}" if self.delta == 0.0 else f"({self.epsilon:g}, {self.delta:g})"
        zcdp = f" ({self.rho:.4g}-zCDP)" if self.rho is not None else ""
        source = f"{self.calibration} calibration; {_SAMPLER_TEXT[self.sampler]}"
        if self.basis:
            source = f"{self.basis}; {source}"
        return f"{params}-{self.model} DP{zcdp} of {self.protects} [{source}]"
