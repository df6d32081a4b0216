"""The three privacy notions as small values, and the models they are claimed in.

Notions (what is promised about neighbouring inputs x ~ x', i.e. inputs that
differ in one user's data):

- :class:`PureDP` (epsilon): P[M(x) in S] <= e^epsilon P[M(x') in S] for
  every event S (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014,
  Def. 2.4 with delta = 0).
- :class:`ApproxDP` (epsilon, delta): P[M(x) in S] <= e^epsilon P[M(x') in S]
  + delta (Dwork & Roth 2014, Def. 2.4).
- :class:`ZCDP` (rho): D_a(M(x) || M(x')) <= rho a for every Renyi order
  a > 1 (zero-concentrated DP, Bun & Steinke 2016, Def. 1.1).

Conversions: epsilon-DP implies (epsilon^2/2)-zCDP (Bun & Steinke, Prop. 1.4:
:meth:`PureDP.to_zcdp`); rho-zCDP implies (epsilon, delta)-DP for every delta
(Bun & Steinke, Prop. 1.3, or the tighter Canonne, Kamath & Steinke 2020,
Cor. 13: :meth:`ZCDP.to_approx`).

Models (:data:`PRIVACY_MODELS`; the ``model`` of
:class:`dpbandits.privacy.Guarantee`) say *whose view* the notion
constrains. A notion value is model-free: the same (epsilon, delta) means
different things in different models.

>>> from dpbandits.privacy import PureDP, ZCDP
>>> PureDP(1.0).to_zcdp()
ZCDP(rho=0.5)
>>> print(ZCDP(0.5).to_approx(1e-5, method="bun-steinke"))
(5.29853, 1e-05)-DP
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Literal

from dpbandits._validation import delta_in_unit, in_open_unit, non_negative
from dpbandits.privacy.conversion import (
    pure_dp_to_zcdp_rho,
    zcdp_to_dp_epsilon,
    zcdp_to_dp_epsilon_cks,
)

__all__ = ["PRIVACY_MODELS", "ZCDP", "ApproxDP", "PureDP", "ZCDPConversion"]

ZCDPConversion = Literal["cks", "bun-steinke"]
"""zCDP -> (epsilon, delta) conversion: Canonne-Kamath-Steinke 2020 or Bun-Steinke 2016 Prop. 1.3."""

PRIVACY_MODELS = types.MappingProxyType({
    "central": (
        "A trusted curator sees the raw data; everything it releases (all "
        "actions, over all rounds) is DP in each user's data (Dwork & Roth "
        "2014, Def. 2.4; Hanna et al., Def. 1, rewards under continual "
        "observation)."
    ),
    "joint": (
        "Joint DP under continual observation (Kearns et al. 2014; Shariff & "
        "Sheffet 2018, Def. 1): for every t, the actions shown to users t+1, "
        "..., n are DP in user t's data (context and reward); user t's own "
        "action may depend on her context. Implied by central DP of the "
        "released statistics (Shariff & Sheffet, Claim 7)."
    ),
    "local": (
        "No trusted party: each user randomizes her own data before it leaves "
        "her, and the randomizer is DP in that single input (local DP, "
        "Kasiviswanathan et al. 2011; Hanna et al., Def. 2). Implies central "
        "DP with the same parameters."
    ),
    "shuffle": (
        "Users apply a local randomizer and a trusted shuffler permutes the "
        "reports before the untrusted learner sees them; the guarantee is "
        "central DP of the shuffled multiset, amplified from the local "
        "randomizer's (Cheu et al. 2019; Erlingsson et al. 2019; Balle et al. "
        "2019; Hanna et al., Sec. II model 3 and Alg. 3)."
    ),
})
"""Privacy model -> what the guarantee constrains, with its source."""


@dataclass(frozen=True)
class PureDP:
    """epsilon-DP (Dwork & Roth 2014, Def. 2.4 with delta = 0).

    ``epsilon`` >= 0 finite (0: the output ignores the data).
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", non_negative("epsilon", self.epsilon))

    def to_zcdp(self) -> ZCDP:
        """(epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
        return ZCDP(pure_dp_to_zcdp_rho(self.epsilon))

    def to_approx(self) -> ApproxDP:
        """(epsilon, 0)-DP: the same guarantee (Dwork & Roth 2014, Def. 2.4)."""
        return ApproxDP(self.epsilon, 0.0)

    def __str__(self) -> str:
        return f"{self.epsilon:g}-DP"


@dataclass(frozen=True)
class ApproxDP:
    """(epsilon, delta)-DP (Dwork & Roth 2014, Def. 2.4).

    ``epsilon`` >= 0 finite; 0 <= ``delta`` < 1 (0 is pure DP).
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", non_negative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", delta_in_unit("delta", self.delta))

    def __str__(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP"


@dataclass(frozen=True)
class ZCDP:
    """rho-zero-concentrated DP (Bun & Steinke 2016, Def. 1.1).

    ``rho`` >= 0 finite. Rhos of adaptively composed mechanisms add (Bun &
    Steinke, Lemma 2.3; :func:`dpbandits.privacy.compose_zcdp`).
    """

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", non_negative("rho", self.rho))

    def to_approx(self, delta: float, method: ZCDPConversion = "cks") -> ApproxDP:
        """(epsilon, delta)-DP implied by rho-zCDP, for 0 < ``delta`` < 1.

        ``method="cks"`` (default): Canonne, Kamath & Steinke 2020, Cor. 13
        (:func:`dpbandits.privacy.zcdp_to_dp_epsilon_cks`);
        ``"bun-steinke"``: epsilon = rho + 2 sqrt(rho ln(1/delta)), Bun &
        Steinke 2016, Prop. 1.3 (never smaller).
        """
        delta = in_open_unit("delta", delta)
        if method == "cks":
            epsilon = zcdp_to_dp_epsilon_cks(self.rho, delta)
        elif method == "bun-steinke":
            epsilon = zcdp_to_dp_epsilon(self.rho, delta)
        else:
            raise ValueError(
                f"invalid argument `method`: must be 'cks' or 'bun-steinke', got {method!r}"
            )
        return ApproxDP(epsilon, delta)

    def __str__(self) -> str:
        return f"{self.rho:g}-zCDP"
