"""The confidence radius beta_t of LinUCB with changing regularizers.

Shariff & Sheffet 2018, Prop. 4: if rho_min, rho_max and gamma are
(alpha/2n)-accurate (Def. 3) for the regularizers (H_t, h_t), and the reward
noise is sigma-subgaussian (Assumption 5) with ||theta*|| <= S
(Assumption 3), then with probability >= 1 - alpha, for all t <= n,

    ||theta* - theta~_t||_{V_t} <= beta_t
    beta_t = sigma sqrt(2 ln(2/alpha) + ln det V_t - d ln rho_min) + S sqrt(rho_max) + gamma
           <= sigma sqrt(2 ln(2/alpha) + d ln(rho_max/rho_min + n L^2/(d rho_min)))
              + S sqrt(rho_max) + gamma          (if also ||x|| <= L, Assumption 1)

The private learners get (rho_min, rho_max, gamma) from
:mod:`dpbandits.privacy.calibration`; the non-private LinUCB from
:func:`linucb_constant`. :func:`confidence_radius` turns them into four
numbers the Rust engine evaluates each round:

    beta_t = noise_sd * sqrt(max(0, log_offset + log_det_coefficient * ln det V_t)) + offset

>>> from dpbandits.privacy import linucb_constant, confidence_radius
>>> r = confidence_radius(linucb_constant(d=2, horizon=100, rho=1.0), form="upper_bound")
>>> round(r.beta(), 6)
5.296543
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

from dpbandits._validation import in_open_unit, positive, positive_int

__all__ = [
    "ConfidenceRadius",
    "RadiusForm",
    "RegularizerBounds",
    "confidence_radius",
    "linucb_constant",
]

RadiusForm = Literal["log_det", "upper_bound"]
"""Prop. 4's radius: ``"log_det"`` (beta_t from ln det V_t) or ``"upper_bound"`` (Thm 5's beta-bar_n)."""

#: The largest exploration bonus beta ||x||_{V^-1} a radius may give any
#: admissible action (||x|| <= L): UCBs stay finite with room to spare
#: (the largest double is about 1.8e308).
MAX_BONUS = 1e300


@dataclass(frozen=True)
class RegularizerBounds:
    """(alpha/2n)-accurate bounds on the regularizers (Def. 3), with what
    Prop. 4 needs besides them.

    ``rho_min`` <= ||H_t^-1||^-1 and ||H_t|| <= ``rho_max`` and
    ||h_t||_{H_t^-1} <= ``gamma`` for every round, each with probability
    >= 1 - alpha/2n. ``d``, ``horizon`` (n) integers >= 1;
    0 < ``alpha`` < 1; ``L`` > 0 bounds ||x|| (Assumption 1, used only by the
    upper-bound form); 0 < rho_min <= rho_max finite; gamma >= 0 finite.
    """

    d: int
    horizon: int
    alpha: float
    L: float
    rho_min: float
    rho_max: float
    gamma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", positive_int("d", self.d))
        object.__setattr__(self, "horizon", positive_int("horizon", self.horizon))
        object.__setattr__(self, "alpha", in_open_unit("alpha", self.alpha))
        object.__setattr__(self, "L", positive("L", self.L))
        object.__setattr__(self, "rho_min", positive("rho_min", self.rho_min))
        rho_max = positive("rho_max", self.rho_max)
        if rho_max < self.rho_min:
            raise ValueError(
                f"invalid argument `rho_max`: must be >= rho_min = {self.rho_min!r}, "
                f"got {rho_max!r}"
            )
        object.__setattr__(self, "rho_max", rho_max)
        gamma = float(self.gamma)
        if not (math.isfinite(gamma) and gamma >= 0.0):
            raise ValueError(
                f"invalid argument `gamma`: must be finite and >= 0, got {self.gamma!r}"
            )
        object.__setattr__(self, "gamma", gamma)


class _HasBounds(Protocol):
    @property
    def bounds(self) -> RegularizerBounds: ...


def linucb_constant(
    d: int, horizon: int, rho: float = 1.0, alpha: float | None = None, L: float = 1.0
) -> RegularizerBounds:
    """Bounds of non-private LinUCB with the constant regularizer H_t = rho I, h_t = 0.

    Def. 3 holds with probability 1: rho_min = rho_max = rho, gamma = 0, so
    Prop. 4 reduces to the radius of Abbasi-Yadkori et al. 2011, Thm 2
    (App. D.1-D.2 use rho = 1).

    ``d``, ``horizon`` integers >= 1; ``rho`` finite > 0; 0 < ``alpha`` < 1,
    ``None`` for 1/horizon (needs horizon >= 2); ``L`` > 0.
    """
    n = positive_int("horizon", horizon)
    if alpha is None:
        if n < 2:
            raise ValueError(
                "invalid argument `alpha`: the default alpha = 1/horizon is 1 for horizon = 1, "
                "outside (0, 1); pass alpha explicitly"
            )
        alpha = 1.0 / n
    rho = positive("rho", rho)
    return RegularizerBounds(d=d, horizon=n, alpha=alpha, L=L, rho_min=rho, rho_max=rho, gamma=0.0)


@dataclass(frozen=True)
class ConfidenceRadius:
    """beta_t = noise_sd * sqrt(max(0, log_offset + log_det_coefficient * ln det V_t)) + offset.

    ``form="log_det"`` (Prop. 4, first line): log_offset =
    2 ln(2/alpha) - d ln(rho_min), log_det_coefficient = 1.
    ``form="upper_bound"`` (Prop. 4, second line, a constant):
    log_offset = 2 ln(2/alpha) + d ln(rho_max/rho_min + n L^2/(d rho_min)),
    log_det_coefficient = 0. Both: noise_sd = sigma, offset =
    S sqrt(rho_max) + gamma.

    On the event of Def. 3, V_t >= rho_min I, so ln det V_t >= d ln rho_min
    and the square root's argument is >= 2 ln(2/alpha) > 0; the max(0, .)
    only guards against the failure event (the Rust engine must clamp the
    same way).
    """

    form: RadiusForm
    noise_sd: float
    log_offset: float
    log_det_coefficient: float
    offset: float

    def beta(self, log_det_v: float | None = None) -> float:
        """beta_t for ln det V_t = ``log_det_v`` (required by the log_det form,
        ignored by the constant upper_bound form)."""
        if self.log_det_coefficient == 0.0:
            return self.noise_sd * math.sqrt(max(0.0, self.log_offset)) + self.offset
        if log_det_v is None:
            raise ValueError("invalid argument `log_det_v`: the log_det form needs ln det V_t")
        arg = self.log_offset + self.log_det_coefficient * float(log_det_v)
        return self.noise_sd * math.sqrt(max(0.0, arg)) + self.offset


def confidence_radius(
    bounds: RegularizerBounds | _HasBounds,
    sigma: float = 1.0,
    S: float = 1.0,
    form: RadiusForm = "log_det",
) -> ConfidenceRadius:
    """The Prop. 4 radius for the given regularizer bounds.

    ``bounds``: a :class:`RegularizerBounds`, or a calibration with a
    ``bounds`` property (:class:`~dpbandits.privacy.GaussianCalibration`,
    :class:`~dpbandits.privacy.WishartCalibration`).
    ``sigma`` > 0: the reward noise is sigma-subgaussian (Assumption 5;
    App. D: rewards in {-1, 1} give sigma = 1). ``S`` > 0: ||theta*|| <= S
    (Assumption 3; App. D: S = 1). ``form``: ``"log_det"`` (beta_t, the
    default) or ``"upper_bound"`` (the constant bound with n, Prop. 4 and
    Thm 5's beta-bar_n).
    """
    if not isinstance(bounds, RegularizerBounds):
        inner = getattr(bounds, "bounds", None)
        if not isinstance(inner, RegularizerBounds):
            raise TypeError(
                "invalid argument `bounds`: expected RegularizerBounds "
                "or a calibration with `.bounds`"
            )
        bounds = inner
    sigma = positive("sigma", sigma)
    S = positive("S", S)
    b: RegularizerBounds = bounds
    base = 2.0 * math.log(2.0 / b.alpha)
    if form == "log_det":
        log_offset = base - b.d * math.log(b.rho_min)
        coefficient = 1.0
    elif form == "upper_bound":
        growth = b.rho_max / b.rho_min + b.horizon * b.L**2 / (b.d * b.rho_min)
        log_offset = base + b.d * math.log(growth)
        coefficient = 0.0
    else:
        raise ValueError(
            f"invalid argument `form`: must be 'log_det' or 'upper_bound', got {form!r}"
        )
    _check_bonus(b, sigma, S)
    return ConfidenceRadius(
        form=form, noise_sd=sigma, log_offset=log_offset, log_det_coefficient=coefficient,
        offset=S * math.sqrt(b.rho_max) + b.gamma,
    )


def _check_bonus(b: RegularizerBounds, sigma: float, S: float) -> None:
    """Refuses a sigma (or S) whose exploration bonus could overflow.

    Over the horizon beta_t <= beta-bar_n (Prop. 4, second line) and
    ||x||_{V_t^-1} <= L / sqrt(rho_min), so every bonus is at most
    W = (sigma sqrt(A) + S sqrt(rho_max) + gamma) L / sqrt(rho_min), with A
    the upper-bound form's log term. W <= :data:`MAX_BONUS` keeps every UCB
    finite (a sigma near 1.8e308 would give infinite UCBs); the
    ValueError names the argument and the range that works with the others.
    """
    # ln(rho_max/rho_min + n L^2 / (d rho_min)) in logs (L^2 may overflow).
    first = math.log(b.rho_max / b.rho_min)
    second = math.log(b.horizon) + 2.0 * math.log(b.L) - math.log(b.d) - math.log(b.rho_min)
    log_growth = max(first, second) + math.log1p(math.exp(-abs(first - second)))
    root = math.sqrt(max(0.0, 2.0 * math.log(2.0 / b.alpha) + b.d * log_growth))
    try:
        scale = b.L / math.sqrt(b.rho_min)
        offset = S * math.sqrt(b.rho_max) + b.gamma
        width = (sigma * root + offset) * scale
    except OverflowError:
        scale = offset = width = math.inf
    if math.isfinite(width) and width <= MAX_BONUS:
        return
    budget = MAX_BONUS / scale  # the largest beta that keeps every bonus <= MAX_BONUS
    # Shown a little low, so that the printed bound itself works.
    sigma_max = (budget - offset) / root * (1.0 - 1e-5) if math.isfinite(root) and root > 0.0 else 0.0
    where = (f"S={S!r}, L={b.L!r}, rho_min={b.rho_min:.6g}, rho_max={b.rho_max:.6g}, gamma={b.gamma:.6g}, "
             f"horizon={b.horizon}, alpha={b.alpha:.6g}")
    if math.isfinite(sigma_max) and sigma_max > 0.0:
        raise ValueError(
            f"invalid argument `sigma`: {sigma!r} makes the exploration bonus beta_t ||x||_(V^-1) overflow "
            f"(up to {width:.6g} for ||x|| = L; at most {MAX_BONUS:g} keeps every UCB finite); "
            f"with {where} sigma must lie in (0, {sigma_max:.6g}]"
        )
    raise ValueError(
        f"invalid arguments `S`, `L`: the exploration bonus (S sqrt(rho_max) + gamma) L / sqrt(rho_min) is "
        f"{offset * scale:.6g} before any sigma term, above the {MAX_BONUS:g} that keeps every UCB finite ({where})"
    )
