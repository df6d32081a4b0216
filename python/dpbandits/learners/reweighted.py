"""Batched information-weighted LinUCB and its jointly private version.

After Chen, Li, Rakhlin & Simchi-Levi, "Near-optimal private learning in
linear contextual bandits", arXiv 2502.13115 (2025): a re-weighted
regression released once per epoch, so that joint privacy costs an
additive term rather than a factor of the regret. The algorithm boxes of
the paper were not reachable; the construction, its privacy proof and what
is reconstructed are in :mod:`dpbandits.privacy.reweighted`. The Rust
engine is ``rust/src/policy/reweighted_linucb.rs``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._validation import epsilon_range, in_open_unit, integral_arguments, positive, positive_int, seed_or_none
from dpbandits.learners.online import OnlineLearner, engine_decision_set
from dpbandits.privacy import Guarantee
from dpbandits.privacy.reweighted import (
    ReweightedCalibration,
    non_private_constants,
    reweighted_calibration,
)
from dpbandits.privacy.secure import sampler_choice

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

__all__ = ["JointDPReweightedLinUCB", "ReweightedLinUCB"]

#: Largest dimension the engine accepts.
MAX_DIM = 1024


def _first_epoch(first_epoch: int | None, d: int, horizon: int) -> int:
    n0 = 64 * d if first_epoch is None else positive_int("first_epoch", first_epoch)
    return min(n0, horizon)


def _bounds(bounds: str) -> bool:
    if bounds not in ("clip", "error"):
        raise ValueError(f"invalid argument `bounds`: must be 'clip' or 'error', got {bounds!r}")
    return bounds == "clip"


class _ReweightedBase(OnlineLearner):
    _engine: _core.ReweightedLinUcbEngine
    horizon: int

    def ucb(self, decision_set: ArrayLike) -> NDArray[np.float64]:
        """<theta_k, x> + beta_k ||x||_{Lambda_k^-1} for every row (the epoch's UCB)."""
        actions = engine_decision_set(decision_set)
        with self.lock:
            return self._engine.ucb(actions)

    @property
    def theta(self) -> NDArray[np.float64]:
        """The current epoch's released estimate theta_k."""
        with self.lock:
            return self._engine.theta()

    @property
    def releases(self) -> int:
        """Epochs released so far."""
        return int(self._engine.releases)

    @property
    def psd_failures(self) -> int:
        """Releases whose V was not positive definite (the previous estimate kept)."""
        return int(self._engine.psd_failures)


class ReweightedLinUCB(_ReweightedBase):
    """Non-private batched information-weighted LinUCB: the learner of
    :class:`JointDPReweightedLinUCB` with no noise (its reference).

    Epochs of n_0, 2 n_0, ... recorded rewards; the UCB of epoch k comes from
    the weighted ridge regressions of epochs k - 1 and k - 2 (weights
    w = min(1, gamma_k / ||x||^2_{H_k^-1}), gamma_k = c d / n_k); see
    :mod:`dpbandits.privacy.reweighted`.

    Before the first release (the first epoch: no released statistic to
    read, so the prior's UCB, ||x||_{Lambda_0^-1} with Lambda_0 = I, ties
    across rows up to the rounding of ||x||) the learner plays a row
    uniformly at random, from a seeded stream of its own (not the noise
    generator); such a decision reads no data and costs no privacy. From
    the first release on it plays the first maximum of the UCB.
    ``learner.policy()`` before the first release holds that prior and
    plays its first maximum.

    Parameters
    ----------
    d:
        Dimension of the actions, an integer in [1, 1024].
    horizon:
        Number of rounds, an integer >= 1.
    first_epoch:
        n_0, an integer >= 1; None (default) for 64 d (capped at the horizon).
    leverage:
        c > 0 in gamma_k = c d / n_k (default 1.0).
    alpha:
        Failure probability of the confidence sets, in (0, 1); None
        (default) for 1 / horizon.
    sigma, S, L, B:
        Sub-Gaussian parameter of the reward noise, bounds on ||theta*||,
        ||x|| and |y| (finite and > 0; default 1).
    ridge:
        c_r > 0: lambda_0 = c_r L^2, the ridge (default 1.0).
    beta_scale:
        Factor > 0 on the confidence radius (default 1.0).
    bounds:
        ``"clip"`` (default: rows scaled to norm L, rewards clipped to
        [-B, B]) or ``"error"``.
    seed:
        None (default: operating-system entropy) or an integer: the seed of
        the uniform choice before the first release (this learner draws no
        noise).
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
        If an argument has the wrong type.

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.ReweightedLinUCB(d=5, horizon=1000, seed=0)
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=0)
    >>> for t in range(1, 401):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.releases  # epochs of 320, 640, ... rewards
    1
    >>> learner.privacy.model
    'none'
    """

    def __init__(
        self,
        d: int,
        horizon: int,
        first_epoch: int | None = None,
        leverage: float = 1.0,
        alpha: float | None = None,
        sigma: float = 1.0,
        S: float = 1.0,
        L: float = 1.0,
        B: float = 1.0,
        ridge: float = 1.0,
        beta_scale: float = 1.0,
        bounds: Literal["clip", "error"] = "clip",
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        self.d = positive_int("d", d)
        if self.d > MAX_DIM:
            raise ValueError(f"invalid argument `d`: must be <= {MAX_DIM}, got {d}")
        self.horizon = positive_int("horizon", horizon)
        self.first_epoch = _first_epoch(first_epoch, self.d, self.horizon)
        if alpha is not None:
            in_open_unit("alpha", alpha)
        reward_chi = non_private_constants(self.d, self.horizon, alpha=alpha, sigma_r=sigma,
                                           first_epoch=self.first_epoch)
        self._engine = _core.ReweightedLinUcbEngine(
            self.d, self.horizon, first_epoch=self.first_epoch, leverage=positive("leverage", leverage),
            noise=None, ridge=positive("ridge", ridge), reward_chi=reward_chi, s=positive("S", S),
            beta_scale=positive("beta_scale", beta_scale),
            l=positive("L", L), b=positive("B", B), clip=_bounds(bounds), seed=seed_or_none("seed", seed),
        )
        self._pending = None

    @property
    def privacy(self) -> Guarantee:
        """No privacy: the exact statistics are read."""
        return Guarantee.none("non-private batched information-weighted LinUCB")


class JointDPReweightedLinUCB(_ReweightedBase):
    """Jointly differentially private batched information-weighted LinUCB
    (after Chen, Li, Rakhlin & Simchi-Levi 2025, arXiv 2502.13115).

    Each epoch's weighted statistic (m = d (d + 1) / 2 + d entries, L2
    sensitivity Delta = 2.1213 at B = 1) is released once with i.i.d.
    Gaussian noise of sigma = Delta / mu, mu met on the exact (epsilon,
    delta) curve; every reward enters one epoch, so each user meets one
    Gaussian mechanism and the learner is (epsilon, delta)-jointly DP (the
    proof and what is reconstructed: :mod:`dpbandits.privacy.reweighted`).
    The noise is exact discrete Gaussian noise on a lattice by default
    (inputs rounded to the lattice first, the rounding accounted), for every
    delta in (0, 1). Decisions read only released values.

    Before the first release (the first epoch: no released statistic to
    read, so the prior's UCB, ||x||_{Lambda_0^-1} with Lambda_0 = I, ties
    across rows up to the rounding of ||x||) the learner plays a row
    uniformly at random, from a seeded stream of its own (not the noise
    generator); such a decision reads no data and costs no privacy. From
    the first release on it plays the first maximum of the UCB.
    ``learner.policy()`` before the first release holds that prior and
    plays its first maximum.

    ``seed``: None (default) keys the noise from the operating system; an
    integer makes it reproducible (research only). Restores and copies
    re-key the noise unless replayed (:func:`dpbandits.research_replay`).

    Parameters
    ----------
    d:
        Dimension of the actions, an integer in [1, 1024].
    horizon:
        Number of rounds, an integer >= 1.
    epsilon, delta:
        The (epsilon, delta)-joint DP to meet: epsilon finite and > 0, delta
        in (0, 1).
    first_epoch:
        n_0, an integer >= 1; None (default) for 64 d (capped at the horizon).
    leverage:
        c > 0 in gamma_k = c d / n_k (default 1.0).
    alpha:
        Failure probability of the confidence sets, in (0, 1); None
        (default) for 1 / horizon.
    sigma, S, L, B:
        Sub-Gaussian parameter of the reward noise and bounds on ||theta*||,
        ||x|| and |y| (finite and > 0; default 1). The privacy proof needs
        ||x|| <= L and |y| <= B: inputs outside are clipped or refused.
    ridge:
        c_r > 0: lambda_0 = c_r L^2, the ridge beyond twice the bound on the
        noise's operator norm (default 1.0).
    beta_scale:
        Factor > 0 on the confidence radius (default 1.0: the radius of the
        analysis, valid but wide, see :mod:`dpbandits.privacy.reweighted`).
        Smaller values explore less; they void the regret bound, never the
        privacy guarantee.
    bounds:
        ``"clip"`` (default) or ``"error"``.
    seed:
        None (default) or an integer, see above.
    sampler:
        ``"lattice"`` (default: exact discrete Gaussian) or ``"float"``.
    secure:
        True draws the noise from operating-system entropy (lattice only).
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
    >>> learner = dp.JointDPReweightedLinUCB(d=5, horizon=1000, epsilon=1.0, delta=1e-6, seed=0)
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=0)
    >>> for t in range(1, 401):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.releases  # one epoch of 64 d = 320 rewards
    1
    >>> print(learner.privacy)  # doctest: +ELLIPSIS
    (1, 1e-06)-joint DP of contexts and rewards [Chen, Li, Rakhlin & Simchi-Levi 2025 ...; exact lattice noise]
    """

    @epsilon_range
    def __init__(
        self,
        d: int,
        horizon: int,
        epsilon: float,
        delta: float,
        first_epoch: int | None = None,
        leverage: float = 1.0,
        alpha: float | None = None,
        sigma: float = 1.0,
        S: float = 1.0,
        L: float = 1.0,
        B: float = 1.0,
        ridge: float = 1.0,
        beta_scale: float = 1.0,
        bounds: Literal["clip", "error"] = "clip",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        self.d = positive_int("d", d)
        if self.d > MAX_DIM:
            raise ValueError(f"invalid argument `d`: must be <= {MAX_DIM}, got {d}")
        self.horizon = positive_int("horizon", horizon)
        self.epsilon = positive("epsilon", epsilon)
        self.delta = in_open_unit("delta", delta)
        self.sampler = sampler_choice(sampler)
        self.first_epoch = _first_epoch(first_epoch, self.d, self.horizon)
        try:
            self.calibration: ReweightedCalibration = reweighted_calibration(
                self.d, self.horizon, self.epsilon, self.delta, alpha=alpha, B=B, sigma_r=sigma,
                first_epoch=self.first_epoch, sampler=self.sampler,
            )
        except (OverflowError, ZeroDivisionError):
            raise ValueError(
                f"invalid arguments: the calibration overflows for epsilon={epsilon!r}, delta={delta!r}, B={B!r}"
            ) from None
        c = self.calibration
        if not (math.isfinite(c.op_bound) and math.isfinite(c.chi_bound)):
            raise ValueError(f"invalid argument `epsilon`: {epsilon!r} gives a noise too large to use")
        self._engine = _core.ReweightedLinUcbEngine(
            self.d, self.horizon, first_epoch=self.first_epoch, leverage=positive("leverage", leverage),
            noise=c.wire(), op_bound=c.op_bound, chi_bound=c.chi_bound, ridge=positive("ridge", ridge),
            reward_chi=c.reward_chi, s=positive("S", S), beta_scale=positive("beta_scale", beta_scale),
            l=positive("L", L), b=c.B, clip=_bounds(bounds),
            seed=seed_or_none("seed", seed),
        )
        self._use_secure(secure, self.sampler)
        self._pending = None

    @property
    def privacy(self) -> Guarantee:
        """(epsilon, delta)-joint DP of every user's (context, reward)."""
        return self._secure_guarantee(self.calibration.guarantee)

    @property
    def last_release(self) -> NDArray[np.float64]:
        """The last epoch's released statistic (exact lattice values; empty before the first)."""
        with self.lock:
            return self._engine.last_release()
