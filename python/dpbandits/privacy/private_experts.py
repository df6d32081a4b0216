"""Privacy constants and regret rates of the private experts learners past
Agarwal & Singh 2017 (:mod:`dpbandits.learners.private_experts`).

Stochastic losses: Asi, Feldman, Koren & Talwar, "Private online
prediction from experts: separations and faster rates" (COLT 2023, arXiv
2210.13537), Sec. 3. Rounds are cut into doubling batches; the expert of
batch i + 1 is the report-noisy-min over batch i's summed losses. Each
round's loss vector enters exactly one selection, so the transcript of
selections is as private as one selection (parallel composition; the
later selections do not read that loss vector).

One selection (report-noisy-min, the argument written out here because
the paper's text we could reach states the rate, not the noise
constant): scores S(x) = sum_{t in B} l_t(x) with l_t in [0, 1]^d, so a
change of one loss vector moves every score by at most Delta = 1, in
either direction (the scores are not monotone counting queries). Output
argmin_x S(x) + Z_x, ties to the lowest index. Fix Z_{-i}. Expert i wins
exactly on a down-set {Z_i <= z*(S)}; on the neighbour S',
S'(i) + z - 2 Delta <= S(i) + z - Delta and S'(j) >= S(j) - Delta, so a
win of i at Z_i = z under S (strict against lower indices, weak against
higher ones) is a win at z - 2 Delta under S', whence
z*(S') >= z*(S) - 2 Delta and

    P_S'(i) >= P(Z_i <= z*(S) - 2 Delta) >= exp(-2 Delta / b) P_S(i)     (RNM)

for Z ~ Laplace(b) (density ratio e^{-s/b} at shift s) and equally for
the discrete Laplace with t steps and integer shift 2 Delta 2^j
(pmf ratio e^{-s/t}). Hence Laplace(b = 2 / epsilon) gives epsilon-DP
(Dwork & Roth 2014, Claim 3.9 with the factor 2 of non-monotone scores);
on the lattice t = ceil(2^(j+1) / epsilon) steps, epsilon met = 2^(j+1) / t
(losses in [0, 1] rounded monotonically stay in [0, 2^j] steps: no
rounding allowance). The audit in tests/test_private_experts_audit.py
checks the released selections against this claim.

Rates (constant 1, the log factors as the papers state them):

- stochastic (AFKT 2023, Thm. for stochastic adversaries):
  sqrt(T ln d) + ln(d) ln(T) / epsilon, :func:`stochastic_rate`;
- Agarwal & Singh 2017 (Thm. 3.1, experts): sqrt(T ln d) + d ln(d) ln^2(T)
  / epsilon, :func:`agarwal_singh_rate` (the regime the new learners beat).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpbandits._validation import positive, positive_int
from dpbandits.noise import NoiseWire
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import LatticeNoise, Sampler, lattice_laplace

__all__ = [
    "PROTECTS",
    "SelectionNoise",
    "agarwal_singh_rate",
    "batch_lengths",
    "report_noisy_min_epsilon",
    "report_noisy_min_noise",
    "stochastic_rate",
]

PROTECTS = "the loss sequence (one round's loss vector)"
"""Neighbouring loss sequences differ in one round's loss vector (AFKT 2023, Def. of DP-OPE)."""

#: L-infinity sensitivity of a batch's summed losses to one loss vector in [0, 1]^d.
SCORE_SENSITIVITY = 1.0


@dataclass(frozen=True)
class SelectionNoise:
    """The per-expert noise of one report-noisy-min selection.

    ``scale``: the Laplace scale b actually drawn (lattice: steps 2^-j);
    ``wire``: the noise value the engine takes; ``lattice``: the lattice
    parameters (None with the floating-point sampler); ``guarantee``: the
    epsilon the selections meet (<= the epsilon asked).
    """

    scale: float
    wire: NoiseWire
    lattice: LatticeNoise | None
    guarantee: Guarantee


def report_noisy_min_epsilon(scale: float, sensitivity: float = SCORE_SENSITIVITY) -> float:
    """epsilon = 2 Delta / b of report-noisy-min with Laplace(b) noise on
    scores of L-infinity sensitivity Delta (module docstring, (RNM))."""
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"invalid argument `scale`: must be finite > 0, got {scale!r}")
    if not (sensitivity > 0 and math.isfinite(sensitivity)):
        raise ValueError(f"invalid argument `sensitivity`: must be finite > 0, got {sensitivity!r}")
    return 2.0 * sensitivity / scale


def report_noisy_min_noise(epsilon: float, horizon: int, sampler: Sampler, basis: str) -> SelectionNoise:
    """Noise of an epsilon-DP report-noisy-min over batch sums of losses in
    [0, 1] (module docstring, (RNM)): Laplace(2 / epsilon), or on the
    lattice the discrete Laplace with t = ceil(2^(j+1) / epsilon) steps,
    exact sums up to ``horizon`` losses (``sum_bound``). ``basis`` names
    the algorithm in the guarantee."""
    epsilon = positive("epsilon", epsilon)
    horizon = positive_int("horizon", horizon)
    scale = 2.0 * SCORE_SENSITIVITY / epsilon
    if sampler == "lattice":
        lattice = lattice_laplace(scale, SCORE_SENSITIVITY, value_range=(0.0, 1.0), sum_bound=float(horizon))
        # Scores move by at most 2^j steps; the shift in (RNM) is 2 2^j steps.
        met = 2.0 * math.ldexp(1.0, lattice.exponent) / lattice.steps
        guarantee = Guarantee("central", met, 0.0, protects=PROTECTS, basis=basis, calibration="tight",
                              sampler="lattice")
        return SelectionNoise(lattice.scale, lattice.wire(), lattice, guarantee)
    met = report_noisy_min_epsilon(scale)
    guarantee = Guarantee("central", met, 0.0, protects=PROTECTS, basis=basis, calibration="tight", sampler="float")
    return SelectionNoise(scale, ("laplace", scale), None, guarantee)


def batch_lengths(horizon: int, first_batch: int = 1) -> list[int]:
    """Lengths of the doubling batches b_0, 2 b_0, 4 b_0, ... covering
    ``horizon`` rounds (the last one cut at the horizon)."""
    horizon = positive_int("horizon", horizon)
    first_batch = positive_int("first_batch", first_batch)
    if first_batch > horizon:
        raise ValueError(f"invalid argument `first_batch`: must lie in [1, horizon = {horizon}], got {first_batch}")
    out, length, used = [], first_batch, 0
    while used < horizon:
        take = min(length, horizon - used)
        out.append(take)
        used += take
        length *= 2
    return out


def stochastic_rate(horizon: float, n: int, epsilon: float | None) -> float:
    """sqrt(T ln d) + ln(d) ln(T) / epsilon (AFKT 2023, the stochastic
    rate; epsilon None: sqrt(T ln d))."""
    base = math.sqrt(horizon * math.log(n))
    return base if epsilon is None else base + math.log(n) * math.log(horizon) / epsilon


def agarwal_singh_rate(horizon: float, n: int, epsilon: float | None) -> float:
    """sqrt(T ln d) + d ln(d) ln^2(T) / epsilon (Agarwal & Singh 2017,
    Thm. 3.1 for experts, constant 1)."""
    base = math.sqrt(horizon * math.log(n))
    return base if epsilon is None else base + n * math.log(n) * math.log(horizon) ** 2 / epsilon
