"""Private online learning of Agarwal & Singh, "The Price of Differential
Privacy for Online Learning", ICML 2017.

- :class:`PrivateFTRL` (Alg. 1 with TreeBasedAgg, Alg. 2): prediction with
  expert advice (entropic regularizer: exponential weights over the noisy
  cumulative loss), OLO over the Euclidean ball and over the cube (L2
  regularizer), Cor. 3.2.
- :class:`PrivateFTPL` (Alg. 3, Gaussian noise, Thm 3.5).
- :class:`EXP2`: EXP2 with exploration (Alg. 5) behind the private bandit
  reduction (Alg. 4), adversarial multi-armed bandits (Thm 4.1).
- :class:`SCRiBLe`: SCRiBLe over the unit ball (barrier -log(1 - ||x||^2),
  nu = 1) behind the same reduction (Thm 4.5).

Every scale and step size comes from :mod:`dpbandits.privacy.agarwal_singh`;
the Rust engines (``rust/src/policy/{follow_the_leader,exp2,scrible}.rs``)
read only released (noisy) statistics. ``epsilon=None`` gives the
non-private algorithm with the same tuning. Guarantees are pure
epsilon-DP (FTPL: (epsilon, delta)-DP), central model, of the loss sequence
(neighbouring sequences differ in one round's loss vector, Def. 2.1).

Decisions: simplex learners and EXP2 play indices (an index drawn from
x_t, an arm drawn from p_t); ball and cube learners play the point x_t and
SCRiBLe the point y_t. All run in :func:`dpbandits.simulate` on the loss
environments of :mod:`dpbandits.envs.losses` of the same ``geometry`` and
dimension (``SCRiBLe``: ``geometry="ball"``), which report the regret
against the best fixed decision of X in hindsight (a vertex of the simplex,
-L_T / ||L_T||_2 on the ball, -sign(L_T) on the cube). A learner and an
environment whose geometries or dimensions differ are refused with a
ValueError.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._sizes import MAX_TREE_ENTRIES, check_bytes, check_tree_entries, tree_bytes
from dpbandits._validation import (
    epsilon_range,
    float_array,
    integral_arguments,
    positive,
    positive_int,
    real,
    seed_or_none,
)
from dpbandits.errors import StateError
from dpbandits.learners.online import LOSS_SETS, LearnerBase, clipped_losses
from dpbandits.learners.online_call import BoundOnlineCall
from dpbandits.learners.served import ServedVersions
from dpbandits.noise import NoiseWire
from dpbandits.privacy import Guarantee
from dpbandits.privacy.agarwal_singh import (
    Calibration,
    Geometry,
    exp2_parameters,
    ftpl_sigma,
    ftrl_eta,
    ftrl_laplace_scale,
    loss_sensitivity_l1,
    scrible_parameters,
)
from dpbandits.privacy.factorization import counter_choice, counter_parameters, default_counter
from dpbandits.privacy.secure import LatticeNoise, lattice_laplace, sampler_choice
from dpbandits.serving_sampled import DikinPolicy, DistributionPolicy, LeaderPolicy

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

__all__ = ["EXP2", "PrivateFTPL", "PrivateFTRL", "SCRiBLe"]

Bounds = Literal["clip", "error"]


def _clip(bounds: str) -> bool:
    if bounds not in ("clip", "error"):
        raise ValueError(f"invalid argument `bounds`: must be 'clip' or 'error', got {bounds!r}")
    return bounds == "clip"


def _check_n(n: int, horizon: int | None, vectors: int) -> None:
    """AllocationError naming ``n`` unless ``vectors`` length-n float
    vectors (and, with ``horizon``, a tree counter over R^n) fit in memory."""
    nbytes = 8 * vectors * n + (tree_bytes(n, horizon) if horizon is not None else 0)
    check_bytes("n", n, nbytes, f"the state over {n} coordinates")
    if horizon is not None:
        check_tree_entries("n", n, n, horizon, MAX_TREE_ENTRIES // max(1, horizon.bit_length()))


def _geometry(geometry: str) -> str:
    if geometry not in ("simplex", "ball", "cube"):
        raise ValueError(f"invalid argument `geometry`: must be 'simplex', 'ball' or 'cube', got {geometry!r}")
    return geometry


class _FollowTheLeaderBase(BoundOnlineCall, LearnerBase):
    """Shared online API of FTRL and FTPL (full information).

    ``select`` and ``update`` are bound to the engine (see
    :mod:`dpbandits.learners.online_call`): a float64 loss vector costs one
    Rust call, under the learner's lock."""

    _engine: _core.FollowTheLeaderEngine
    n: int
    horizon: int
    geometry: str

    def _samples_indices(self) -> bool:
        return self.__dict__.get("geometry", "simplex") == "simplex"

    def select(self) -> int:
        """An index drawn from the decision x_t (simplex only; its expected
        loss is <l_t, x_t>)."""
        return int(self._online().select())

    def _checked_select(self) -> int:
        if self.geometry != "simplex":
            raise StateError(f"a {self.geometry} learner plays points: use decision()")
        with self.lock:
            return int(self._engine.select())

    def decision(self) -> NDArray[np.float64]:
        """x_t = argmin_x eta <x, L~_{t-1}> + R(x) (Alg. 1/3 line 5)."""
        with self.lock:
            return self._engine.decision()

    def update(self, losses: ArrayLike) -> None:
        """Records the round's loss vector l_t (shape (n,)); out-of-set
        losses are clipped or refused as ``bounds`` says."""
        self._online().update(losses)

    def _checked_update(self, losses: ArrayLike) -> None:
        # The engine checks the length and finiteness (naming `losses`).
        if not (type(losses) is np.ndarray and losses.dtype == np.float64):
            losses = float_array("losses", losses, ndim=1, finite=False)
        with self.lock:
            if self._engine.observe(losses):
                self._warn_first_clip(losses)

    def _warn_first_clip(self, losses: ArrayLike, detail: object = None, stacklevel: int = 2) -> None:
        """The warning of the first clipped loss vector (``stacklevel`` 1:
        the caller; the online call in Rust calls this too)."""
        self._warn_clipped(clipped_losses(losses, self.geometry), LOSS_SETS[self.geometry], stacklevel + 1)

    def update_many(self, losses: ArrayLike) -> None:
        """Records the loss vectors of several rounds (shape (rounds, n)), in
        order: equal bit for bit to ``update(losses[i])`` for each i, in one
        call to the engine with the GIL released. On a refused row the rows
        before it are recorded, as the loop would."""
        rows = float_array("losses", losses, ndim=2, finite=False)
        with self.lock:
            fresh = self._engine.clipped_rewards == 0
            done, error = self._engine.observe_many(rows)
            if fresh and self._engine.clipped_rewards > 0:
                self._warn_clipped(clipped_losses(rows[:done], self.geometry), LOSS_SETS[self.geometry])
        if error is not None:
            raise error

    @property
    def t(self) -> int:
        """Rounds observed."""
        return int(self._engine.t)

    @property
    def noise_terms(self) -> int:
        """Noise draws in the current release: exactly max(1, ceil(log2 T))
        (Alg. 2); exactly w with ``counter="smooth-binary"``; t with a
        Toeplitz factorization (every draw enters every later release)."""
        return int(self._engine.noise_terms)

    def reseed(self, seed: int | None = None) -> None:
        """Draws future noise and samples from a new seed (past releases kept)."""
        self._engine.reseed(seed_or_none("seed", seed))

    @property
    def policy_version(self) -> int:
        """Moves with every recorded loss vector: each one makes a new
        release of the tree's prefix sum L~_t, hence a new decision."""
        return int(self._engine.t)

    def policy(self, seed: int | None = None) -> LeaderPolicy:
        """A read-only, picklable policy holding the decision x_t
        (:class:`dpbandits.serving_sampled.LeaderPolicy`; its ``version`` is
        :attr:`policy_version`). On the simplex it draws indices from x_t
        with its own generator (``seed``; None: operating-system entropy),
        samples of the law of the learner's ``select``, not the learner's
        own draws.

        Privacy: x_t is computed from the released noisy prefix sum L~_{t-1}
        only (Agarwal & Singh Alg. 1/3 line 5: the tree's release, plus the
        regularizer or the perturbation it already contains), so serving
        the policy, in any thread, process or machine, is post-processing:
        it costs no privacy. The policy's generator is not privacy noise."""
        with self.lock:
            return LeaderPolicy(self._engine.decision(), self.geometry, self.policy_version, seed=seed)

    # Pickling needs nothing here: the engine pickles itself (tree noise,
    # L~_0 and generators included; see rust/src/py/online_learning.rs).


class PrivateFTRL(_FollowTheLeaderBase):
    """Private Follow-the-Regularized-Leader (Agarwal & Singh Alg. 1).

    Parameters
    ----------
    n, horizon:
        Dimension N (experts: N >= 2) and horizon T >= 2.
    epsilon:
        > 0 for epsilon-DP of the loss sequence; None for the non-private
        FTRL (no noise, same eta).
    geometry:
        ``"simplex"`` (experts, losses in [0, 1]^N, R = sum x log x),
        ``"ball"`` (||l||_2 <= 1, R = ||x||^2) or ``"cube"`` ([-1, 1]^N,
        ||l||_1 <= 1, R = ||x||^2) (Cor. 3.2).
    calibration:
        ``"tight"`` (default) or ``"paper"`` Laplace scale
        (:func:`dpbandits.privacy.agarwal_singh.ftrl_laplace_scale`).
    eta:
        Step size; default the minimizer of the Thm 3.1 bound
        (:func:`dpbandits.privacy.agarwal_singh.ftrl_eta`).
    bounds:
        ``"clip"`` losses into the loss set, or ``"error"``.
    counter:
        ``"smooth-binary"`` (the default with ``calibration="tight"``; not
        in the paper; Andersson & Pagh 2023,
        :mod:`dpbandits.privacy.smooth_binary`): every release sums the same
        number w of draws without padding, one loss vector reaches H - w
        nodes; at T = 2^20 the release variance at the same epsilon is 0.11x
        the padded tree's. ``"binary"`` (the default with
        ``calibration="paper"``; select it to reproduce the paper):
        TreeBasedAgg, Alg. 2, the padded tree. ``privacy`` names it.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise (not protected against
        low-bit attacks; the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (lattice sampler
        only); False (default) from the seeded generator.

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
    >>> learner = dp.PrivateFTRL(n=4, horizon=1000, epsilon=1.0, seed=0)
    >>> expert = learner.select()
    >>> learner.update([0.2, 0.9, 0.5, 0.5])  # every expert's loss this round
    >>> learner.t, learner.privacy.epsilon
    (1, 1.0)
    >>> res = dp.simulate(learner, dp.StochasticLosses([0.4, 0.5, 0.5, 0.5]), seeds=2)
    >>> res.final_regret.shape
    (2,)
    """

    @epsilon_range
    def __init__(
        self,
        n: int,
        horizon: int,
        epsilon: float | None,
        geometry: Geometry = "simplex",
        calibration: Calibration = "tight",
        eta: float | None = None,
        bounds: Bounds = "clip",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        counter: Literal["binary", "smooth-binary"] | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        self.sampler = sampler_choice(sampler)
        self.geometry = _geometry(geometry)
        self.n = positive_int("n", n)
        self.horizon = positive_int("horizon", horizon, minimum=2)
        _check_n(self.n, self.horizon, vectors=3)
        self.counter = counter_choice(default_counter(counter, calibration), "laplace")
        self.eta = ftrl_eta(self.geometry, self.n, self.horizon) if eta is None else positive("eta", eta)  # type: ignore[arg-type]
        if epsilon is None:
            self._privacy = Guarantee.none("non-private FTRL (Agarwal & Singh 2017, Alg. 1 without noise)")
            wire: NoiseWire = ("zero",)
            self.noise_scale = 0.0
        else:
            cal = ftrl_laplace_scale(
                self.geometry, self.n, self.horizon, epsilon, calibration, counter=self.counter,  # type: ignore[arg-type]
            )
            self._privacy = replace(cal.guarantee, sampler=self.sampler)
            wire, self.noise_scale = ("laplace", cal.scale), cal.scale
            if self.sampler == "lattice":
                # Experts' losses lie in [0, 1] per coordinate (monotone
                # rounding, no allowance); ball and cube losses are norm
                # bounded (one step per coordinate allowed).
                value_range = (0.0, 1.0) if self.geometry == "simplex" else None
                lattice = lattice_laplace(
                    cal.scale, loss_sensitivity_l1(self.geometry, self.n), dim=self.n,  # type: ignore[arg-type]
                    value_range=value_range, sum_bound=float(self.horizon),
                )
                wire, self.noise_scale = lattice.wire(), lattice.scale
        #: The tree's node noise, as the engine gets it (rust/src/py/noise.rs).
        self.noise_wire = wire
        theta, omega = counter_parameters(self.counter, self.horizon, "laplace")
        self._engine = _core.FollowTheLeaderEngine(
            self.n, self.horizon, self.geometry, wire, eta=self.eta, clip=_clip(bounds),
            seed=seed_or_none("seed", seed), counter=self.counter, theta=theta, omega=omega,
        )
        self._secure_if_private(secure, epsilon)

    @property
    def privacy(self) -> Guarantee:
        """Pure epsilon-DP of the loss sequence (Thm 3.1), or none."""
        return self._secure_guarantee(self._privacy)


class PrivateFTPL(_FollowTheLeaderBase):
    """Private Follow-the-Perturbed-Leader (Agarwal & Singh Alg. 3, Thm 3.5).

    The tree's Gaussian noise is both the privacy noise and the FTPL
    perturbation: x_t = argmin_{x in X} <x, L~_{t-1}> (a linear optimization
    oracle: the best vertex of the simplex, -L~/||L~|| on the ball,
    -sign(L~) on the cube), sigma of
    :func:`dpbandits.privacy.agarwal_singh.ftpl_sigma`.

    ``epsilon``/``delta``: (epsilon, delta)-DP of the loss sequence
    (delta in (0, 1)); ``epsilon=None``: non-private FTPL (sigma = the
    regret term). ``counter``: ``"smooth-binary"`` (the default with
    ``calibration="tight"``: O(log T) memory, every release w draws),
    ``"sqrt"`` or ``"blt"`` (less noise still, but their lattice accounting
    covers all T N encoded coordinates and fails for large epsilon), or
    ``"binary"`` (the padded tree; the default with ``calibration="paper"``)
    (not in the paper; see :func:`dpbandits.privacy.agarwal_singh.ftpl_sigma`).
    Other parameters as :class:`PrivateFTRL`.

    Parameters
    ----------
    n:
        Dimension N, an integer >= 2 for experts.
    horizon:
        Number of rounds T, an integer >= 2.
    epsilon:
        Privacy parameter, finite and > 0; None for the non-private FTPL
        (spelled out: there is no default).
    delta:
        In (0, 1), required with a finite epsilon; None without privacy.
    geometry:
        ``"simplex"`` (default, experts), ``"ball"`` or ``"cube"``.
    calibration:
        ``"tight"`` (default) or ``"paper"``.
    bounds:
        ``"clip"`` (default) losses into the loss set, or ``"error"``.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise (not protected against
        low-bit attacks; the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (lattice sampler
        only); False (default) from the seeded generator.
    counter:
        ``"smooth-binary"``, ``"sqrt"``, ``"blt"`` or ``"binary"``; None
        (default) for the calibration's default named above.
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
    >>> learner = dp.PrivateFTPL(n=4, horizon=1000, epsilon=1.0, delta=1e-6, seed=0)
    >>> expert = learner.select()
    >>> learner.update([0.2, 0.9, 0.5, 0.5])
    >>> learner.t, learner.privacy.model, learner.privacy.delta
    (1, 'central', 1e-06)
    """

    @epsilon_range
    def __init__(
        self,
        n: int,
        horizon: int,
        epsilon: float | None,
        delta: float | None = None,
        geometry: Geometry = "simplex",
        calibration: Calibration = "tight",
        bounds: Bounds = "clip",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        counter: Literal["binary", "smooth-binary", "sqrt", "blt"] | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        self.sampler = sampler_choice(sampler)
        self.geometry = _geometry(geometry)
        self.n = positive_int("n", n)
        self.horizon = positive_int("horizon", horizon, minimum=2)
        _check_n(self.n, self.horizon, vectors=3)
        self.counter = counter_choice(default_counter(counter, calibration), "gaussian")
        if epsilon is not None and delta is None:
            raise ValueError("invalid argument `delta`: private FTPL (Gaussian noise) needs delta in (0, 1)")
        lattice = epsilon is not None and self.sampler == "lattice"
        noise, self._privacy = ftpl_sigma(
            self.geometry, self.n, self.horizon, epsilon, delta, calibration,  # type: ignore[arg-type]
            sampler="lattice" if lattice else "float", counter=self.counter,
        )
        wire: NoiseWire
        if isinstance(noise, LatticeNoise):
            self.sigma, wire = noise.scale, noise.wire()
        else:
            self.sigma, wire = noise, ("gaussian", noise)
        #: The tree's node noise, as the engine gets it (rust/src/py/noise.rs).
        self.noise_wire = wire
        theta, omega = counter_parameters(self.counter, self.horizon, "gaussian")
        self._engine = _core.FollowTheLeaderEngine(
            self.n, self.horizon, self.geometry, wire, eta=None, clip=_clip(bounds),
            seed=seed_or_none("seed", seed), counter=self.counter, theta=theta, omega=omega,
        )
        self._secure_if_private(secure, epsilon)

    @property
    def privacy(self) -> Guarantee:
        """(epsilon, delta)-DP of the loss sequence (Thm 3.5 / A.1), or none."""
        return self._secure_guarantee(self._privacy)


class EXP2(BoundOnlineCall, LearnerBase):
    """EXP2 with exploration (Alg. 5) behind the private reduction (Alg. 4)
    for adversarial multi-armed bandits with losses in [0, 1] (Thm 4.1).

    Each round: ``i = learner.select()`` (i ~ p_t, p_t(i) >= gamma / N),
    then ``learner.update(loss)`` with the loss of arm i only. The engine
    adds Lap(1/epsilon) to it before the importance-weighted update.
    ``epsilon=None``: the non-private EXP2 with Thm 4.1's eta and gamma at
    lambda = 0.

    Privacy: epsilon-DP of the loss sequence (central), or none with
    ``epsilon=None``.

    Parameters
    ----------
    n:
        Number of arms N, an integer >= 2.
    horizon:
        Number of rounds T, an integer with T >= N log N / 2.
    epsilon:
        Privacy parameter, finite and > 0; None for the non-private EXP2
        (spelled out: there is no default).
    bounds:
        ``"clip"`` (default) losses into [0, 1], or ``"error"``.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise (not protected against
        low-bit attacks; the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (lattice sampler
        only); False (default) from the seeded generator.
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
    >>> learner = dp.EXP2(n=4, horizon=1000, epsilon=1.0, seed=0)
    >>> arm = learner.select()
    >>> learner.update(0.3)          # the loss of the played arm only
    >>> learner.t, learner.privacy.model
    (1, 'central')
    """

    _engine: _core.Exp2Engine

    @epsilon_range
    def __init__(
        self,
        n: int,
        horizon: int,
        epsilon: float | None,
        bounds: Bounds = "clip",
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
        self.sampler = sampler_choice(sampler)
        self.n = positive_int("n", n, minimum=2)
        self.horizon = positive_int("horizon", horizon)
        _check_n(self.n, None, vectors=2)
        p = exp2_parameters(self.n, self.horizon, epsilon)
        self.eta, self.gamma, self.noise_scale, self._privacy = p.eta, p.gamma, p.scale, p.guarantee
        wire: NoiseWire = ("zero",)
        if epsilon is not None:
            self._privacy = replace(p.guarantee, sampler=self.sampler)
            wire = ("laplace", p.scale)
            if self.sampler == "lattice":
                # The played arm's loss in [0, 1], rounded (monotone), plus
                # exact discrete Laplace: as private as Lap(lambda) on it.
                noise = lattice_laplace(p.scale, 1.0, value_range=(0.0, 1.0), sum_bound=float(self.horizon))
                self.noise_scale, wire = noise.scale, noise.wire()
        #: The forwarded loss's noise, as the engine gets it (rust/src/py/noise.rs).
        self.noise_wire = wire
        self._engine = _core.Exp2Engine(
            self.n, self.horizon, p.eta, p.gamma, noise=wire, clip=_clip(bounds), seed=seed_or_none("seed", seed),
        )
        self._secure_if_private(secure, epsilon)

    @property  # type: ignore[override]
    def _pending(self) -> int | None:
        """The outstanding selection (None: none), held by the bound call."""
        pending: int | None = self._online_pending
        return pending

    @_pending.setter
    def _pending(self, index: int | None) -> None:
        self._online_pending = index

    @property
    def outstanding(self) -> list[int]:
        """The arm selected and not yet updated (at most one: see :meth:`select`)."""
        pending = self._pending
        return [] if pending is None else [pending]

    def select(self) -> int:
        """Arm i_t ~ p_t.

        Delayed feedback: refused (StateError) while a selection awaits its
        loss. Alg. 5 samples i_t from p_t, and the importance weight of the
        loss (line 4) is 1 / p_t(i_t) for that same p_t; with a second
        selection outstanding the weights would move in between and the
        estimate would divide by the wrong probability."""
        return int(self._online().select())

    def _checked_select(self) -> int:
        with self.lock:
            if self._pending is not None:
                raise StateError(
                    f"select() while arm {self._pending} awaits its loss: EXP2 updates p_t every round "
                    "(Alg. 5) and takes one selection at a time; call update first"
                )
            index = int(self._engine.select())
            self._pending = index
            return index

    def probabilities(self) -> NDArray[np.float64]:
        """p_t = (1 - gamma) q_t + gamma / N (Alg. 5 line 3)."""
        return self._engine.probabilities()

    @property
    def policy_version(self) -> int:
        """Moves with every recorded loss: p_t changes each round (Alg. 5)."""
        return int(self._engine.t)

    def policy(self, seed: int | None = None) -> DistributionPolicy:
        """A read-only, picklable policy that draws arms from p_t
        (:class:`dpbandits.serving_sampled.DistributionPolicy`, its
        ``probabilities`` equal to :meth:`probabilities`; its ``version`` is
        :attr:`policy_version`). The arm is randomised from released state:
        the policy draws it with its own generator (``seed``; None:
        operating-system entropy), a sample of the law of the learner's next
        arm, not the learner's own draw.

        Privacy: p_t is a function of the privatized losses only (the
        reduction, Agarwal & Singh Alg. 4, adds Laplace noise to each loss
        before EXP2 sees it; Alg. 5 lines 3-5 then use nothing else besides
        the arms drawn), so serving the policy, in any thread, process or
        machine, is post-processing: it costs no privacy. The policy's
        generator is not privacy noise. The learner keeps the p_t it
        served (the :data:`~dpbandits.learners.served.KEPT` most recent
        versions) so that the losses of the arms drawn from it are fed back
        with ``update(arm, loss, policy_version=policy.version)``."""
        with self.lock:
            p = self._engine.probabilities()
            self._served_versions().record(self.policy_version, p)
            return DistributionPolicy(p, self.policy_version, seed=seed)

    def _served_versions(self) -> ServedVersions:
        served = self.__dict__.get("_served")
        if served is None:
            served = self.__dict__["_served"] = ServedVersions(self.n)
        return served  # type: ignore[no-any-return]

    def update(self, *args: float, policy_version: int | None = None) -> None:
        """``update(loss)``: the loss in [0, 1] of the arm just selected;
        ``update(arm, loss)``: the same, naming the arm (it must be the
        outstanding one). The protected unit is one loss.

        ``update(arm, loss, policy_version=v)``: the loss of an arm drawn by
        a served policy of version v (:meth:`policy`), at any time and in
        any order; the learner's own outstanding selection, if any, stays
        outstanding. The importance-weighted estimate loss~ / p_v(arm)
        (Alg. 5 line 4) uses the probability p_v(arm) of the distribution
        the policy drew from, which the learner released and keeps, so the
        estimate is exactly unbiased for that round's loss vector given
        p_v, as the proof of Thm 4.1 needs; the loss enters the reduction
        (Alg. 4: Laplace noise added before EXP2 sees it) once, like every
        other, so the guarantee is unchanged. What changes is the
        round's delay: the update of p_t uses estimates of rounds played
        with earlier distributions, and the regret bound is that of
        EXP3 with delayed feedback (an extra term growing with the total
        delay; Joulani, Gyorgy & Szepesvari, ICML 2013), not Thm 4.1's."""
        self._online().update(*args, policy_version=policy_version)

    def _checked_update(self, *args: float, policy_version: int | None = None) -> None:
        if policy_version is not None:
            self._served_update(args, policy_version)
            return
        if len(args) == 2:
            arm, loss = args
            if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)):
                raise TypeError(f"invalid argument `arm`: expected an int, got {type(arm).__name__}")
        elif len(args) == 1:
            arm, loss = None, args[0]
        else:
            raise TypeError("update takes (loss) or (arm, loss)")
        value = loss if type(loss) is float else real("loss", loss)
        with self.lock:
            pending = self._pending
            if pending is None:
                raise StateError("update(loss) needs a preceding select()")
            if arm is not None and int(arm) != pending:
                raise ValueError(f"invalid argument `arm`: the outstanding selection is arm {pending}, "
                                 f"got {int(arm)}")
            if self._engine.observe(pending, value):
                self._warn_first_clip(value)
            self._pending = None

    def _served_update(self, args: tuple[float, ...], version: int) -> None:
        """``update(arm, loss, policy_version=version)`` (see :meth:`update`)."""
        if len(args) != 2:
            raise TypeError("update(arm, loss, policy_version=v) takes the served arm and its loss")
        arm, loss = args
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)):
            raise TypeError(f"invalid argument `arm`: expected an int, got {type(arm).__name__}")
        if not 0 <= int(arm) < self.n:
            raise ValueError(f"invalid argument `arm`: must lie in [0, {self.n}), got {int(arm)}")
        value = loss if type(loss) is float else real("loss", loss)
        with self.lock:
            p = self._served_versions().get(version)
            if self._engine.observe_served(int(arm), value, float(p[int(arm)])):
                self._warn_first_clip(value)

    def _checkpoint_extra(self) -> dict[str, Any]:
        extra = super()._checkpoint_extra()
        extra["served"] = self._served_versions().to_extra()
        return extra

    def _restore_extra(self, extra: Mapping[str, Any]) -> None:
        super()._restore_extra(extra)
        floor = self.gamma / self.n * (1.0 - 1e-9)
        self.__dict__["_served"] = ServedVersions.from_extra(
            self.n, extra.get("served"),
            lambda p: bool(np.all(p >= floor) and np.all(p <= 1.0) and abs(float(p.sum()) - 1.0) < 1e-6))

    def _warn_first_clip(self, loss: float, detail: object = None, stacklevel: int = 2) -> None:
        """The warning of the first clipped loss (``stacklevel`` 1: the caller)."""
        self._warn_clipped(f"loss {loss}", "loss range [0, 1]", stacklevel + 1)

    @property
    def t(self) -> int:
        """Rounds observed."""
        return int(self._engine.t)

    @property
    def privacy(self) -> Guarantee:
        """Pure epsilon-DP of the loss sequence (Thm 4.1 / Lemma 4.2), or none."""
        return self._secure_guarantee(self._privacy)

    def reseed(self, seed: int | None = None) -> None:
        """Draws future noise and arms from a new seed."""
        self._engine.reseed(seed_or_none("seed", seed))


class SCRiBLe(BoundOnlineCall, LearnerBase):
    """SCRiBLe (Abernethy, Hazan & Rakhlin 2012) over the unit ball behind
    the private bandit reduction (Agarwal & Singh Alg. 4, Thm 4.5).

    Each round: ``y = learner.select()`` (a point of the Dikin ellipsoid
    around the iterate x_t, inside the ball), then ``learner.update(loss)``
    with loss = <l_t, y>, ||l_t||_2 <= 1 (so |loss| <= ||y||_2: enforced as
    ``bounds`` says). Laplace(lambda)^N noise Z_t enters as <Z_t, y>.
    ``epsilon=None``: non-private SCRiBLe with Thm 4.5's eta at lambda = 0.
    In :func:`dpbandits.simulate` it runs on loss environments with
    ``geometry="ball"`` (e.g. :class:`dpbandits.UniformLosses`); its regret
    there is sum_t <l_t, y_t> + ||L_T||_2 for the sampled points y_t.

    Privacy: epsilon-DP of the loss sequence (central), with
    floating-point Laplace noise (the guarantee says so); none with
    ``epsilon=None``.

    Parameters
    ----------
    n:
        Dimension N of the ball, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 2.
    epsilon:
        Privacy parameter, finite and > 0; None for the non-private SCRiBLe
        (spelled out: there is no default).
    calibration:
        ``"tight"`` (default) or ``"paper"``.
    bounds:
        ``"clip"`` (default) or ``"error"`` for a loss with |loss| > ||y||.
    seed:
        None (default: operating-system entropy) or an integer.
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
    >>> learner = dp.SCRiBLe(n=3, horizon=1000, epsilon=1.0, seed=0)
    >>> y = learner.select()          # a point of the unit ball
    >>> learner.update(0.1)           # the loss <l_t, y>
    >>> y.shape, learner.t
    ((3,), 1)
    """

    _engine: _core.ScribleEngine

    @epsilon_range
    def __init__(
        self,
        n: int,
        horizon: int,
        epsilon: float | None,
        calibration: Calibration = "tight",
        bounds: Bounds = "clip",
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        self.n = positive_int("n", n)
        self.horizon = positive_int("horizon", horizon, minimum=2)
        _check_n(self.n, None, vectors=7)  # 4 kept, 3 more while select() builds the Dikin direction
        p = scrible_parameters(self.n, self.horizon, epsilon, calibration)
        self.eta, self.noise_scale, self._privacy = p.eta, p.scale, p.guarantee
        #: The forwarded loss's noise, as the engine gets it: floating point
        #: (SCRiBLe's reduction has no lattice law; its guarantee says so).
        self.noise_wire: NoiseWire = ("laplace", p.scale) if epsilon is not None else ("zero",)
        self._engine = _core.ScribleEngine(
            self.n, self.horizon, p.eta, noise=self.noise_wire, clip=_clip(bounds), seed=seed_or_none("seed", seed),
        )

    @property
    def _point(self) -> NDArray[np.float64] | None:
        """The outstanding point (None: none), held by the bound call (a copy)."""
        point: NDArray[np.float64] | None = self._online_pending
        return point

    @_point.setter
    def _point(self, point: NDArray[np.float64] | None) -> None:
        self._online_pending = point

    @property
    def outstanding(self) -> list[NDArray[np.float64]]:
        """The point selected and not yet updated (at most one: see :meth:`select`)."""
        point = self._point
        return [] if point is None else [point]

    def select(self) -> NDArray[np.float64]:
        """The point y_t to play.

        Delayed feedback: refused (StateError) while a point awaits its
        loss. The loss estimate (Abernethy, Hazan & Rakhlin Alg. 1 line 9)
        is built along the eigen-direction of the Dikin ellipsoid drawn for
        that point at the current iterate, which the next update moves."""
        point: NDArray[np.float64] = self._online().select()
        return point

    def _checked_select(self) -> NDArray[np.float64]:
        with self.lock:
            if self._point is not None:
                raise StateError(
                    "select() while a point awaits its loss: SCRiBLe moves its iterate every round "
                    "and takes one selection at a time; call update first"
                )
            point = self._engine.select()
            self._point = point.copy()
            return point

    def iterate(self) -> NDArray[np.float64]:
        """The iterate x_t (strictly inside the ball)."""
        return self._engine.iterate()

    @property
    def policy_version(self) -> int:
        """Moves with every recorded loss: each moves the iterate x_t."""
        return int(self._engine.t)

    def policy(self, seed: int | None = None) -> DikinPolicy:
        """A read-only, picklable policy holding the iterate x_t
        (:class:`dpbandits.serving_sampled.DikinPolicy`; its ``version`` is
        :attr:`policy_version`) that draws points y_t as :meth:`select`
        does (a uniform eigen-direction of the Dikin ellipsoid at x_t and a
        uniform sign), with its own generator (``seed``; None:
        operating-system entropy): a sample of the law of the learner's
        next point, not the learner's own draw.

        Privacy: x_t is a function of the privatized losses only (each loss
        forwarded with <Z_t, y_t>, Z_t Laplace noise, Agarwal & Singh Alg.
        4, and the points played), so serving the policy, in any thread,
        process or machine, is post-processing: it costs no privacy. The
        policy's generator is not privacy noise. The learner keeps the
        iterates it served (the :data:`~dpbandits.learners.served.KEPT` most
        recent versions) so that the losses of the points drawn from them
        are fed back with ``update(y, loss, policy_version=policy.version)``."""
        with self.lock:
            x = self._engine.iterate()
            self.__dict__.setdefault("_served", ServedVersions(self.n)).record(self.policy_version, x)
            return DikinPolicy(x, self.policy_version, seed=seed)

    def update(self, *args: ArrayLike | float, policy_version: int | None = None) -> None:
        """``update(loss)``: the loss <l_t, y_t> of the point just selected;
        ``update(y, loss)``: the same, naming the point (it must be the
        outstanding one). The protected unit is one loss.

        ``update(y, loss, policy_version=v)``: the loss <l, y> of a point y
        drawn by a served policy of version v (:meth:`policy`), at any time
        and in any order; the learner's own outstanding selection, if any,
        stays outstanding. y must be one of the 2N points of the Dikin
        ellipsoid at the iterate x_v the policy drew around
        (:meth:`dpbandits.serving_sampled.DikinPolicy.support`; ValueError
        otherwise), which the learner released and keeps. The estimate
        N <l, y>~ s lambda_i^{1/2} e_i of Abernethy, Hazan & Rakhlin 2012
        (Alg. 1 line 8) is N <l, y>~ w / ||w||^2 with w = y - x_v, so it is
        computed exactly from y and x_v and is unbiased for that round's
        loss vector given x_v, as the proof needs; the loss enters the
        reduction (Alg. 4: <Z, y> added, ||y|| <= 1) once, so the guarantee
        is unchanged. The regret bound becomes one with delayed feedback
        (the iterate moves with estimates of rounds played at earlier
        iterates), not Thm 4.5's."""
        self._online().update(*args, policy_version=policy_version)

    def _checked_update(self, *args: ArrayLike | float, policy_version: int | None = None) -> None:
        if policy_version is not None:
            self._served_update(args, policy_version)
            return
        if len(args) == 2:
            y = float_array("y", args[0], ndim=1)
            loss = args[1]
        elif len(args) == 1:
            y, loss = None, args[0]
        else:
            raise TypeError("update takes (loss) or (y, loss)")
        value = loss if type(loss) is float else real("loss", loss)  # type: ignore[arg-type]
        with self.lock:
            point = self._point
            if y is not None and (point is None or not np.array_equal(y, point)):
                raise ValueError("invalid argument `y`: it is not the outstanding point")
            if self._engine.observe(value):
                self._warn_first_clip(value, point)
            self._point = None

    def _served_update(self, args: tuple[ArrayLike | float, ...], version: int) -> None:
        """``update(y, loss, policy_version=version)`` (see :meth:`update`)."""
        if len(args) != 2:
            raise TypeError("update(y, loss, policy_version=v) takes the served point and its loss")
        y = float_array("y", args[0], ndim=1)
        value = args[1] if type(args[1]) is float else real("loss", args[1])  # type: ignore[arg-type]
        with self.lock:
            served: ServedVersions = self.__dict__.setdefault("_served", ServedVersions(self.n))
            x = served.get(version)
            if y.shape != (self.n,):
                raise ValueError(f"invalid argument `y`: needs {self.n} coordinates, got shape {y.shape}")
            support = DikinPolicy(x, int(version), seed=0).support()
            match = np.flatnonzero(np.all(np.abs(support - y) <= 1e-12 * (1.0 + np.abs(support)), axis=1))
            if len(match) == 0:
                raise ValueError(f"invalid argument `y`: not a point the policy of version {int(version)} serves "
                                 "(one of the 2N points of the Dikin ellipsoid at its iterate)")
            if self._engine.observe_served(support[int(match[0])], x, value):
                self._warn_first_clip(value, y)

    def _checkpoint_extra(self) -> dict[str, Any]:
        extra = super()._checkpoint_extra()
        served = self.__dict__.get("_served")
        extra["served"] = served.to_extra() if served is not None else {}
        return extra

    def _restore_extra(self, extra: Mapping[str, Any]) -> None:
        super()._restore_extra(extra)
        # An iterate lies strictly inside the unit ball.
        self.__dict__["_served"] = ServedVersions.from_extra(
            self.n, extra.get("served"), lambda x: float(np.sum(x * x)) < 1.0)

    def _warn_first_clip(self, loss: float, point: ArrayLike | None = None, stacklevel: int = 2) -> None:
        """The warning of the first clipped loss, at the played point y_t
        (``stacklevel`` 1: the caller)."""
        bound = float(np.linalg.norm(np.asarray(point, dtype=np.float64))) if point is not None else float("nan")
        self._warn_clipped(f"loss {loss}", f"range |loss| <= ||y_t||_2 = {bound} (||l_t||_2 <= 1)", stacklevel + 1)

    @property
    def t(self) -> int:
        """Rounds observed."""
        return int(self._engine.t)

    @property
    def privacy(self) -> Guarantee:
        """Pure epsilon-DP of the loss sequence (Thm 4.5 / Lemma 4.2), or none."""
        return self._privacy

    def reseed(self, seed: int | None = None) -> None:
        """Draws future noise and exploration from a new seed."""
        self._engine.reseed(seed_or_none("seed", seed))
