"""Private K-armed learners that release one noisy sum per phase, and the
non-private KL-UCB reference (Rust engine ``rust/src/policy/phased_mab.rs``).

- :class:`DPKLUCB`, :class:`DPIMED`: Azize, Wu, Honda, Orabona, Ito &
  Basu 2025, "Optimal regret of Bernoulli bandits under global
  differential privacy" (arXiv 2505.05613);
- :class:`AdaPUCB`, :class:`AdaPKLUCB`: Azize & Basu 2022, "When privacy
  meets partial information" (NeurIPS), Alg. 1;
- :class:`AdaCUCB`, :class:`AdaCKLUCB`: Azize & Basu 2024, "Concentrated
  differential privacy for bandits" (rho-zCDP, Gaussian noise);
- :class:`DPSE`: Sajed & Sheffet 2019 (ICML), DP-SE, Alg. 1;
- :class:`DPTS`: a phased private Thompson sampling (after Hu & Hegde,
  UAI 2022);
- :class:`KLUCB`: non-private KL-UCB (Garivier & Cappé 2011).

The privacy argument, common to all the private ones. Rewards are
clipped (``bounds="clip"``) or refused (``"error"``) to ``reward_range``
and normalised to [0, 1]. Each arm plays in phases; a phase's reward sum
is released once, with its own noise draw, when the phase ends. A reward
enters exactly one phase sum, and the phases (which arm, how long) are
fixed by earlier releases only: the schedule is a function of past
outputs, so by parallel composition over the disjoint phases (each phase
sum has sensitivity 1 and gets noise calibrated to the whole budget) the
sequence of releases is epsilon-DP (rho-zCDP for Gaussian noise) of the
reward sequence, and every decision is post-processing of the releases.
The engine's decisions read nothing else (its exact running sum is
never read before the release).

Released values (the project's noise rule, Mironov 2012): by default
(``sampler="lattice"``) each normalised reward is rounded to the lattice
2^-j (j = :func:`dpbandits.privacy.secure.lattice_exponent` of the noise
scale), the phase sum is an exact integer number of steps, and the noise
is exact discrete Laplace (Gaussian) from ``rust/src/noise/cell_sampler/``:
0 and 1 are lattice points and rounding is monotone, so one reward moves
the sum by at most 2^j steps and the sensitivity stays exactly 1; the
released sum is an exact multiple of 2^-j. The noise comes from the
learner's seeded ChaCha stream (reproducible) or, with ``secure=True``,
from operating-system entropy. ``sampler="float"`` draws floating-point
noise instead (faster to reason about, same expected regret) and its
``privacy`` says it is not protected against low-bit attacks. One noise
draw serves both the release and the decisions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._validation import delta_in_unit, positive, positive_int, real, seed_or_none
from dpbandits.learners.mab import KArmedLearner, _bounds, _reward_range
from dpbandits.noise import NoiseWire
from dpbandits.privacy.azize import (
    adac_index_coefficients,
    adap_index_coefficients,
    adaptive_min_phase,
    dp_se_schedule,
    dp_ts_variances,
    lattice_gaussian_rho,
    lattice_laplace_epsilon,
    phase_gaussian_sigma,
    phase_laplace_scale,
)
from dpbandits.privacy.conversion import zcdp_to_dp_epsilon
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import exact_lattice_noise

__all__ = [
    "DPIMED",
    "DPKLUCB",
    "DPSE",
    "DPTS",
    "KLUCB",
    "AdaCKLUCB",
    "AdaCUCB",
    "AdaPKLUCB",
    "AdaPUCB",
    "PhasedLearner",
]

Sampler = Literal["lattice", "float"]
Bounds = Literal["clip", "error"]


def _alpha(alpha: float) -> float:
    a = real("alpha", alpha)
    if not (math.isfinite(a) and a > 1.0):
        raise ValueError(f"invalid argument `alpha`: must be finite and > 1, got {alpha!r}")
    return a


def _sampler(sampler: str) -> str:
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    return sampler


def _secure(secure: bool, sampler: str) -> bool:
    if not isinstance(secure, bool):
        raise TypeError(f"invalid argument `secure`: expected a bool, got {secure!r}")
    if secure and sampler != "lattice":
        raise ValueError("invalid argument `secure`: secure=True needs sampler='lattice'")
    return secure


class PhasedLearner(KArmedLearner):
    """What the phased learners share: the engine handle, the releases, and
    the common checks (see the module docstring for the privacy argument)."""

    epsilon: float | None = None
    sampler: str = "lattice"
    noise_scale: float = 0.0
    _noise_kind: str = "zero"

    def _build(
        self,
        k: int,
        horizon: int,
        reward_range: Sequence[float],
        bounds: str,
        seed: int | None,
        sampler: str,
        secure: bool,
        **engine: Any,
    ) -> None:
        self.k = positive_int("k", k)
        self.horizon = positive_int("horizon", horizon)
        lo, hi = _reward_range(reward_range)
        self.sampler = _sampler(sampler)
        self._secure_mode = _secure(secure, self.sampler)
        exponent = None
        wire: NoiseWire = ("zero",) if self._noise_kind == "zero" else (self._noise_kind, self.noise_scale)
        if self._noise_kind != "zero" and self.sampler == "lattice":
            # Rewards normalised to [0, 1] (lattice points: no rounding
            # allowance); the lattice is coarser for horizons whose sums
            # would not stay exact (an error naming `horizon` where no
            # lattice works).
            lattice = exact_lattice_noise(self._noise_kind, self.noise_scale, float(self.horizon))
            exponent, wire = lattice.exponent, lattice.wire()
        self.lattice_exponent = exponent
        #: The phase releases' noise, as the engine gets it (rust/src/py/noise.rs).
        self.noise_wire = wire
        self._engine = _core.PhasedMabEngine(
            self.k, self.horizon, noise=wire, secure=self._secure_mode, lo=lo, hi=hi, bounds=bounds,
            seed=seed_or_none("seed", seed), **engine,
        )

    def releases(self) -> NDArray[np.float64]:
        """Every released phase sum, one row (arm, first round, last round,
        length, noisy sum of the rewards normalised to [0, 1]) per phase."""
        return self._engine.releases()

    def released_sums(self) -> NDArray[np.float64]:
        """Per arm, the sum of its released phase sums (normalised rewards)."""
        return self._engine.sums()

    def _basis(self, text: str) -> str:
        if self.sampler == "float":
            return text  # the guarantee's sampler field says what floating-point noise gives up
        how = "OS entropy" if self._secure_mode else "seeded ChaCha stream"
        return f"{text}; exact discrete noise on the lattice 2^-{self.lattice_exponent} ({how})"

    def _laplace_guarantee(self, basis: str) -> Guarantee:
        eps = self.epsilon
        assert eps is not None
        if self.sampler == "lattice":
            eps = lattice_laplace_epsilon(self.noise_scale, self.lattice_exponent)  # exact, <= the requested epsilon
        return Guarantee(
            model="central", epsilon=eps, delta=0.0, protects="rewards",
            basis=self._basis(basis + "; Laplace(1/eps) per phase sum, parallel composition over phases"),
            calibration="paper", sampler=self.sampler,  # type: ignore[arg-type]
        )


class _LaplacePhased(PhasedLearner):
    """Common constructor of the epsilon-DP phased learners."""

    phase_floor: float | None = None
    min_phase: int | None = None

    def _laplace(self, epsilon: float) -> None:
        self.epsilon = positive("epsilon", epsilon)
        self.noise_scale = phase_laplace_scale(self.epsilon)
        self._noise_kind = "laplace"

    def _grid(self, alpha: float, phase_floor: float | None, horizon: int) -> dict[str, Any]:
        """The phase grid's engine arguments: geometric with ratio
        ``alpha``, or (``phase_floor`` given) the adaptive grid whose phases
        are at least :func:`~dpbandits.privacy.azize.adaptive_min_phase`
        pulls long (effective ratio max(alpha, 1 + min_phase / n))."""
        self.alpha = _alpha(alpha)
        if phase_floor is None:
            return {"alpha": self.alpha}
        assert self.epsilon is not None
        self.phase_floor = positive("phase_floor", phase_floor)
        self.min_phase = adaptive_min_phase(self.epsilon, self.phase_floor, positive_int("horizon", horizon))
        return {"alpha": self.alpha, "min_len": self.min_phase}

    def _grid_basis(self) -> str:
        if self.min_phase is None:
            return f"geometric phases, ratio {self.alpha:g}"
        return f"adaptive phases, ratio max({self.alpha:g}, 1 + {self.min_phase} / n)"


class DPKLUCB(_LaplacePhased):
    """DP-KLUCB (Azize, Wu, Honda, Orabona, Ito & Basu 2025, arXiv
    2505.05613): KL-UCB in arm-dependent geometric phases with a Laplace
    release per phase and no forgetting; by default on our adaptive phase
    grid (below). The library's default private K-armed learner: best on
    the ``private-mab-frontier`` leaderboard (REPRODUCTION.md).

    Schedule (``phase_floor=None``, the paper's grid): each arm's phases
    end when its pull count reaches n_0 = 1,
    n_l = max(n_{l-1} + 1, ceil(alpha^l)) (alpha^l computed by repeated
    multiplication). Adaptive grid (``phase_floor`` = f; the default is
    f = 4 with alpha = 1.2): the first phase has L = ceil(f / epsilon)
    pulls (:func:`dpbandits.privacy.azize.adaptive_min_phase`, at most the
    horizon), then an arm at pull count n ends its next phase at
    n' = max(n + L, ceil(x alpha)), x <- max(x alpha, n') (x_0 = 1): the
    effective ratio is max(alpha, 1 + L / n), long phases while n is small
    and ratio alpha once n >= L / (alpha - 1). At a decision (no phase
    running) every arm is scored and the best one is committed for its
    whole next phase.
    Index: with S~_a the sum of arm a's released phase sums, N_a its pulls
    in released phases, m_a = clip(S~_a / N_a, 0, 1),
    U_a = max{y in [m_a, 1] : N_a d_eps(m_a, y) <= explore ln t}
    (:func:`dpbandits.privacy.azize.dp_klucb_index`), d_eps the divergence
    of the paper's lower bound (:func:`dpbandits.privacy.azize.d_eps`).
    The paper's regret is within a factor alpha of its Thm 1 lower bound.

    Why the adaptive grid (beyond the paper). A small ratio brings the
    regret closer to the bound (the factor alpha), but the paper's grid
    starts with one-pull phases (about 25 at alpha = 1.1), each with its own
    Laplace(1/epsilon) draw: their sum, of standard deviation about
    7 / epsilon against a few dozen rewards, can bury the best arm for
    most of the horizon (fixed alpha = 1.1 on the instance below: mean
    5,276 at eps = 1, runs up to 127,000, 4-6% of runs above 2% of T). A
    phase of at least f / epsilon pulls releases its average with Laplace
    noise of scale at most 1 / f per pull, the size of a reward's own
    deviation, whatever epsilon; once n >= L / (alpha - 1) the grid is the
    paper's at ratio alpha, where its factor alpha applies. alpha = 1.1
    with the same floor is a little better on average on the instance
    below but kept rare tails on near-tie instances (1 run in 30 above 2%
    of T on I2 / I4 / H10 at eps in {0.01, 0.1, 0.25}); 1.2 had none there
    but one run at 2.05% of T (H10, eps = 0.01, where fixed alpha = 1.5 had
    4 in 30).

    Privacy of the adaptive grid (as of the paper's): the end of an arm's
    next phase is a fixed function of its pull count in released phases
    and of public constants (alpha, f, epsilon, the horizon); which arm
    plays is decided from released sums only, so the phases are fixed by
    earlier releases; each reward enters exactly one phase sum, released
    once with its own Laplace(1/epsilon) draw (sensitivity 1); by parallel
    composition over disjoint phases the releases are epsilon-DP, and every
    decision is post-processing. Checked by the audits of the exact released
    sums in tests/test_phased_mab.py (default grid and DPTS on the adaptive
    grid: eps_lb 0.996 and 0.988 against a claim of 1; the adaptive grid
    with half the noise is flagged).

    Measured (5 arms 0.75, 0.625, 0.5, 0.375, 0.25; T = 10^6; mean +- se;
    Thm 1 lower bound 106 / 144 / 576 at eps = 1 / 0.5 / 0.1):
    default (alpha 1.2, f = 4), seeds 0-49: 116.0 +- 4.6 / 164.8 +- 4.2 /
    654.8 +- 18.1, fresh seeds 50-149: 115.0 +- 2.7 / 164.7 +- 3.5 /
    675.1 +- 19.5, no run above 2% of T; the paper's grid on seeds 0-49:
    alpha = 1.5 132.6 / 189.0 / 722.6, alpha = 2 153.3 / 205.6 / 776.3,
    alpha = 1.1 5,276 / 6,782 / 2,936. T = 10^7, seeds 0-49: default
    136.5 +- 4.8 / 190.7 +- 4.6 / 768.1 +- 17.7 (no run above 2% of T;
    bound 124 / 168 / 672), alpha = 1.5 153.3 / 216.0 / 854.6. The other
    instances: REPRODUCTION.md (private-mab-frontier).

    Open choices (the stored paper text we could reach has no algorithm
    box; these are ours): the phase grids above (first phase: one pull, or
    L pulls on the adaptive grid; arms without a release have index
    +inf); the arm is committed for its phase; the
    exploration function is explore * ln t with t the round of the
    decision (no ln ln t term; ``explore`` = 1); ties go to the arm with
    fewer pulls, then to a random order drawn once from the seed
    (``tie_ranks``; never the arm index, which would favour the first arm);
    the noisy mean is clipped to [0, 1] before the index (post-processing).

    Guarantee: epsilon-DP of the rewards (central), see the module
    docstring; ``privacy`` reports the exact lattice epsilon
    2^j / ceil(2^j / epsilon) <= epsilon.

    ``k`` >= 1, ``horizon`` >= 1, ``epsilon`` > 0, ``alpha`` > 1,
    ``explore`` >= 0, ``reward_range`` finite lo < hi, ``bounds`` 'clip'
    or 'error', ``sampler`` 'lattice' (default) or 'float',
    ``phase_floor`` > 0 or None (the paper's grid).

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Examples
    --------
    >>> import dpbandits as dp
    >>> res = dp.simulate(dp.DPKLUCB(k=3, horizon=5000, epsilon=1.0), dp.BernoulliBandit([0.9, 0.5, 0.4]), seeds=2)
    >>> res.final_regret.shape, res.guarantee.epsilon, res.guarantee.delta
    ((2,), 1.0, 0.0)
    """

    def __init__(
        self,
        k: int,
        horizon: int,
        epsilon: float,
        alpha: float = 1.2,
        explore: float = 1.0,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        sampler: Sampler = "lattice",
        secure: bool = False,
        seed: int | None = None,
        phase_floor: float | None = 4.0,
    ) -> None:
        self._args = {
            "k": k, "horizon": horizon, "epsilon": epsilon, "alpha": alpha, "explore": explore,
            "reward_range": reward_range, "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
            "phase_floor": phase_floor,
        }
        self._laplace(epsilon)
        grid = self._grid(alpha, phase_floor, horizon)
        self.explore = real("explore", explore)
        if not (math.isfinite(self.explore) and self.explore >= 0):
            raise ValueError(f"invalid argument `explore`: must be finite and >= 0, got {explore!r}")
        self._build(k, horizon, reward_range, _bounds(bounds), seed, sampler, secure,
                    index="optimistic_kl", divergence_epsilon=self.epsilon, explore=self.explore,
                    forget=False, **grid)

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (Azize et al. 2025; parallel composition)."""
        return self._laplace_guarantee(f"Azize et al. 2025, DP-KLUCB ({self._grid_basis()})")


class DPIMED(_LaplacePhased):
    """DP-IMED (Azize et al. 2025): IMED (Honda & Takemura 2015) in the
    same phases as :class:`DPKLUCB`, on the cumulative released sums.

    Index: I_a = N_a d_eps(m_a, m*) + ln N_a, m* = max_a m_a, the arm of
    smallest index is committed for its next phase
    (:func:`dpbandits.privacy.azize.dp_imed_index`). Open choices as in
    :class:`DPKLUCB` (phase grid, initialisation, commitment, ties,
    clipping). Guarantee: epsilon-DP of the rewards.

    Measured (instance of :class:`DPKLUCB`, T = 10^6, 50 seeds): median
    below DP-KLUCB's (92 vs 129 at eps = 1) but heavy tails (mean 237 at
    eps = 1; at eps = 0.1, 6% of runs above 2% of T): an arm whose
    cumulative noisy mean is buried early is revisited only at phase ends.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.
    """

    def __init__(
        self,
        k: int,
        horizon: int,
        epsilon: float,
        alpha: float = 1.5,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        sampler: Sampler = "lattice",
        secure: bool = False,
        seed: int | None = None,
        phase_floor: float | None = None,
    ) -> None:
        self._args = {
            "k": k, "horizon": horizon, "epsilon": epsilon, "alpha": alpha, "reward_range": reward_range,
            "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed, "phase_floor": phase_floor,
        }
        self._laplace(epsilon)
        grid = self._grid(alpha, phase_floor, horizon)
        self._build(k, horizon, reward_range, _bounds(bounds), seed, sampler, secure,
                    index="imed", divergence_epsilon=self.epsilon, forget=False, **grid)

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (Azize et al. 2025; parallel composition)."""
        return self._laplace_guarantee(f"Azize et al. 2025, DP-IMED ({self._grid_basis()})")


class _AdaP(_LaplacePhased):
    _kl = False
    _name = ""

    def __init__(
        self,
        k: int,
        horizon: int,
        epsilon: float,
        beta: float = 3.1,
        alpha: float = 2.0,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        sampler: Sampler = "lattice",
        secure: bool = False,
        seed: int | None = None,
    ) -> None:
        self._args = {
            "k": k, "horizon": horizon, "epsilon": epsilon, "beta": beta, "alpha": alpha,
            "reward_range": reward_range, "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
        }
        self._laplace(epsilon)
        self.alpha = _alpha(alpha)
        self.beta = positive("beta", beta)
        explore, linear = adap_index_coefficients(self.epsilon, self.beta)  # type: ignore[arg-type]
        self._build(k, horizon, reward_range, _bounds(bounds), seed, sampler, secure,
                    index="optimistic_kl" if self._kl else "optimistic", explore=explore, linear=linear,
                    alpha=self.alpha, forget=True)

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (Azize & Basu 2022, Alg. 1)."""
        return self._laplace_guarantee(f"Azize & Basu 2022, Alg. 1 ({self._name})")


class AdaPUCB(_AdaP):
    """AdaP-UCB (Azize & Basu 2022, Alg. 1): doubling arm-dependent phases
    (``alpha`` = 2), Laplace on each phase's mean, earlier phases forgotten.

    Index on the last phase's noisy mean m (n rewards):
    m + sqrt(beta ln t / (2 n)) + beta ln t / (epsilon n)
    (:func:`dpbandits.privacy.azize.adap_index_coefficients`; the paper's
    analysis takes its alpha > 3, our ``beta`` = 3.1 by default). Open
    choices: phase grid of :class:`DPKLUCB` (with alpha = 2: phases of 1,
    1, 2, 4, ... pulls, the last one half of the arm's pulls), commitment,
    ties and clipping as there. Guarantee: epsilon-DP of the rewards.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.
    """

    _kl = False
    _name = "AdaP-UCB"


class AdaPKLUCB(_AdaP):
    """AdaP-KLUCB (Azize & Basu 2022, Alg. 1 with the KL-UCB index): as
    :class:`AdaPUCB`, index max{q in [m, 1] : n kl(m, q) <= beta ln t} +
    beta ln t / (epsilon n) on the clipped last-phase noisy mean m.
    Guarantee: epsilon-DP of the rewards.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.
    """

    _kl = True
    _name = "AdaP-KLUCB"


class _AdaC(PhasedLearner):
    _kl = False
    _name = ""

    def __init__(
        self,
        k: int,
        horizon: int,
        rho: float,
        beta: float = 3.1,
        alpha: float = 2.0,
        delta: float | None = None,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        sampler: Sampler = "lattice",
        secure: bool = False,
        seed: int | None = None,
    ) -> None:
        self._args = {
            "k": k, "horizon": horizon, "rho": rho, "beta": beta, "alpha": alpha, "delta": delta,
            "reward_range": reward_range, "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
        }
        self.rho = positive("rho", rho)
        self.alpha = _alpha(alpha)
        self.beta = positive("beta", beta)
        self.noise_scale = phase_gaussian_sigma(self.rho)
        self._noise_kind = "gaussian"
        n = positive_int("horizon", horizon)
        self.delta = 1.0 / n if delta is None else delta_in_unit("delta", delta)
        if self.delta == 0.0:
            raise ValueError("invalid argument `delta`: must lie in (0, 1) for the (epsilon, delta) conversion")
        explore, root = adac_index_coefficients(self.rho, self.beta)
        self._build(k, horizon, reward_range, _bounds(bounds), seed, sampler, secure,
                    index="optimistic_kl" if self._kl else "optimistic", explore=explore, root=root,
                    alpha=self.alpha, forget=True)

    @property
    def privacy(self) -> Guarantee:
        """rho-zCDP of the rewards and its (epsilon, delta) conversion
        (Bun & Steinke 2016, Prop. 1.3, via
        :func:`dpbandits.privacy.conversion.zcdp_to_dp_epsilon`)."""
        rho = lattice_gaussian_rho(self.noise_scale, self.lattice_exponent) if self.sampler == "lattice" else self.rho
        return Guarantee(
            model="central", epsilon=zcdp_to_dp_epsilon(rho, self.delta), delta=self.delta, rho=rho,
            protects="rewards",
            basis=self._basis(f"Azize & Basu 2024 ({self._name}); Gaussian sigma = 1/sqrt(2 rho) per phase "
                              "sum, parallel composition; zCDP -> (eps, delta) by Bun & Steinke Prop. 1.3"),
            calibration="paper", sampler=self.sampler,  # type: ignore[arg-type]
        )


class AdaCUCB(_AdaC):
    """AdaC-UCB (Azize & Basu 2024, "Concentrated differential privacy for
    bandits"): the AdaP-UCB schedule (doubling phases, last phase only)
    with Gaussian noise sigma = 1 / sqrt(2 rho) on each phase sum; index
    m + sqrt(beta ln t / (2 n)) + sigma sqrt(2 beta ln t) / n
    (:func:`dpbandits.privacy.azize.adac_index_coefficients`).
    Guarantee: rho-zCDP of the rewards, reported with its (epsilon,
    ``delta``) conversion (``delta`` default 1/T). Open choices as in
    :class:`AdaPUCB`.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.
    """

    _kl = False
    _name = "AdaC-UCB"


class AdaCKLUCB(_AdaC):
    """AdaC-KLUCB (Azize & Basu 2024): as :class:`AdaCUCB` with the
    KL-UCB bound max{q : n kl(m, q) <= beta ln t} in place of the
    Hoeffding term. Guarantee: rho-zCDP (and its (epsilon, delta)).

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.
    """

    _kl = True
    _name = "AdaC-KLUCB"


class DPSE(_LaplacePhased):
    """DP-SE (Sajed & Sheffet 2019, "An optimal private stochastic-MAB
    algorithm based on an optimal private stopping rule", Alg. 1):
    successive elimination in epochs; epoch e pulls every active arm
    R_e times in a row (fresh rewards; earlier epochs forgotten), releases
    each arm's epoch sum + Lap(1/epsilon) (its mean + Lap(1/(epsilon R_e))),
    and eliminates arms whose released mean is below the best one minus
    Delta_e / 2 (:func:`dpbandits.privacy.azize.dp_se_schedule`: R_e,
    Delta_e = 2^-e, confidence ``beta`` default 1/T, K in place of the
    active-arm count). When one arm is left it is played to the end.
    Guarantee: epsilon-DP of the rewards (each reward is in one epoch sum).

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.
    """

    def __init__(
        self,
        k: int,
        horizon: int,
        epsilon: float,
        beta: float | None = None,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        sampler: Sampler = "lattice",
        secure: bool = False,
        seed: int | None = None,
    ) -> None:
        self._args = {
            "k": k, "horizon": horizon, "epsilon": epsilon, "beta": beta, "reward_range": reward_range,
            "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
        }
        self._laplace(epsilon)
        self.schedule = dp_se_schedule(positive_int("k", k), positive_int("horizon", horizon), self.epsilon,  # type: ignore[arg-type]
                                       beta)
        self._build(k, horizon, reward_range, _bounds(bounds), seed, sampler, secure, index="elimination",
                    epochs=(list(self.schedule.pulls), list(self.schedule.gaps)))

    @property
    def active(self) -> NDArray[np.bool_]:
        """Arms not eliminated yet."""
        return self._engine.active()

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (Sajed & Sheffet 2019)."""
        return self._laplace_guarantee("Sajed & Sheffet 2019, DP-SE Alg. 1")


class DPTS(_LaplacePhased):
    """A private Thompson sampling that learns at long horizons (after Hu &
    Hegde, UAI 2022, "Near-optimal Thompson sampling-based algorithms for
    differentially private stochastic bandits").

    Why this one. Hu & Hegde show that Thompson sampling reaches the
    optimal private regret order when each arm's private mean is refreshed
    lazily, only when the arm's pull count reaches the next point of a
    geometric grid, so that each reward is charged to a single Laplace
    release; the tree counters of :class:`PrivateThompsonSampling` pay
    log T times the noise, and its gap-estimation batches do not fit
    realistic horizons. Posterior draws are made every round (unlike the
    phase-committed index learners): with draws only at phase ends, a
    buried best arm gets O(log T) chances to recover and about 6% of runs
    locked on at T = 1e6 in our measurements; with a draw every round
    none did (REPRODUCTION.md).

    Design: each arm's rewards accumulate into its open phase; when the
    arm's pull count reaches n_l (the grid of :class:`DPKLUCB`, ratio
    ``alpha``) the phase sum is released with its own Laplace(1/epsilon)
    draw. Every round, each arm is scored by one draw of
    N(m_a, reward_var / N_a + L_a 2 / (epsilon^2 N_a^2)) (m_a the clipped
    mean of the arm's released sums, N_a its released pulls, L_a its
    releases: the noisy mean's variance; ``reward_var`` 1/4, the largest
    reward variance in [0, 1]; :func:`dpbandits.privacy.azize.dp_ts_variances`)
    and the largest draw is played; arms without a release are played
    first. Open choices (ours): Gaussian posteriors, the variance above,
    cumulative released sums (no forgetting: post-processing, Azize et al.
    2025), the phase grid, ties (fewer pulls, then a seeded random order),
    clipping of the mean to [0, 1].

    Privacy: a reward enters exactly one release (its arm's phase), each
    release has sensitivity 1 and its own Laplace(1/epsilon) draw, and
    which arm is played (hence when each phase ends) depends only on
    earlier releases and the learner's own sampling randomness:
    epsilon-DP of the rewards by parallel composition.

    Measured (5 arms 0.75 .. 0.25, T = 10^6, 50 seeds): 156 / 1,104 at
    eps = 1 / 0.1 with no run above 2% of T; on the leaderboard (20
    seeds) 5% of runs above 2% of T at eps = 0.01. About 13 M rounds/s in
    ``simulate`` (five posterior draws every round), below the 20 M of the
    phase-committed learners.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.
    """

    def __init__(
        self,
        k: int,
        horizon: int,
        epsilon: float,
        alpha: float = 1.5,
        reward_var: float = 0.25,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        sampler: Sampler = "lattice",
        secure: bool = False,
        seed: int | None = None,
        phase_floor: float | None = None,
    ) -> None:
        self._args = {
            "k": k, "horizon": horizon, "epsilon": epsilon, "alpha": alpha, "reward_var": reward_var,
            "reward_range": reward_range, "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
            "phase_floor": phase_floor,
        }
        self._laplace(epsilon)
        grid = self._grid(alpha, phase_floor, horizon)
        reward_var, noise_var = dp_ts_variances(self.epsilon, reward_var)  # type: ignore[arg-type]
        self._build(k, horizon, reward_range, _bounds(bounds), seed, sampler, secure, index="thompson",
                    reward_var=reward_var, noise_var=noise_var, forget=False, commit=False, **grid)

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (phases + Laplace, parallel composition)."""
        return self._laplace_guarantee(f"phased Thompson sampling after Hu & Hegde 2022 ({self._grid_basis()})")


class KLUCB(PhasedLearner):
    """Non-private KL-UCB (Garivier & Cappé 2011) for rewards in
    ``reward_range`` (normalised to [0, 1]; the Bernoulli kl bounds the
    deviation of any [0, 1] reward): pull each arm once, then
    argmax max{q in [m_a, 1] : n_a kl(m_a, q) <= ln t} (no ln ln t term).
    Ties: fewer pulls, then a seeded random order. Runs on the phased engine
    with phases of one round and no noise. Rewards outside the range are
    clipped (``bounds="clip"``) or refused.

    Delayed feedback: the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner` (QPM-D); each reward enters
    the statistics once, in its arm's arrival order.
    """

    def __init__(
        self,
        k: int,
        horizon: int,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        seed: int | None = None,
    ) -> None:
        self._args = {"k": k, "horizon": horizon, "reward_range": reward_range, "bounds": bounds, "seed": seed}
        self._build(k, horizon, reward_range, _bounds(bounds), seed, "float", False,
                    index="optimistic_kl", explore=1.0, alpha=0.0, forget=False)

    @property
    def privacy(self) -> Guarantee:
        """No privacy: exact sums."""
        return Guarantee.none("non-private KL-UCB")
