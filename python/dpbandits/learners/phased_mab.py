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
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._validation import (
    delta_in_unit,
    epsilon_range,
    integral_arguments,
    parameter_range,
    positive,
    positive_int,
    real,
    seed_or_none,
)
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

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

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
    """DP-KLUCB: KL-UCB in arm-dependent phases with one Laplace release per phase.

    Azize, Wu, Honda, Orabona, Ito & Basu 2025, "Optimal regret of bandits
    under differential privacy" (arXiv 2505.05613). The library's default
    private K-armed learner.

    Each arm's rewards accumulate into its open phase; when the arm's pull
    count reaches the end of the phase, the phase sum is released once with
    its own Laplace(1/epsilon) draw. Past releases are kept (no forgetting).
    At a decision every arm is scored on its released sums and the best one
    is committed for its whole next phase. Index: with S~_a the sum of arm
    a's releases, N_a its pulls in released phases and m_a = clip(S~_a / N_a,
    0, 1), U_a = max{y in [m_a, 1] : N_a d_eps(m_a, y) <= explore ln t}
    (:func:`dpbandits.privacy.azize.dp_klucb_index`), with d_eps the
    divergence of the paper's lower bound (:func:`dpbandits.privacy.azize.d_eps`).
    The paper shows regret within a factor alpha of its Thm 1 lower bound as
    T grows.

    Phase grids. The paper's grid (``phase_floor=None``) ends an arm's phases
    at pull counts n_l = max(n_(l-1) + 1, ceil(alpha^l)): the first phases
    are single pulls, each with its own Laplace draw, whose sum can bury the
    best arm at small alpha. The adaptive grid (the default, alpha = 1.2,
    f = 4) makes the first phase L = ceil(f / epsilon) pulls long
    (:func:`dpbandits.privacy.azize.adaptive_min_phase`) and then ends the
    next phase at n' = max(n + L, ceil(x alpha)), x <- max(x alpha, n'): the
    noise per pull of a phase mean is then at most 1 / f, the size of a
    reward's own deviation, and once n >= L / (alpha - 1) the grid is the
    paper's at ratio alpha. Choices the paper leaves open: arms without a
    release have index +inf; the exploration function is explore * ln t;
    ties go to fewer pulls, then to a random order drawn once from the seed;
    the noisy mean is clipped to [0, 1] (post-processing).

    Privacy: the end of each phase is a fixed function of released pull
    counts and public constants, each reward enters exactly one phase sum
    (sensitivity 1 after normalisation) released with its own Laplace draw,
    and every decision reads released values only: epsilon-DP of the rewards
    by parallel composition (central model). ``privacy`` reports the exact
    lattice epsilon 2^j / ceil(2^j / epsilon) <= epsilon.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    alpha:
        Ratio of the phase grid, finite and > 1 (default 1.2).
    explore:
        Coefficient of ln t in the index, finite and >= 0 (default 1).
    reward_range:
        (lo, hi), finite with lo < hi: the range of a reward (default [0, 1]);
        rewards are normalised to [0, 1] and hi - lo is the sensitivity.
    bounds:
        ``"clip"`` (default) clips a reward outside ``reward_range`` to it;
        ``"error"`` refuses it with a ValueError.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise, without protection against
        low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs the lattice
        sampler); False (default) from the seeded generator.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    phase_floor:
        f > 0 for the adaptive grid (default 4: phases of at least
        ceil(4 / epsilon) pulls); None for the paper's grid.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.DPKLUCB(k=3, horizon=5000, epsilon=1.0, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'central')
    >>> res = dp.simulate(dp.DPKLUCB(k=3, horizon=5000, epsilon=1.0), dp.BernoulliBandit([0.9, 0.5, 0.4]), seeds=2)
    >>> res.final_regret.shape, res.guarantee.epsilon, res.guarantee.delta
    ((2,), 1.0, 0.0)
    """

    @epsilon_range
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
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "k": k, "horizon": horizon, "epsilon": epsilon, "alpha": alpha, "explore": explore,
            "reward_range": reward_range, "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
            "phase_floor": phase_floor,
        })
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
    """DP-IMED: IMED in the phases of :class:`DPKLUCB`, on cumulative released sums.

    Azize et al. 2025 (arXiv 2505.05613); IMED after Honda & Takemura 2015.
    Index: I_a = N_a d_eps(m_a, m*) + ln N_a with m* = max_a m_a; the arm of
    smallest index is committed for its next phase
    (:func:`dpbandits.privacy.azize.dp_imed_index`). Choices left open by the
    paper as in :class:`DPKLUCB`. An arm whose cumulative noisy mean is
    buried early is revisited only at phase ends, so at small epsilon some
    runs lock onto a suboptimal arm for long.

    Privacy: epsilon-DP of the rewards (central), as :class:`DPKLUCB`.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    alpha:
        Ratio of the phase grid, finite and > 1 (default 1.5).
    reward_range:
        (lo, hi), finite with lo < hi: the range of a reward (default [0, 1]);
        rewards are normalised to [0, 1] and hi - lo is the sensitivity.
    bounds:
        ``"clip"`` (default) clips a reward outside ``reward_range`` to it;
        ``"error"`` refuses it with a ValueError.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise, without protection against
        low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs the lattice
        sampler); False (default) from the seeded generator.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    phase_floor:
        f > 0 for the adaptive grid of :class:`DPKLUCB`; None (default) for
        the paper's grid.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.DPIMED(k=3, horizon=5000, epsilon=1.0, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'central')
    """

    @epsilon_range
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
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "k": k, "horizon": horizon, "epsilon": epsilon, "alpha": alpha, "reward_range": reward_range,
            "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed, "phase_floor": phase_floor,
        })
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

    @epsilon_range
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
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "k": k, "horizon": horizon, "epsilon": epsilon, "beta": beta, "alpha": alpha,
            "reward_range": reward_range, "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
        })
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
    """AdaP-UCB: doubling arm-dependent phases, Laplace on each phase's mean, earlier phases forgotten.

    Azize & Basu 2022, "When privacy meets partial information: a refined
    analysis of differentially private bandits", Alg. 1. Index on the last
    phase's noisy mean m of n rewards: m + sqrt(beta ln t / (2 n)) +
    beta ln t / (epsilon n) (:func:`dpbandits.privacy.azize.adap_index_coefficients`).
    Phase grid, commitment, ties and clipping as in :class:`DPKLUCB` (with
    alpha = 2: phases of 1, 1, 2, 4, ... pulls).

    Privacy: epsilon-DP of the rewards (central): each reward is in one
    phase mean, released once with its own Laplace draw.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    beta:
        Exploration coefficient, finite and > 0 (default 3.1; the analysis
        takes it > 3).
    alpha:
        Ratio of the phase grid, finite and > 1 (default 2: doubling phases).
    reward_range:
        (lo, hi), finite with lo < hi: the range of a reward (default [0, 1]);
        rewards are normalised to [0, 1] and hi - lo is the sensitivity.
    bounds:
        ``"clip"`` (default) clips a reward outside ``reward_range`` to it;
        ``"error"`` refuses it with a ValueError.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise, without protection against
        low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs the lattice
        sampler); False (default) from the seeded generator.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.AdaPUCB(k=3, horizon=5000, epsilon=1.0, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'central')
    """

    _kl = False
    _name = "AdaP-UCB"


class AdaPKLUCB(_AdaP):
    """AdaP-KLUCB: :class:`AdaPUCB` with the KL-UCB index.

    Azize & Basu 2022, Alg. 1 with the index max{q in [m, 1] : n kl(m, q) <=
    beta ln t} + beta ln t / (epsilon n) on the clipped last-phase noisy
    mean m.

    Privacy: epsilon-DP of the rewards (central).

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    beta:
        Exploration coefficient, finite and > 0 (default 3.1; the analysis
        takes it > 3).
    alpha:
        Ratio of the phase grid, finite and > 1 (default 2: doubling phases).
    reward_range:
        (lo, hi), finite with lo < hi: the range of a reward (default [0, 1]);
        rewards are normalised to [0, 1] and hi - lo is the sensitivity.
    bounds:
        ``"clip"`` (default) clips a reward outside ``reward_range`` to it;
        ``"error"`` refuses it with a ValueError.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise, without protection against
        low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs the lattice
        sampler); False (default) from the seeded generator.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.AdaPKLUCB(k=3, horizon=5000, epsilon=1.0, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'central')
    """

    _kl = True
    _name = "AdaP-KLUCB"


class _AdaC(PhasedLearner):
    _kl = False
    _name = ""

    @parameter_range("rho")
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
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "k": k, "horizon": horizon, "rho": rho, "beta": beta, "alpha": alpha, "delta": delta,
            "reward_range": reward_range, "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
        })
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
    """AdaC-UCB: the AdaP-UCB schedule with Gaussian noise, rho-zCDP.

    Azize & Basu 2024, "Concentrated differential privacy for bandits":
    doubling phases, last phase only, Gaussian noise sigma = 1 / sqrt(2 rho)
    on each phase sum; index m + sqrt(beta ln t / (2 n)) + sigma
    sqrt(2 beta ln t) / n (:func:`dpbandits.privacy.azize.adac_index_coefficients`).
    Choices left open by the paper as in :class:`AdaPUCB`.

    Privacy: rho-zCDP of the rewards (central), reported with its (epsilon,
    ``delta``) conversion (Bun & Steinke 2016, Prop. 1.3).

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    rho:
        Privacy parameter of zero-concentrated DP, finite and > 0: the learner
        is rho-zCDP in the rewards (rho = epsilon^2 / 2 is what epsilon-DP
        implies).
    beta:
        Exploration coefficient, finite and > 0 (default 3.1).
    alpha:
        Ratio of the phase grid, finite and > 1 (default 2).
    delta:
        The delta of the reported (epsilon, delta) conversion, in (0, 1);
        None (default) for 1 / T.
    reward_range:
        (lo, hi), finite with lo < hi: the range of a reward (default [0, 1]);
        rewards are normalised to [0, 1] and hi - lo is the sensitivity.
    bounds:
        ``"clip"`` (default) clips a reward outside ``reward_range`` to it;
        ``"error"`` refuses it with a ValueError.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise, without protection against
        low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs the lattice
        sampler); False (default) from the seeded generator.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.AdaCUCB(k=3, horizon=5000, rho=0.5, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'central')
    >>> learner.privacy.rho > 0
    True
    """

    _kl = False
    _name = "AdaC-UCB"


class AdaCKLUCB(_AdaC):
    """AdaC-KLUCB: :class:`AdaCUCB` with the KL-UCB bound.

    Azize & Basu 2024: the bound max{q : n kl(m, q) <= beta ln t} replaces
    the Hoeffding term of :class:`AdaCUCB`.

    Privacy: rho-zCDP of the rewards (central), with its (epsilon, delta)
    conversion.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    rho:
        Privacy parameter of zero-concentrated DP, finite and > 0: the learner
        is rho-zCDP in the rewards (rho = epsilon^2 / 2 is what epsilon-DP
        implies).
    beta:
        Exploration coefficient, finite and > 0 (default 3.1).
    alpha:
        Ratio of the phase grid, finite and > 1 (default 2).
    delta:
        The delta of the reported (epsilon, delta) conversion, in (0, 1);
        None (default) for 1 / T.
    reward_range:
        (lo, hi), finite with lo < hi: the range of a reward (default [0, 1]);
        rewards are normalised to [0, 1] and hi - lo is the sensitivity.
    bounds:
        ``"clip"`` (default) clips a reward outside ``reward_range`` to it;
        ``"error"`` refuses it with a ValueError.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise, without protection against
        low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs the lattice
        sampler); False (default) from the seeded generator.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.AdaCKLUCB(k=3, horizon=5000, rho=0.5, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'central')
    """

    _kl = True
    _name = "AdaC-KLUCB"


class DPSE(_LaplacePhased):
    """DP-SE: successive elimination in epochs with one Laplace release per arm and epoch.

    Sajed & Sheffet 2019, "An optimal private stochastic-MAB algorithm based
    on an optimal private stopping rule", Alg. 1. Epoch e pulls every active
    arm R_e times in a row (fresh rewards; earlier epochs forgotten), releases
    each arm's epoch sum + Lap(1/epsilon), and eliminates the arms whose
    released mean is below the best one minus Delta_e / 2
    (:func:`dpbandits.privacy.azize.dp_se_schedule`: R_e, Delta_e = 2^-e,
    confidence ``beta``, K in place of the active-arm count). When one arm is
    left it is played to the end.

    Privacy: epsilon-DP of the rewards (central): each reward is in one epoch
    sum.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    beta:
        Confidence of the elimination, in (0, 1); None (default) for 1 / T.
    reward_range:
        (lo, hi), finite with lo < hi: the range of a reward (default [0, 1]);
        rewards are normalised to [0, 1] and hi - lo is the sensitivity.
    bounds:
        ``"clip"`` (default) clips a reward outside ``reward_range`` to it;
        ``"error"`` refuses it with a ValueError.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise, without protection against
        low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs the lattice
        sampler); False (default) from the seeded generator.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.DPSE(k=3, horizon=5000, epsilon=1.0, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'central')
    >>> learner.active.tolist()
    [True, True, True]
    """

    @epsilon_range
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
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "k": k, "horizon": horizon, "epsilon": epsilon, "beta": beta, "reward_range": reward_range,
            "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
        })
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
    """A phased private Thompson sampling (after Hu & Hegde 2022).

    Hu & Hegde, UAI 2022, "Near-optimal Thompson sampling-based algorithms
    for differentially private stochastic bandits": Thompson sampling reaches
    the optimal private regret order when each arm's private mean is
    refreshed lazily, so that each reward is charged to a single Laplace
    release. Each arm's rewards accumulate into its open phase (the grid of
    :class:`DPKLUCB`, ratio ``alpha``); the phase sum is released with its own
    Laplace(1/epsilon) draw. Every round each arm is scored by one draw of
    N(m_a, reward_var / N_a + 2 L_a / (epsilon^2 N_a^2)) (m_a the clipped
    mean of the arm's released sums, N_a its released pulls, L_a its
    releases; :func:`dpbandits.privacy.azize.dp_ts_variances`) and the
    largest draw is played; arms without a release are played first. A draw
    every round, rather than at phase ends only, gives a buried best arm a
    chance to recover every round. Choices left open: Gaussian posteriors,
    cumulative released sums (no forgetting), ties (fewer pulls, then a
    seeded random order), clipping of the mean to [0, 1].

    Privacy: a reward enters exactly one release of sensitivity 1 with its own
    Laplace draw, and which arm is played depends only on earlier releases and
    the learner's own sampling randomness: epsilon-DP of the rewards
    (central) by parallel composition.

    Delayed feedback (the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner`, QPM-D): each reward enters
    exactly one phase sum, once, in its arm's arrival order; phases count the
    rewards fed; the order depends on the arms chosen and on arrival times,
    never on the reward values, so the guarantee is unchanged.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    alpha:
        Ratio of the phase grid, finite and > 1 (default 1.5).
    reward_var:
        Reward variance in the posterior, finite and > 0 (default 1/4, the
        largest for rewards in [0, 1]).
    reward_range:
        (lo, hi), finite with lo < hi: the range of a reward (default [0, 1]);
        rewards are normalised to [0, 1] and hi - lo is the sensitivity.
    bounds:
        ``"clip"`` (default) clips a reward outside ``reward_range`` to it;
        ``"error"`` refuses it with a ValueError.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise, without protection against
        low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs the lattice
        sampler); False (default) from the seeded generator.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    phase_floor:
        f > 0 for the adaptive grid of :class:`DPKLUCB`; None (default) for
        the paper's grid.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.DPTS(k=3, horizon=5000, epsilon=1.0, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'central')
    """

    @epsilon_range
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
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "k": k, "horizon": horizon, "epsilon": epsilon, "alpha": alpha, "reward_var": reward_var,
            "reward_range": reward_range, "bounds": bounds, "sampler": sampler, "secure": secure, "seed": seed,
            "phase_floor": phase_floor,
        })
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
    """Non-private KL-UCB (Garivier & Cappé 2011).

    Pull each arm once, then argmax max{q in [m_a, 1] : n_a kl(m_a, q) <=
    ln t} (no ln ln t term), on rewards normalised from ``reward_range`` to
    [0, 1] (the Bernoulli kl bounds the deviation of any [0, 1] reward).
    Ties: fewer pulls, then a seeded random order. Runs on the phased engine
    with phases of one round and no noise.

    Privacy: none.

    Delayed feedback: the protocol of
    :class:`~dpbandits.learners.mab.KArmedLearner` (QPM-D); each reward enters
    the statistics once, in its arm's arrival order.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 1.
    reward_range:
        (lo, hi), finite with lo < hi (default [0, 1]).
    bounds:
        ``"clip"`` (default) or ``"error"`` for a reward outside
        ``reward_range``.
    seed:
        None or an integer (ties).
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.KLUCB(k=3, horizon=5000, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))
    >>> learner.t, learner.privacy.model
    (200, 'none')
    """

    def __init__(
        self,
        k: int,
        horizon: int,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {"k": k, "horizon": horizon, "reward_range": reward_range, "bounds": bounds, "seed": seed}
        )
        self._build(k, horizon, reward_range, _bounds(bounds), seed, "float", False,
                    index="optimistic_kl", explore=1.0, alpha=0.0, forget=False)

    @property
    def privacy(self) -> Guarantee:
        """No privacy: exact sums."""
        return Guarantee.none("non-private KL-UCB")
