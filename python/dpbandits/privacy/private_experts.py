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
- oblivious adversaries (AFKT 2023, the private shrinking dartboard):
  sqrt(T ln d) + T^(1/3) ln(d) / epsilon, :func:`afkt_oblivious_rate`;
- lazy / low-switching (Asi, Koren, Liu & Talwar 2024):
  sqrt(T ln d) + T^(1/3) ln(d) / epsilon^(2/3), :func:`lazy_rate`;
- lazy online linear optimization on the unit ball (AKLT 2024, DP-OCO):
  sqrt(T) + T^(1/3) sqrt(n) / epsilon^(2/3), :func:`lazy_oco_rate`;
- Agarwal & Singh 2017 (Thm. 3.1, experts): sqrt(T ln d) + d ln(d) ln^2(T)
  / epsilon, :func:`agarwal_singh_rate` (the regime the new learners beat).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.noise import NoiseWire
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import LatticeNoise, Sampler, lattice_laplace

__all__ = [
    "BALL_LOSS_BITS",
    "BALL_POINT_BITS",
    "PROTECTS",
    "BatchedBanditParameters",
    "DartboardParameters",
    "LazyParameters",
    "SelectionNoise",
    "afkt_oblivious_rate",
    "agarwal_singh_rate",
    "batch_lengths",
    "batched_bandit_parameters",
    "dartboard_epsilon",
    "dartboard_parameters",
    "dartboard_shift",
    "lazy_ball_epsilon",
    "lazy_ball_lattice_exponent",
    "lazy_ball_parameters",
    "lazy_epsilon",
    "lazy_lattice_exponent",
    "lazy_oco_rate",
    "lazy_parameters",
    "lazy_rate",
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


# --------------------------------------------------------------------------
# Lazy multiplicative weights (after Asi, Koren, Liu & Talwar 2024, L2P)
# --------------------------------------------------------------------------
#
# Reconstruction (the paper's text we could reach gives the transformation's
# idea and rates, not its constants): batches of B rounds; at the end of
# batch k the current expert x is kept with probability
# kappa(a) = (1 - gamma) exp(-eta a), a = x's loss over the batch, else a
# new expert is drawn from P_k(x) ∝ exp(-eta L_k(x)) (a switch); after
# S_max switches the expert is frozen. The law of the played expert is
# exactly P_k (rust/src/policy/lazy_experts.rs), so the regret is that of
# batched multiplicative weights: ln(d) / eta + eta T B / 8 (Hoeffding's
# lemma per batch loss in [0, B]).
#
# Privacy of one changed loss vector (in batch k):
#   (L1) the coin of batch k: a moves by <= 1, so the keep probability moves
#        by a factor <= e^eta and the switch probability 1 - kappa by a
#        factor <= (1 - (1 - gamma) e^-eta) / gamma <= 1 + eta (1 - gamma) / gamma:
#        eps_coin = max(eta, ln(1 + eta (1 - gamma) / gamma)), pure;
#   (L2) every draw at a batch end >= k: the exponential mechanism with
#        score -eta L (sensitivity eta), 2 eta-DP and eta^2 / 2-zCDP
#        (bounded range, Cesar & Rogers 2021, Lemma 3.2); at most S_max.
# Other coins read other batches only. zCDP adds (Bun & Steinke 2016,
# Lemma 2.3): rho = eps_coin^2 / 2 + S_max eta^2 / 2, and rho-zCDP is
# (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (Prop. 1.3); pure accounting
# gives eps_coin + 2 eta S_max. The guarantee reports the smaller.
#
# Exact draws (sampler "lattice", the default): losses are rounded to the
# nearest point of the lattice 2^-j (lazy_lattice_exponent), which keeps
# them in [0, 1], so (L1) and (L2) hold for the rounded sequence with the
# same sensitivities; eta and gamma are multiples of 2^-40 (eta rounded
# down, gamma up from the search, both only lowering the accounting, which
# is recomputed at the rounded values). The engine draws the keep coin as
# Bernoulli(1 - gamma) times Bernoulli(exp(-eta a)) and P_k by rejection
# from the uniform law with exact Bernoulli(exp(-x)) coins
# (rust/src/policy/exact_draws.rs): the released experts have exactly the
# probabilities (L1)-(L2) assume.


def lazy_epsilon(eta: float, gamma: float, max_switches: int, delta: float) -> float:
    """epsilon at ``delta`` of the lazy learner: min(pure (L1) + (L2),
    zCDP conversion), as in the comment block above."""
    eta = positive("eta", eta)
    gamma = in_open_unit("gamma", gamma)
    eps_coin = max(eta, math.log1p(eta * (1.0 - gamma) / gamma))
    pure = eps_coin + 2.0 * eta * max_switches
    rho = eps_coin**2 / 2.0 + max_switches * eta**2 / 2.0
    approx = rho + 2.0 * math.sqrt(rho * math.log(1.0 / in_open_unit("delta", delta)))
    return min(pure, approx)


def _switch_budget(expected: float) -> int:
    # E[S] <= gamma T / B + eta T; S is a sum of independent-enough coins:
    # E + 3 sqrt(E) + 5 is rarely reached (then the expert freezes).
    return math.ceil(expected + 3.0 * math.sqrt(expected) + 5.0)


@dataclass(frozen=True)
class LazyParameters:
    """Batch B, learning rate eta, floor gamma, switch budget, the modelled
    regret, the guarantee, and the exponent j of the loss lattice 2^-j of
    exact draws (None: floating-point draws)."""

    batch: int
    eta: float
    gamma: float
    max_switches: int
    regret_model: float
    guarantee: Guarantee
    lattice: int | None = None


#: Finest loss lattice 2^-j of the lazy learner's exact draws.
LAZY_LATTICE_BITS = 30


def lazy_lattice_exponent(horizon: int) -> int:
    """The exponent j of the loss lattice 2^-j of the lazy learner's exact
    draws: the finest up to 2^-30 on which ``horizon`` rounded losses in
    [0, 1] sum exactly (T 2^j <= 2^51, the engine's check). Rounding to the
    nearest lattice point keeps every loss in [0, 1], so the sensitivities
    of (L1)-(L2) are unchanged."""
    horizon = positive_int("horizon", horizon)
    j = min(LAZY_LATTICE_BITS, 51 - (horizon - 1).bit_length())  # ceil(log2 T), exactly
    if j < 0:
        raise ValueError(f"invalid argument `horizon`: {horizon!r} is too long for exact draws (at most 2^51)")
    return j


def _dyadic_gamma(gamma: float) -> float:
    # gamma rounded up to a multiple of 2^-40: an exact Bernoulli(gamma).
    return math.ceil(math.ldexp(gamma, 40)) / 2.0**40


def lazy_parameters(
    n: int, horizon: int, epsilon: float | None, delta: float = 1e-6, sampler: Sampler = "lattice"
) -> LazyParameters:
    """The (B, eta, gamma, S_max) minimizing the modelled regret
    ln(d) / eta + eta T B / 8 subject to :func:`lazy_epsilon` <= epsilon:
    B over powers of two, gamma over a log grid, eta by bisection.
    ``epsilon=None``: multiplicative weights, B = 1, eta = sqrt(8 ln d / T).
    ``sampler="lattice"`` (exact draws): eta is rounded down to a multiple
    of 2^-40 and gamma up to one (the accounting is recomputed at the
    rounded values, which only lowers it), and the loss lattice is
    :func:`lazy_lattice_exponent`; ``"float"`` keeps the unrounded values
    of the floating-point sampler."""
    n = positive_int("n", n, minimum=2)
    T = positive_int("horizon", horizon, minimum=2)
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    exact = sampler == "lattice"
    lattice = lazy_lattice_exponent(T) if exact else None
    log_d = math.log(n)
    if epsilon is None:
        eta = math.sqrt(8.0 * log_d / T)
        eta = _dyadic_eta(eta) if exact else eta
        g = Guarantee.none("non-private lazy multiplicative weights (shrinking dartboard)")
        return LazyParameters(1, eta, 0.0, T, log_d / eta + eta * T / 8.0, g, lattice)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    best: tuple[float, int, float, float, int] | None = None
    gammas = [10.0 ** (-k / 4.0) for k in range(1, 17)]
    if exact:
        gammas = [_dyadic_gamma(g) for g in gammas]
    batch = 1
    while batch <= T:
        for gamma in gammas:
            def eps_at(eta: float, batch: int = batch, gamma: float = gamma) -> float:
                budget = _switch_budget(gamma * T / batch + eta * T)
                return lazy_epsilon(eta, gamma, budget, delta)

            lo, hi = 1e-12, 10.0
            if eps_at(lo) > epsilon:
                continue
            for _ in range(80):
                mid = math.sqrt(lo * hi)
                lo, hi = (mid, hi) if eps_at(mid) <= epsilon else (lo, mid)
            eta = min(lo, math.sqrt(8.0 * log_d / (T * batch)))
            if exact:
                eta = _dyadic_eta(eta)
                if eta <= 0.0:
                    continue
            regret = log_d / eta + eta * T * batch / 8.0
            if best is None or regret < best[0]:
                best = (regret, batch, gamma, eta, _switch_budget(gamma * T / batch + eta * T))
        batch *= 2
    if best is None:
        raise ValueError(f"invalid argument `epsilon`: {epsilon!r} is too small for horizon {T}")
    regret, batch, gamma, eta, budget = best
    met = lazy_epsilon(eta, gamma, budget, delta)
    if exact:
        basis = ("lazy multiplicative weights through a batched shrinking dartboard with a switching floor, after "
                 "Asi, Koren, Liu & Talwar 2024 (L2P), exact coins and exponential-mechanism draws on a loss "
                 "lattice; accounting of dpbandits.privacy.private_experts (L1)-(L2)")
    else:
        basis = ("lazy multiplicative weights through a batched shrinking dartboard with a switching floor, after "
                 "Asi, Koren, Liu & Talwar 2024 (L2P); accounting of dpbandits.privacy.private_experts (L1)-(L2)")
    guarantee = Guarantee("central", met, delta, protects=PROTECTS, basis=basis, calibration="tight",
                          sampler=sampler)
    return LazyParameters(batch, eta, gamma, budget, regret, guarantee, lattice)


def lazy_rate(horizon: float, n: int, epsilon: float | None) -> float:
    """sqrt(T ln d) + T^(1/3) ln(d) / epsilon^(2/3) (Asi, Koren, Liu & Talwar 2024, DP-OPE)."""
    base = math.sqrt(horizon * math.log(n))
    return base if epsilon is None else base + horizon ** (1.0 / 3.0) * math.log(n) / epsilon ** (2.0 / 3.0)


# --------------------------------------------------------------------------
# Batched private bandits (Asi, Raman & Talwar 2025)
# --------------------------------------------------------------------------
#
# The conversion: play the base algorithm's arm for tau rounds, feed it one
# noisy loss (S + Z) / m per batch, S the batch's loss sum (sensitivity 1
# to one round's loss), Z ~ Laplace(1 / epsilon): epsilon-DP by the Laplace
# mechanism and parallel composition (each loss in one batch). The base is
# EXP3 with an exploration floor tuned as Agarwal & Singh's Thm 4.1 for
# T' = ceil(T / tau) rounds and forwarded noise lambda = 1 / (tau epsilon):
# eta = sqrt(ln K / (2 K T' s)), gamma = eta K sqrt(s),
# s = 1 + 2 lambda^2 ln(K T'). tau minimizes the modelled regret
# tau sqrt(2 K T' ln K s) (the paper's rate sqrt(K T / epsilon) at
# tau ~ 1 / epsilon; reconstruction: the tuning constants are ours).


@dataclass(frozen=True)
class BatchedBanditParameters:
    """Batch tau, step eta, floor gamma, batch-sum noise, modelled regret and guarantee."""

    batch: int
    eta: float
    gamma: float
    scale: float
    wire: NoiseWire
    regret_model: float
    guarantee: Guarantee


def _bandit_model(k: int, horizon: int, tau: int, epsilon: float | None) -> tuple[float, float, float]:
    rounds = -(-horizon // tau)
    lam = 0.0 if epsilon is None else 1.0 / (tau * epsilon)
    spread = 1.0 + 2.0 * lam**2 * math.log(k * rounds)
    eta = math.sqrt(math.log(k) / (2.0 * k * rounds * spread))
    gamma = min(1.0, eta * k * math.sqrt(spread))
    return tau * math.sqrt(2.0 * k * rounds * math.log(k) * spread), eta, gamma


def batched_bandit_parameters(
    k: int, horizon: int, epsilon: float | None, sampler: Sampler = "lattice", batch: int | None = None
) -> BatchedBanditParameters:
    """Parameters of :class:`dpbandits.BatchedPrivateEXP3` (comment block
    above); ``batch`` overrides the modelled optimum of tau."""
    k = positive_int("k", k, minimum=2)
    T = positive_int("horizon", horizon, minimum=2)
    if batch is None:
        taus = range(1, min(T, 4096) + 1) if epsilon is not None else [1]
        tau = min(taus, key=lambda t: _bandit_model(k, T, t, epsilon)[0])
    else:
        tau = positive_int("batch", batch)
        if tau > T:
            raise ValueError(f"invalid argument `batch`: must lie in [1, horizon = {T}], got {batch}")
    regret, eta, gamma = _bandit_model(k, T, tau, epsilon)
    basis = "Asi, Raman & Talwar 2025, batched conversion (Laplace on each batch's loss sum) of EXP3"
    if epsilon is None:
        return BatchedBanditParameters(tau, eta, gamma, 0.0, ("zero",), regret,
                                       Guarantee.none("non-private batched EXP3"))
    epsilon = positive("epsilon", epsilon)
    scale = 1.0 / epsilon
    if sampler == "lattice":
        lattice = lattice_laplace(scale, 1.0, value_range=(0.0, 1.0), sum_bound=float(tau))
        met = math.ldexp(1.0, lattice.exponent) / lattice.steps
        g = Guarantee("central", met, 0.0, protects=PROTECTS, basis=basis, calibration="tight", sampler="lattice")
        return BatchedBanditParameters(tau, eta, gamma, lattice.scale, lattice.wire(), regret, g)
    g = Guarantee("central", epsilon, 0.0, protects=PROTECTS, basis=basis, calibration="tight", sampler="float")
    return BatchedBanditParameters(tau, eta, gamma, scale, ("laplace", scale), regret, g)


# --------------------------------------------------------------------------
# Private shrinking dartboard (after Asi, Feldman, Koren & Talwar 2023,
# oblivious adversaries)
# --------------------------------------------------------------------------
#
# Reconstruction (the paper's text we could reach states the rate
# sqrt(T ln d) + T^(1/3) ln(d) / epsilon and names the ingredients: the
# shrinking dartboard of Geulen, Voecking & Winkler 2010, few switches, a
# sparse-vector test; not the algorithm's constants). Batches of B rounds;
# at the end of batch k, with a the current expert's loss over the batch,
# Z ~ Laplace(b) (discrete Laplace on the lattice) and a public shift c,
# the expert is kept with probability exp(-eta max(0, a + Z + c)), else a
# new one is drawn from P_k ∝ exp(-eta L_k) (exactly, by rejection:
# rust/src/policy/dartboard_experts.rs); after S_max switches it is frozen.
#
# Privacy of one changed loss vector (in batch k):
#   (D1) the test of batch k is post-processing of a + Z, a of sensitivity
#        1: the Laplace mechanism, eps_test = 1 / b (lattice: 2^j / t);
#   (D2) every draw at a batch end >= k: the exponential mechanism with
#        score -eta L (sensitivity eta): 2 eta-DP and eta^2 / 2-zCDP
#        (Cesar & Rogers 2021, Lemma 3.2); at most S_max of them.
# Tests of other batches read other batches only (given the transcript so
# far, the same law on both sides). Pure: eps_test + 2 eta S_max; zCDP
# (Bun & Steinke 2016, Prop. 1.4 and Lemma 2.3):
# rho = eps_test^2 / 2 + S_max eta^2 / 2, then (Prop. 1.3)
# rho + 2 sqrt(rho ln(1/delta)). The guarantee reports the smaller.
#
# Regret (oblivious adversary). The keep probability is
# kappa(a) = E exp(-eta (a + Z + c)^+) = g exp(-eta a) - r(a),
# g = exp(-eta c) E exp(-eta Z) = exp(-eta c) / (1 - eta^2 b^2) (eta b < 1),
# 0 <= r(a) <= r_max = exp(-c / b) / (2 (1 - eta b)) (the truncation at 0).
# With c >= ln(1 / (1 - eta^2 b^2)) / eta, g <= 1 and the ideal kernel
# keep-with g exp(-eta a) maps P_{k-1} to P_k exactly (the dartboard);
# the real kernel is a Markov kernel within 2 r_max of it, so the played
# law is within 2 K r_max (L1) of P_{k-1} after K batches. Regret
# <= ln(d) / eta + eta T B / 8 (batched multiplicative weights, Hoeffding's
# lemma per batch loss in [0, B]) + T K r_max; c sets the last term to a
# budget chosen with the other parameters (1 or 100).
# Switches: E[S] <= K (1 - g + r_max) + eta T (the coin's floor plus the
# dartboard's eta per unit of loss).


@dataclass(frozen=True)
class DartboardParameters:
    """Batch B, eta (a dyadic rational), shift c, switch budget, the test's
    noise, the modelled regret and the guarantee."""

    batch: int
    eta: float
    shift: float
    max_switches: int
    scale: float
    wire: NoiseWire
    regret_model: float
    guarantee: Guarantee


def dartboard_epsilon(eps_test: float, eta: float, max_switches: int, delta: float) -> float:
    """epsilon at ``delta`` of the private shrinking dartboard: min(pure
    (D1) + (D2), zCDP conversion), as in the comment block above."""
    eps_test = positive("eps_test", eps_test)
    eta = positive("eta", eta)
    pure = eps_test + 2.0 * eta * max_switches
    rho = eps_test**2 / 2.0 + max_switches * eta**2 / 2.0
    approx = rho + 2.0 * math.sqrt(rho * math.log(1.0 / in_open_unit("delta", delta)))
    return min(pure, approx)


def dartboard_shift(eta: float, scale: float, batches: int, horizon: int, budget: float = 1.0) -> float:
    """The smallest shift c with g <= 1 and T K r_max <= ``budget``
    (comment block above); needs eta b < 1."""
    if not eta * scale < 1.0:
        raise ValueError(f"invalid argument `eta`: eta * scale must be < 1, got {eta * scale!r}")
    budget = positive("budget", budget)
    c_law = -math.log1p(-((eta * scale) ** 2)) / eta
    c_tv = scale * math.log(max(1.0, horizon * batches / (2.0 * (1.0 - eta * scale) * budget)))
    return max(c_law, c_tv)


#: Budgets of the truncation term T K r_max the parameter search tries.
_TV_BUDGETS = (1.0, 100.0)


def _dartboard_model(n: int, T: int, batch: int, eta: float, scale: float, tv: float) -> tuple[float, float, int]:
    """(modelled regret, shift, switch budget) at (B, eta, b) and truncation budget ``tv``."""
    k = -(-T // batch)
    shift = dartboard_shift(eta, scale, k, T, tv)
    g = math.exp(-eta * shift) / (1.0 - (eta * scale) ** 2)
    r_max = math.exp(-shift / scale) / (2.0 * (1.0 - eta * scale))
    switches = k * (1.0 - g + r_max) + eta * T
    regret = math.log(n) / eta + eta * T * batch / 8.0 + T * k * r_max
    return regret, shift, _switch_budget(switches)


def _dyadic_eta(eta: float) -> float:
    # eta rounded down to a multiple of 2^-40: exact exponents on the lattice.
    return math.floor(math.ldexp(eta, 40)) / 2.0**40


def dartboard_parameters(
    n: int, horizon: int, epsilon: float | None, delta: float = 1e-6, sampler: Sampler = "lattice"
) -> DartboardParameters:
    """The (B, eta, c, S_max, b) minimizing the modelled regret subject to
    :func:`dartboard_epsilon` <= ``epsilon``: B over powers of two, the
    test's share of epsilon over a grid, eta by bisection. ``epsilon=None``:
    the non-private shrinking dartboard (B = 1, no test noise, c = 0)."""
    n = positive_int("n", n, minimum=2)
    T = positive_int("horizon", horizon, minimum=2)
    basis = ("batched shrinking dartboard with a Laplace switching test and exact exponential-mechanism draws, "
             "after Asi, Feldman, Koren & Talwar 2023 (oblivious adversaries); accounting of "
             "dpbandits.privacy.private_experts (D1)-(D2)")
    if epsilon is None:
        eta = _dyadic_eta(math.sqrt(8.0 * math.log(n) / T))
        g = Guarantee.none("non-private shrinking dartboard (Geulen, Voecking & Winkler 2010)")
        return DartboardParameters(1, eta, 0.0, T, 0.0, ("zero",), 2.0 * math.sqrt(T * math.log(n) / 8.0), g)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    best: tuple[float, int, float, float, float] | None = None
    batch = 1
    while batch <= T:
        for share, tv in itertools.product((0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8), _TV_BUDGETS):
            eps_test = share * epsilon
            scale = 1.0 / eps_test

            def eps_at(eta: float, batch: int = batch, scale: float = scale, eps_test: float = eps_test,
                       tv: float = tv) -> float:
                if not eta * scale < 1.0:
                    return math.inf
                return dartboard_epsilon(eps_test, eta, _dartboard_model(n, T, batch, eta, scale, tv)[2], delta)

            lo, hi = 1e-12, 0.999 / scale
            if eps_at(lo) > epsilon:
                continue
            for _ in range(40):
                mid = math.sqrt(lo * hi)
                lo, hi = (mid, hi) if eps_at(mid) <= epsilon else (lo, mid)
            eta = min(lo, math.sqrt(8.0 * math.log(n) / (T * batch)))
            regret = _dartboard_model(n, T, batch, eta, scale, tv)[0]
            if best is None or regret < best[0]:
                best = (regret, batch, eta, eps_test, tv)
        batch *= 2
    if best is None:
        raise ValueError(f"invalid argument `epsilon`: {epsilon!r} is too small for horizon {T}")
    _, batch, eta, eps_test, tv = best
    eta = _dyadic_eta(eta)
    wire: NoiseWire
    if sampler == "lattice":
        lattice = lattice_laplace(1.0 / eps_test, SCORE_SENSITIVITY, value_range=(0.0, 1.0), sum_bound=float(T))
        if lattice.exponent < 0:
            raise ValueError(f"invalid argument `epsilon`: {epsilon!r} is too small for exact draws at horizon {T} "
                             "(the test's noise would need a lattice step above 1)")
        met_test = math.ldexp(1.0, lattice.exponent) / lattice.steps
        scale, wire = lattice.scale, lattice.wire()
        step = math.ldexp(1.0, -lattice.exponent)
    else:
        met_test, scale, wire, step = eps_test, 1.0 / eps_test, ("laplace", 1.0 / eps_test), 0.0
    regret, shift, budget = _dartboard_model(n, T, batch, eta, scale, tv)
    if step:
        shift = math.ceil(shift / step) * step
    met = dartboard_epsilon(met_test, eta, budget, delta)
    guarantee = Guarantee("central", met, delta, protects=PROTECTS, basis=basis, calibration="tight",
                          sampler=sampler)
    return DartboardParameters(batch, eta, shift, budget, scale, wire, regret, guarantee)


def afkt_oblivious_rate(horizon: float, n: int, epsilon: float | None) -> float:
    """sqrt(T ln d) + T^(1/3) ln(d) / epsilon (Asi, Feldman, Koren & Talwar
    2023, the rate against oblivious adversaries, constant 1)."""
    base = math.sqrt(horizon * math.log(n))
    return base if epsilon is None else base + horizon ** (1.0 / 3.0) * math.log(n) / epsilon


# --------------------------------------------------------------------------
# Lazy exponential weights on the unit ball (after Asi, Koren, Liu & Talwar
# 2024, L2P for online convex optimization)
# --------------------------------------------------------------------------
#
# Reconstruction (the paper's text we could reach gives the transformation
# and the DP-OCO rate sqrt(T) + T^(1/3) sqrt(n) / epsilon^(2/3), reached
# with a regularized multiplicative-weights base; not its constants). The
# base here is continuous exponential weights on the unit ball of R^n for
# linear losses <l_t, x>, ||l_t||_2 <= 1, played lazily as on the simplex:
# batches of B; at the end of batch k the point x is kept with probability
# (1 - gamma) exp(-eta (<g, x> + ||g||)) (g: the batch's loss sum), else a
# new point is drawn from p_k ∝ exp(-eta <L_k, x>) (a switch); after S_max
# switches it is frozen. The law of the played point is exactly p_k
# (rust/src/policy/lazy_ball.rs), so the regret is batched exponential
# weights': n ln(max(e, eta T)) / eta + eta T B / 2 (the batch loss
# <g, x> ranges over [-B, B]: Hoeffding's lemma gives eta B^2 / 2 per
# batch). Its privacy term has n where the paper's rate has sqrt(n).
#
# Privacy of one changed loss vector (in batch k; ||l - l'||_2 <= 2):
#   (B1) the coin of batch k: <g, x> + ||g|| moves by <= 4, so the keep
#        probability moves by a factor <= e^(4 eta) and the switch
#        probability by <= 1 + 4 eta (1 - gamma) / gamma:
#        eps_coin = max(4 eta, ln(1 + 4 eta (1 - gamma) / gamma)), pure;
#   (B2) every draw at a batch end >= k: the exponential mechanism with
#        score -eta <L, x>, whose change -eta <l - l', x> ranges over an
#        interval of length 4 eta: 4 eta-DP and (4 eta)^2 / 8 = 2 eta^2-zCDP
#        (bounded range, Cesar & Rogers 2021, Lemma 3.2); at most S_max.
# rho = eps_coin^2 / 2 + 2 S_max eta^2, pure eps_coin + 4 eta S_max; the
# guarantee reports the smaller epsilon at delta. E[S] <= gamma T / B +
# 2 eta T.
#
# Exact draws (sampler="lattice", rust/src/policy/lattice_ball.rs): losses
# rounded toward zero to 2^-j coordinate by coordinate (||l||_2 <= 1 still),
# points restricted to the lattice points S = ball ∩ 2^-k Z^n, where (B2)
# holds unchanged (its argument bounds the score's change at every point of
# the ball, so on any subset of it); the coin's shift ||g|| is replaced by
# the public batch length B >= ||g||, so <g, x> + B moves by <= 2 and the
# (B1) bound above (written for a move of 4) still holds, conservatively.
# The switch probability stays <= gamma + 2 eta B per batch, so E[S] keeps
# its bound.


def lazy_ball_epsilon(eta: float, gamma: float, max_switches: int, delta: float) -> float:
    """epsilon at ``delta`` of the lazy ball learner: min(pure (B1) + (B2),
    zCDP conversion), as in the comment block above."""
    eta = positive("eta", eta)
    gamma = in_open_unit("gamma", gamma)
    eps_coin = max(4.0 * eta, math.log1p(4.0 * eta * (1.0 - gamma) / gamma))
    pure = eps_coin + 4.0 * eta * max_switches
    rho = eps_coin**2 / 2.0 + 2.0 * max_switches * eta**2
    approx = rho + 2.0 * math.sqrt(rho * math.log(1.0 / in_open_unit("delta", delta)))
    return min(pure, approx)


def _ball_model(n: int, T: int, batch: int, eta: float) -> float:
    return n * math.log(max(math.e, eta * T)) / eta + eta * T * batch / 2.0


BALL_LOSS_BITS = 16
"""Finest loss lattice 2^-j of the lazy ball learner's exact draws (with
the point lattice and eta a multiple of 2^-40, the exact exponents fit the
engine's integer arithmetic, rust/src/policy/lattice_ball.rs)."""

BALL_POINT_BITS = 16
"""Exponent k of the point lattice 2^-k of the lazy ball learner's exact
draws: released coordinates are integers times 2^-16."""


def _ball_dyadic_eta(eta: float) -> float:
    # eta rounded down to a multiple of 2^-40 (below 1) or to 24 significant
    # bits (the large rates of short non-private runs): exact exponents.
    if eta < 1.0:
        return _dyadic_eta(eta)
    step = math.ldexp(1.0, math.frexp(eta)[1] - 24)
    return math.floor(eta / step) * step


def lazy_ball_lattice_exponent(horizon: int) -> int:
    """The exponent j of the loss lattice 2^-j of the lazy ball learner's
    exact draws: 2^-16, or coarser where ``horizon`` rounded losses would
    not sum exactly (T 2^j <= 2^51). Losses are rounded toward zero
    coordinate by coordinate, so ||l||_2 <= 1 still holds and (B1)-(B2)
    keep their sensitivities."""
    horizon = positive_int("horizon", horizon)
    j = min(BALL_LOSS_BITS, 51 - (horizon - 1).bit_length())
    if j < 0:
        raise ValueError(f"invalid argument `horizon`: {horizon!r} is too long for exact draws (at most 2^51)")
    return j


def lazy_ball_parameters(
    n: int, horizon: int, epsilon: float | None, delta: float = 1e-6, sampler: Sampler = "lattice"
) -> LazyParameters:
    """The (B, eta, gamma, S_max) minimizing the modelled regret
    n ln(max(e, eta T)) / eta + eta T B / 2 subject to
    :func:`lazy_ball_epsilon` <= epsilon (B over powers of two, gamma over
    a log grid, eta by bisection). ``epsilon=None``: exponential weights
    with B = 1 and eta = sqrt(2 n ln T / T). ``sampler="lattice"`` (exact
    draws over the lattice points of the ball, points on 2^-16,
    :data:`BALL_POINT_BITS`): eta is rounded down to a multiple of 2^-40
    and gamma up to one (the accounting is recomputed at the rounded
    values, which only lowers it), and the loss lattice is
    :func:`lazy_ball_lattice_exponent`; ``"float"`` keeps the unrounded
    values of the floating-point sampler."""
    n = positive_int("n", n)
    T = positive_int("horizon", horizon, minimum=2)
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    exact = sampler == "lattice"
    lattice = lazy_ball_lattice_exponent(T) if exact else None
    if epsilon is None:
        eta = math.sqrt(2.0 * n * math.log(T) / T)
        eta = _ball_dyadic_eta(eta) if exact else eta
        g = Guarantee.none("non-private lazy exponential weights on the ball (shrinking dartboard)")
        return LazyParameters(1, eta, 0.0, T, _ball_model(n, T, 1, eta), g, lattice)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    best: tuple[float, int, float, float, int] | None = None
    gammas = [10.0 ** (-k / 4.0) for k in range(1, 17)]
    if exact:
        gammas = [_dyadic_gamma(g) for g in gammas]
    batch = 1
    while batch <= T:
        for gamma in gammas:
            def eps_at(eta: float, batch: int = batch, gamma: float = gamma) -> float:
                return lazy_ball_epsilon(eta, gamma, _switch_budget(gamma * T / batch + 2.0 * eta * T), delta)

            lo, hi = 1e-12, 10.0
            if eps_at(lo) > epsilon:
                continue
            for _ in range(60):
                mid = math.sqrt(lo * hi)
                lo, hi = (mid, hi) if eps_at(mid) <= epsilon else (lo, mid)
            eta = min(lo, math.sqrt(2.0 * n * math.log(T) / (T * batch)))
            if exact:
                eta = _ball_dyadic_eta(eta)
                if eta <= 0.0:
                    continue
            regret = _ball_model(n, T, batch, eta)
            if best is None or regret < best[0]:
                best = (regret, batch, gamma, eta, _switch_budget(gamma * T / batch + 2.0 * eta * T))
        batch *= 2
    if best is None:
        raise ValueError(f"invalid argument `epsilon`: {epsilon!r} is too small for horizon {T}")
    regret, batch, gamma, eta, budget = best
    met = lazy_ball_epsilon(eta, gamma, budget, delta)
    basis = ("lazy exponential weights on the unit ball through a batched shrinking dartboard with a switching "
             "floor, after Asi, Koren, Liu & Talwar 2024 (L2P for OCO); accounting of "
             "dpbandits.privacy.private_experts (B1)-(B2)")
    if exact:
        basis += "; exact coins and exponential-mechanism draws over the lattice points of the ball"
    guarantee = Guarantee("central", met, delta, protects=PROTECTS, basis=basis, calibration="tight",
                          sampler=sampler)
    return LazyParameters(batch, eta, gamma, budget, regret, guarantee, lattice)


def lazy_oco_rate(horizon: float, n: int, epsilon: float | None) -> float:
    """sqrt(T) + T^(1/3) sqrt(n) / epsilon^(2/3) (Asi, Koren, Liu & Talwar
    2024, DP-OCO, constant 1)."""
    base = math.sqrt(horizon)
    return base if epsilon is None else base + horizon ** (1.0 / 3.0) * math.sqrt(n) / epsilon ** (2.0 / 3.0)
