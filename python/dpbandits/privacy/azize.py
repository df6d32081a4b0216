"""Privacy formulas of the phased private K-armed learners
(:mod:`dpbandits.learners.phased_mab`), each once, with its source:

- Azize, Wu, Honda, Orabona, Ito & Basu 2025, "Optimal regret of Bernoulli
  bandits under global differential privacy" (arXiv 2505.05613), DP-KLUCB
  and DP-IMED: Laplace(1 / epsilon) on each phase's reward sum
  (:func:`phase_laplace_scale`), the divergence
  d_eps(x, y) = inf_{z between x and y} eps |z - x| + kl(z, y)
  (:func:`d_eps`, closed form below), the KL-UCB-type index
  (:func:`dp_klucb_index`), the IMED-type index (:func:`dp_imed_index`) and
  the lower bound of Thm 1 (:func:`azize2025_lower_bound`);
- Azize & Basu 2022, "When privacy meets partial information" (NeurIPS),
  Alg. 1: AdaP-UCB / AdaP-KLUCB on the last phase's Laplace-noised mean
  (:func:`adap_index_coefficients`) and the lower bound of Thm 3
  (:func:`azize_basu2022_lower_bound`);
- Azize & Basu 2024, "Concentrated differential privacy for bandits":
  AdaC-UCB / AdaC-KLUCB, Gaussian noise of sigma = 1 / sqrt(2 rho) on each
  phase sum (:func:`phase_gaussian_sigma`, :func:`adac_index_coefficients`);
- Sajed & Sheffet 2019 (ICML), DP-SE, Alg. 1: epoch lengths and
  elimination gaps (:func:`dp_se_schedule`);
- the phased private Thompson sampling's posterior variances
  (:func:`dp_ts_variances`);
- the floor of the adaptive phase schedule (ours, beyond the papers:
  :func:`adaptive_min_phase`);
- the exact guarantee of lattice noise on a sum of rewards in [0, 1]
  (:func:`lattice_laplace_epsilon`, :func:`lattice_gaussian_rho`).

Closed form of d_eps. For x <= y, f(z) = eps (z - x) + kl(z, y) is convex
on [x, y] with f'(z) = eps + ln(z (1 - y) / (y (1 - z))), zero at
z* = y e^-eps / (1 - y + y e^-eps) < y. Hence the minimiser is
max(x, z*): d_eps(x, y) = kl(x, y) when x >= z*, and otherwise, with
kl(z*, y) = -eps z* - ln(1 - y + y e^-eps),
d_eps(x, y) = -eps x - ln(1 - y + y e^-eps) (minus the log-moment
generating function of Bernoulli(y) at -eps, shifted). In particular
z* = 1 when y = 1, so d_eps(x, 1) = eps (1 - x). For x > y the mirror
image: z* = y e^eps / (1 - y + y e^eps), d_eps = kl(x, y) when x <= z*,
else eps x - ln(1 - y + y e^eps).

Sensitivity on the lattice. Rewards are normalised to [0, 1]; on the
lattice 2^-j each reward is rounded to the nearest multiple of 2^-j
(0 and 1 are lattice points and rounding is monotone, so a rounded reward
stays in [0, 1]) and the phase sum is an exact integer number of steps.
Changing one reward changes the sum by at most 2^j steps: the
sensitivity stays exactly 1, and discrete Laplace with t = ceil(b 2^j)
steps is (2^j / t)-DP <= (1 / b)-DP (:func:`lattice_laplace_epsilon`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from dpbandits._validation import in_open_unit, positive, positive_int, real
from dpbandits.privacy.secure import lattice_exponent, lattice_steps

__all__ = [
    "DPSESchedule",
    "adac_index_coefficients",
    "adap_index_coefficients",
    "adaptive_min_phase",
    "azize2025_lower_bound",
    "azize_basu2022_lower_bound",
    "d_eps",
    "dp_imed_index",
    "dp_klucb_index",
    "dp_se_schedule",
    "dp_ts_variances",
    "kl_bernoulli",
    "lattice_gaussian_rho",
    "lattice_laplace_epsilon",
    "phase_gaussian_sigma",
    "phase_laplace_scale",
]


def _unit(name: str, value: float) -> float:
    v = real(name, value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"invalid argument `{name}`: must lie in [0, 1], got {value!r}")
    return v


def kl_bernoulli(x: float, y: float) -> float:
    """kl(x, y) = x ln(x / y) + (1 - x) ln((1 - x) / (1 - y)), 0 ln 0 = 0
    (y clamped to [1e-15, 1 - 1e-15], as the engine does)."""
    x, y = _unit("x", x), _unit("y", y)
    y = min(max(y, 1e-15), 1.0 - 1e-15)
    v = 0.0
    if x > 0.0:
        v += x * math.log(x / y)
    if x < 1.0:
        v += (1.0 - x) * math.log((1.0 - x) / (1.0 - y))
    return max(v, 0.0)


def d_eps(x: float, y: float, epsilon: float) -> float:
    """d_eps(x, y) = inf over z between x and y of eps |z - x| + kl(z, y)
    (Azize et al. 2025, the divergence of Thm 1 and of the DP-KLUCB /
    DP-IMED indices, for Bernoulli laws where TV = |z - x|); closed form in
    the module docstring. ``x``, ``y`` in [0, 1], ``epsilon`` > 0."""
    x, y, eps = _unit("x", x), _unit("y", y), positive("epsilon", epsilon)
    if x <= y:
        e = math.exp(-eps)
        den = 1.0 - y + y * e
        z = y * e / den
        return kl_bernoulli(x, y) if x >= z else max(-eps * x - math.log(den), 0.0)
    e = math.exp(eps)
    den = 1.0 - y + y * e
    z = y * e / den
    return kl_bernoulli(x, y) if x <= z else max(eps * x - math.log(den), 0.0)


def _upper(m: float, c: float, div: object) -> float:
    """max{y in [m, 1] : div(m, y) <= c} by bisection (the engine's rule)."""
    if c <= 0.0:
        return m
    if div(m, 1.0) <= c:  # type: ignore[operator]
        return 1.0
    lo, hi = m, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if div(m, mid) <= c:  # type: ignore[operator]
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return lo


def dp_klucb_index(noisy_sum: float, pulls: int, t: int, epsilon: float | None, explore: float = 1.0) -> float:
    """The DP-KLUCB index (Azize et al. 2025): m = clip(noisy_sum / pulls,
    0, 1) and max{y in [m, 1] : pulls d_eps(m, y) <= explore ln t}, t the
    round of the decision (1-indexed). ``epsilon=None`` gives KL-UCB
    (Garivier & Cappé 2011, with f(t) = ln t). Reference implementation of
    the engine's index, for tests."""
    n = positive_int("pulls", pulls)
    m = min(max(real("noisy_sum", noisy_sum) / n, 0.0), 1.0)
    c = explore * math.log(positive_int("t", t)) / n
    if epsilon is None:
        return _upper(m, c, kl_bernoulli)
    eps = positive("epsilon", epsilon)
    return _upper(m, c, lambda a, b: d_eps(a, b, eps))


def dp_imed_index(noisy_mean: float, best_noisy_mean: float, pulls: int, epsilon: float) -> float:
    """The DP-IMED index (Azize et al. 2025, IMED of Honda & Takemura 2015
    with d_eps): pulls d_eps(m, m*) + ln pulls; the arm of smallest index is
    played. Means clipped to [0, 1]."""
    n = positive_int("pulls", pulls)
    m = min(max(real("noisy_mean", noisy_mean), 0.0), 1.0)
    best = min(max(real("best_noisy_mean", best_noisy_mean), 0.0), 1.0)
    return n * d_eps(m, best, epsilon) + math.log(n)


def phase_laplace_scale(epsilon: float) -> float:
    """Laplace scale 1 / epsilon of each phase's reward sum (rewards in
    [0, 1], sensitivity 1; Azize et al. 2025 and Azize & Basu 2022 Alg. 1,
    where the mean of a phase of n rewards gets Lap(1 / (epsilon n)): the
    same release). Each reward enters one phase, so the learner is
    epsilon-DP by parallel composition."""
    return 1.0 / positive("epsilon", epsilon)


def phase_gaussian_sigma(rho: float) -> float:
    """Gaussian sigma = 1 / sqrt(2 rho) of each phase sum (sensitivity 1):
    the Gaussian mechanism is Delta^2 / (2 sigma^2)-zCDP (Bun & Steinke
    2016, Prop. 1.6), used per phase by AdaC-UCB (Azize & Basu 2024);
    parallel composition over phases keeps rho."""
    return 1.0 / math.sqrt(2.0 * positive("rho", rho))


def lattice_laplace_epsilon(scale: float, exponent: int | None = None) -> float:
    """The exact epsilon of discrete Laplace noise of ``scale`` on the
    lattice 2^-j (j = ``exponent``, by default lattice_exponent(scale)) added
    to a phase sum of lattice-rounded rewards in [0, 1]: 2^j / ceil(scale 2^j)
    <= 1 / scale (sensitivity exactly 2^j steps: module docstring)."""
    j = lattice_exponent(scale) if exponent is None else exponent
    return math.ldexp(1.0, j) / lattice_steps(scale, j)


def lattice_gaussian_rho(sigma: float, exponent: int | None = None) -> float:
    """The exact rho of the discrete Gaussian with sigma' = ceil(sigma 2^j)
    steps (j = ``exponent``, by default lattice_exponent(sigma)) on a phase
    sum of sensitivity 2^j steps: 2^(2j) / (2 sigma'^2) <= 1 / (2 sigma^2)
    (Canonne, Kamath & Steinke 2020, Thm 4)."""
    j = lattice_exponent(sigma) if exponent is None else exponent
    s = lattice_steps(sigma, j)
    return math.ldexp(1.0, 2 * j) / (2.0 * s * s)


def adap_index_coefficients(epsilon: float, beta: float) -> tuple[float, float]:
    """(explore, linear) of AdaP-UCB / AdaP-KLUCB (Azize & Basu 2022,
    Alg. 1): index = m + sqrt(beta ln t / (2 n)) + beta ln t / (epsilon n)
    on the last phase's noisy mean m of n rewards (UCB), or the KL-UCB bound
    max{q : n kl(m, q) <= beta ln t} plus the same privacy term (KLUCB).
    The privacy term is the Laplace tail: P(Lap(1/(epsilon n)) >
    beta ln t / (epsilon n)) = t^-beta / 2. Returns (beta, beta / epsilon);
    ``beta`` > 0 (the paper's alpha > 3 in the analysis)."""
    b = positive("beta", beta)
    return b, b / positive("epsilon", epsilon)


def adac_index_coefficients(rho: float, beta: float) -> tuple[float, float]:
    """(explore, root) of AdaC-UCB / AdaC-KLUCB (Azize & Basu 2024):
    index = (UCB or KL-UCB bound with explore = beta) + sigma sqrt(2 beta
    ln t) / n, the Gaussian tail P(N(0, sigma^2) > sigma sqrt(2 x)) <= e^-x
    at x = beta ln t for the phase-sum noise sigma = 1/sqrt(2 rho)."""
    b = positive("beta", beta)
    return b, phase_gaussian_sigma(rho) * math.sqrt(2.0 * b)


def dp_ts_variances(epsilon: float, reward_var: float = 0.25) -> tuple[float, float]:
    """(reward_var, noise_var) of the phased private Thompson sampling:
    arm a is scored by a draw of N(m_a, reward_var / n_a + L_a noise_var /
    n_a^2), the variance of the noisy mean of n_a rewards (variance at most
    1/4 in [0, 1]) carrying L_a phase noises of variance 2 / epsilon^2
    (Laplace(1/epsilon))."""
    scale = phase_laplace_scale(epsilon)
    noise_var = 2.0 * scale * scale
    if not math.isfinite(noise_var):
        smallest = math.sqrt(2.0 / sys.float_info.max) * 1.001
        raise ValueError(f"invalid argument `epsilon`: {epsilon!r} is too small: the noise variance 2 / epsilon^2 "
                         f"overflows a float; epsilon >= {smallest:.4g} works")
    return positive("reward_var", reward_var), noise_var


#: Longest DP-SE epoch listed (pulls per arm): beyond any horizon a run
#: can have (the engines count rounds in 64-bit integers).
MAX_EPOCH_PULLS = 2.0**62


@dataclass(frozen=True)
class DPSESchedule:
    """Epoch lengths R_e and elimination gaps of DP-SE."""

    pulls: tuple[int, ...]
    gaps: tuple[float, ...]


def adaptive_min_phase(epsilon: float, floor: float, horizon: int | None = None) -> int:
    """The shortest phase of the adaptive schedule: ceil(floor / epsilon)
    pulls (at least 1; at most ``horizon`` when given: a longer phase could
    not end anyway).

    Why: a phase of l pulls releases its sum with Laplace(1/epsilon) noise,
    i.e. its average with Laplace(1 / (epsilon l)); with l >= floor /
    epsilon that is at most Laplace(1 / floor) per phase average, the size
    of one reward's deviation for floor ~ 1, whatever epsilon. (Ours, not in
    Azize et al. 2025; a data-independent constant, so it does not touch the
    privacy argument.) Examples: epsilon = 0.1, floor = 2: 20 pulls;
    epsilon = 1: 2.
    """
    eps = positive("epsilon", epsilon)
    f = positive("floor", floor)
    ratio = f / eps
    cap = positive_int("horizon", horizon) if horizon is not None else None
    if cap is not None and not ratio < cap:
        return cap
    if not math.isfinite(ratio):
        raise ValueError(f"invalid argument `floor`: floor / epsilon = {ratio} is not a finite phase length")
    return max(1, math.ceil(ratio))


def dp_se_schedule(k: int, horizon: int, epsilon: float, beta: float | None = None) -> DPSESchedule:
    """DP-SE (Sajed & Sheffet 2019, Alg. 1): epoch e = 1, 2, ... has
    Delta_e = 2^-e and pulls every active arm
    R_e = ceil(max(32 ln(8 K e^2 / beta) / Delta_e^2,
    8 ln(4 K e^2 / beta) / (epsilon Delta_e))) times; the epoch's mean gets
    Lap(1 / (epsilon R_e)) (its sum Lap(1 / epsilon)), so with probability
    >= 1 - beta / (2 K e^2) every released mean is within Delta_e / 4
    (Hoeffding at Delta_e / 8, Laplace tail at Delta_e / 8) and arms below
    the best released mean minus Delta_e / 2 are eliminated. Choice: K in
    place of the number of active arms |S| (more pulls, never fewer).
    Epochs are listed until K sum R_e >= T. ``beta`` default 1 / T."""
    k = positive_int("k", k)
    horizon = positive_int("horizon", horizon)
    eps = positive("epsilon", epsilon)
    b = 1.0 / horizon if beta is None else in_open_unit("beta", beta)
    pulls: list[int] = []
    gaps: list[float] = []
    total = 0
    e = 1
    while total < horizon and e < 64:
        delta = 2.0**-e
        # An epoch longer than MAX_EPOCH_PULLS pulls never ends within a
        # representable horizon: such lengths (a tiny epsilon or beta makes
        # them infinite) are capped there, which changes no run.
        scaled = eps * delta
        privacy_pulls = 8.0 * math.log(4 * k * e * e / b) / scaled if scaled > 0.0 else math.inf
        r = min(max(32.0 * math.log(8 * k * e * e / b) / delta**2, privacy_pulls), MAX_EPOCH_PULLS)
        pulls.append(math.ceil(r))
        gaps.append(delta / 2.0)
        total += k * pulls[-1]
        e += 1
    return DPSESchedule(tuple(pulls), tuple(gaps))


def _gaps(means: Sequence[float]) -> tuple[list[float], float]:
    ms = [_unit("means", m) for m in means]
    if not ms:
        raise ValueError("invalid argument `means`: give at least one arm")
    return ms, max(ms)


def azize2025_lower_bound(means: Sequence[float], epsilon: float, horizon: int) -> float:
    """Azize et al. 2025, Thm 1 (Bernoulli arms): any consistent
    epsilon-DP learner has liminf R_T / ln T >= sum over suboptimal a of
    Delta_a / d_eps(mu_a, mu*). Returns that constant times ln T (the
    asymptotic bound evaluated at T, as the paper's figures plot it)."""
    ms, best = _gaps(means)
    eps = positive("epsilon", epsilon)
    c = sum((best - m) / d_eps(m, best, eps) for m in ms if m < best)
    return c * math.log(positive_int("horizon", horizon))


def azize_basu2022_lower_bound(means: Sequence[float], epsilon: float, horizon: int) -> float:
    """Azize & Basu 2022, Thm 3 (problem-dependent, as we read it):
    liminf R_T / ln T >= sum over suboptimal a of
    Delta_a / min(kl(mu_a, mu*), 6 epsilon TV(mu_a, mu*)), with
    TV = mu* - mu_a for Bernoulli arms; evaluated at T."""
    ms, best = _gaps(means)
    eps = positive("epsilon", epsilon)
    c = sum((best - m) / min(kl_bernoulli(m, best), 6.0 * eps * (best - m)) for m in ms if m < best)
    return c * math.log(positive_int("horizon", horizon))
