"""Noise scales and confidence widths of batched elimination with core sets.

Hanna, Girgis, Fragouli & Diggavi, "Differentially Private Stochastic
Linear Bandits: (Almost) for Free": Alg. 1 (central model), Alg. 2 (local
model), Alg. 3 (shuffle model). Each formula is computed here once and
handed to the Rust engine (``rust/src/policy/elimination.rs``) as plain
numbers.

Sensitivity. Neighbouring reward sequences differ in one reward (Sec. II).
With rewards declared in [r_min, r_max], one reward, and therefore one
per-action sum of a batch, changes by up to r_max - r_min. The paper's
proof (Sec. VII-A, Eq. (12)) bounds this change by 1 for rewards in
[-1, 1], where it is in fact 2. ``calibration="tight"`` (default) uses
r_max - r_min; ``calibration="paper"`` uses 1, the published noise, for
reproduction only: it is under-noised whenever r_max - r_min > 1 (by a
factor 2 for [-1, 1]), and the guarantees reported by
:func:`elimination_guarantee` are then the true, weaker ones.

Valid ranges: ``horizon`` an integer >= 2; ``epsilon`` finite and > 0;
``delta`` in (0, 1); ``d`` an integer >= 1; ``reward_range`` finite with
r_min < r_max.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.shuffle import shuffle_amplification, shuffle_local_epsilon

__all__ = [
    "BatchSchedule",
    "batch_schedule",
    "central_laplace_scale",
    "elimination_guarantee",
    "gamma_central",
    "gamma_coefficients",
    "gamma_local",
    "local_laplace_scale",
    "reward_sensitivity",
    "shuffle_batch_epsilons",
]

Calibration = Literal["tight", "paper"]
Model = Literal["none", "central", "local", "shuffle"]


@dataclass(frozen=True)
class BatchSchedule:
    """q = (2T)^{1/ln T} and the nominal batch lengths q^i, i = 1..m
    (Alg. 1 lines 3-4; natural logarithms, so e <= q <= e^2, footnote 2)."""

    horizon: int
    q: float
    lengths: tuple[float, ...]

    @property
    def batches(self) -> int:
        """m = max(1, floor(ln T) - 1): the loop ``for i = 1 : log(T) - 1``."""
        return len(self.lengths)

    def min_batch_sizes(self) -> tuple[int, ...]:
        """A data-independent lower bound on n_i = sum_a ceil(pi_i(a) q^i):
        n_i >= q^i because the pi_i(a) sum to 1, so n_i >= floor(q^i)."""
        return tuple(max(1, math.floor(x)) for x in self.lengths)


def batch_schedule(horizon: int) -> BatchSchedule:
    """The batch schedule of Alg. 1-3 (lines 3-4) for horizon T >= 2.

    >>> s = batch_schedule(1_000_000)
    >>> s.batches, round(s.q, 4)
    (12, 2.8581)
    """
    t = positive_int("horizon", horizon, minimum=2)
    log_t = math.log(t)
    q = (2.0 * t) ** (1.0 / log_t)
    m = max(1, math.floor(log_t) - 1)
    return BatchSchedule(t, q, tuple(q**i for i in range(1, m + 1)))


def reward_sensitivity(reward_range: tuple[float, float], calibration: Calibration = "tight") -> float:
    """Change of one per-action reward sum when one reward is replaced.

    ``"tight"``: r_max - r_min. ``"paper"``: 1 (Sec. VII-A, Eq. (12);
    under-noised when r_max - r_min > 1).
    """
    lo, hi = _range(reward_range)
    if calibration == "tight":
        return hi - lo
    if calibration == "paper":
        return 1.0
    raise ValueError(f"invalid argument `calibration`: must be 'tight' or 'paper', got {calibration!r}")


def central_laplace_scale(epsilon: float, sensitivity: float) -> float:
    """Alg. 1 line 8: z_ia ~ Lap(sensitivity / epsilon) on each per-action sum.

    Each reward enters exactly one released sum, so the vector of all
    released sums has L1 sensitivity ``sensitivity`` and is epsilon-DP by
    the Laplace mechanism (Dwork & Roth Thm 3.6; Thm 1 of the paper)."""
    return positive("sensitivity", sensitivity) / positive("epsilon", epsilon)


def local_laplace_scale(epsilon0: float, sensitivity: float) -> float:
    """Alg. 2 line 7 (and Alg. 3 line 9 with eps0^(i)): r + Lap(sensitivity / eps0)
    is eps0-LDP (Thm 2)."""
    return positive("sensitivity", sensitivity) / positive("epsilon0", epsilon0)


def shuffle_batch_epsilons(
    epsilon: float, delta: float, schedule: BatchSchedule, method: str = "closed-form"
) -> tuple[float, ...]:
    """eps0^(i) = f^{-1}_{n_i,delta}(epsilon) of Alg. 3 line 8, one per batch.

    n_i = sum_a ceil(pi_i(a) q^i) depends on the core set, which is known
    only when the batch runs; we use its data-independent lower bound
    floor(q^i) (:meth:`BatchSchedule.min_batch_sizes`). Shuffling more
    reports only amplifies more (f_{n,delta} decreases in n), so
    f_{n_i,delta}(eps0^(i)) <= epsilon still holds: the batch is
    (epsilon, delta)-DP, and since each user is in one batch, so is the
    whole run (Thm 3). ``method`` selects the closed form (the paper's,
    FMT Thm 3.1) or the numerical clones bound (FMT Thm 3.2); see
    :mod:`dpbandits.privacy.shuffle`.
    """
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    return tuple(shuffle_local_epsilon(epsilon, n, delta, method) for n in schedule.min_batch_sizes())


def gamma_coefficients(
    model: Model, d: int, q_i: float, scale: float = 0.0, B: float = 1.0
) -> tuple[float, float, float, float]:
    """Coefficients (c1, c2, c3, c4) of
    gamma_i = c1 sqrt(L) + c2 L + c3 + c4 sqrt(n_i L),  L = ln(4 |A_i| T^2).

    ``scale`` is the batch's Laplace scale b (1/epsilon, or 1/eps0^(i), in
    the paper, whose rewards have sensitivity 1):

    - ``"central"``, Alg. 1 line 5:
      gamma_i = sqrt(4d L / q^i) + (2 B d^2 + 2 d L) b / q^i;
    - ``"local"`` and ``"shuffle"``, Alg. 2 line 12 and Alg. 3 line 19:
      gamma_i = sqrt(L) (sqrt(4d / q^i) + 2 d b sqrt(n_i) / q^i);
    - ``"none"``: sqrt(4d L / q^i), the limit b -> 0 of both.

    B is the core-set constant of Lemma 2 (|C_i| <= B d).
    """
    d = positive_int("d", d)
    q_i = positive("q_i", q_i)
    base = math.sqrt(4.0 * d / q_i)
    if model == "none":
        return (base, 0.0, 0.0, 0.0)
    scale = positive("scale", scale)
    if model == "central":
        return (base, 2.0 * d * scale / q_i, 2.0 * positive("B", B) * d * d * scale / q_i, 0.0)
    if model in ("local", "shuffle"):
        return (base, 0.0, 0.0, 2.0 * d * scale / q_i)
    raise ValueError(f"invalid argument `model`: must be none, central, local or shuffle, got {model!r}")


def gamma_log_offset(horizon: int) -> float:
    """ln(4 T^2): the part of L = ln(4 |A_i| T^2) (Alg. 1 line 5, Alg. 2
    line 12, Alg. 3 line 19) that does not depend on the batch; the engine
    adds ln |A_i| of the surviving set."""
    return math.log(4.0 * float(positive_int("horizon", horizon)) ** 2)


def gamma_central(d: int, q_i: float, active: int, horizon: int, epsilon: float, B: float) -> float:
    """gamma_i of Alg. 1 line 5 with the paper's Lap(1/epsilon) noise."""
    c = gamma_coefficients("central", d, q_i, 1.0 / positive("epsilon", epsilon), B)
    return _evaluate(c, active, horizon, 0)


def gamma_local(d: int, q_i: float, active: int, horizon: int, n_i: int, epsilon0: float) -> float:
    """gamma_i of Alg. 2 line 12 (Alg. 3 line 19 with eps0 = eps0^(i))."""
    c = gamma_coefficients("local", d, q_i, 1.0 / positive("epsilon0", epsilon0))
    return _evaluate(c, active, horizon, n_i)


def _evaluate(c: tuple[float, float, float, float], active: int, horizon: int, n: int) -> float:
    big_l = math.log(4.0 * active * float(horizon) ** 2)
    return c[0] * math.sqrt(big_l) + c[1] * big_l + c[2] + c[3] * math.sqrt(n * big_l)


def elimination_guarantee(
    model: Model,
    epsilon: float | None,
    delta: float | None,
    reward_range: tuple[float, float],
    calibration: Calibration,
    schedule: BatchSchedule | None = None,
    batch_epsilons: tuple[float, ...] = (),
    method: str = "closed-form",
    sampler: str = "lattice",
) -> Guarantee:
    """The guarantee actually met, who it protects and the result it rests on.

    With ``calibration="paper"`` and r_max - r_min = w > 1 the noise is that
    of sensitivity 1, so the central and local guarantees are w epsilon
    (Laplace mechanism with sensitivity w), and the shuffle one is
    max_i f_{n_i,delta}(w eps0^(i)) (or the trivial w eps0^(i) where the
    closed form does not apply).
    """
    if model == "none":
        return Guarantee.none("non-private batched elimination (Hanna et al. Alg. 1 without noise)")
    lo, hi = _range(reward_range)
    factor = (hi - lo) / reward_sensitivity(reward_range, calibration)
    note = (
        f"sensitivity r_max - r_min = {hi - lo:g}"
        if calibration == "tight"
        else f"paper calibration with sensitivity 1 (under-noised: rewards span {hi - lo:g})"
    )
    eps = positive("epsilon", epsilon if epsilon is not None else math.nan)
    if model == "central":
        return Guarantee("central", eps * factor, 0.0, protects="rewards", calibration=calibration,
                         sampler=sampler,  # type: ignore[arg-type]
                         basis=f"Hanna et al. Thm 1, Laplace on per-action sums (Alg. 1); {note}")
    if model == "local":
        return Guarantee("local", eps * factor, 0.0, protects="each reward", calibration=calibration,
                         sampler=sampler,  # type: ignore[arg-type]
                         basis=f"Hanna et al. Thm 2, Laplace on each reward (Alg. 2); {note}")
    if model == "shuffle":
        if schedule is None or delta is None:
            raise ValueError("invalid argument `schedule`: the shuffle guarantee needs the batch schedule and delta")
        if factor == 1.0:
            achieved = eps
        else:
            achieved = 0.0
            for n, e0 in zip(schedule.min_batch_sizes(), batch_epsilons, strict=True):
                try:
                    achieved = max(achieved, shuffle_amplification(factor * e0, n, delta, method))
                except ValueError:
                    achieved = max(achieved, factor * e0)
        return Guarantee("shuffle", achieved, delta, protects="rewards", calibration=calibration,
                         sampler=sampler,  # type: ignore[arg-type]
                         basis=f"Hanna et al. Thm 3 (Alg. 3), eps0^(i) = f^-1_(n_i, delta)(eps) by the "
                               f"{method} bound; {note}")
    raise ValueError(f"invalid argument `privacy`: unknown model {model!r}")


def _range(reward_range: tuple[float, float]) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in reward_range)
    except (TypeError, ValueError):
        raise ValueError(
            f"invalid argument `reward_range`: expected (r_min, r_max), got {reward_range!r}"
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"invalid argument `reward_range`: need finite r_min < r_max, got {reward_range!r}")
    return lo, hi
