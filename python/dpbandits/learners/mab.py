"""K-armed stochastic bandits: UCB1, Thompson sampling, and the private
versions of Mishra & Thakurta, "(Nearly) Optimal Differentially Private
Stochastic Multi-Arm Bandits", UAI 2015, and its appendix.

Online use: ``arm = learner.select()``, then ``learner.update(arm, reward)``
(any order, any time: delayed feedback) or ``learner.update(reward)``; the
protocol is :class:`KArmedLearner`'s.
Simulation: ``dpbandits.simulate(learner, BernoulliBandit(means))`` runs the
Rust engine (``rust/src/policy/mab.rs``) on the Rust environment.

Every noise scale and confidence constant comes from
:mod:`dpbandits.privacy.mishra_thakurta`; the engine reads only released
(noisy) sums and its own pull counts (functions of its past choices).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._sizes import check_bytes, tree_bytes
from dpbandits._validation import (
    epsilon_range,
    float_array,
    in_open_unit,
    integral_arguments,
    positive,
    positive_int,
    real,
    seed_or_none,
)
from dpbandits.errors import CheckpointError, LinearRegretWarning
from dpbandits.learners.online import EngineMethods
from dpbandits.noise import NoiseWire
from dpbandits.privacy.factorization import counter_choice, counter_parameters
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.mishra_thakurta import (
    GapSchedule,
    gap_estimation_schedule,
    lemma5_noise_bound,
    lemma5_noise_bound_checked,
    lemma9_first_batch_horizon,
    private_ucb_node_scale,
    private_ucb_node_scale_checked,
    realized_tree_epsilon,
)
from dpbandits.privacy.mishra_thakurta import reported_epsilon as _reported_epsilon
from dpbandits.privacy.secure import lattice_laplace, sampler_choice
from dpbandits.serving import ArmPolicy

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

__all__ = ["UCB1", "KArmedLearner", "PrivateThompsonSampling", "PrivateUCB", "ThompsonSampling"]

Bounds = Literal["clip", "error"]
Calibration = Literal["paper", "tight"]


def _reward_range(reward_range: Sequence[float]) -> tuple[float, float]:
    try:
        lo, hi = reward_range
    except (TypeError, ValueError):
        raise ValueError(
            f"invalid argument `reward_range`: expected a pair (lo, hi), got {reward_range!r}"
        ) from None
    lo_, hi_ = real("reward_range", lo), real("reward_range", hi)
    if not (math.isfinite(lo_) and math.isfinite(hi_) and lo_ < hi_):
        raise ValueError(f"invalid argument `reward_range`: needs finite lo < hi, got {reward_range!r}")
    return lo_, hi_


def _bounds(bounds: str) -> str:
    if bounds not in ("clip", "error"):
        raise ValueError(f"invalid argument `bounds`: must be 'clip' or 'error', got {bounds!r}")
    return bounds


def _calibration(calibration: str) -> str:
    if calibration not in ("paper", "tight"):
        raise ValueError(f"invalid argument `calibration`: must be 'paper' or 'tight', got {calibration!r}")
    return calibration


def _laplace_wire(scale: float, lo: float, hi: float, sampler: str, horizon: int) -> NoiseWire:
    """The engine's noise value for Laplace(``scale``) on sums of inputs in
    [lo, hi]: exact on a lattice (:func:`dpbandits.privacy.secure.lattice_laplace`,
    rounding accounted) unless ``sampler="float"``."""
    if sampler_choice(sampler) == "float":
        return "laplace", scale
    return lattice_laplace(scale, hi - lo, value_range=(lo, hi), sum_bound=horizon * max(abs(lo), abs(hi))).wire()


def _check_arms(k: int, horizon: int, private: bool) -> None:
    """AllocationError naming ``k`` unless the per-arm state fits in memory
    (three 8-byte statistics per arm, plus a scalar tree counter per arm
    for the private learners)."""
    per_arm = 24 + (tree_bytes(1, horizon) if private else 0)
    check_bytes("k", k, k * per_arm, f"the per-arm statistics of {k} arms")


def _gamma(gamma: float | None, horizon: int) -> float:
    return 1.0 / horizon if gamma is None else in_open_unit("gamma", gamma)


class KArmedLearner(EngineMethods):
    """The online protocol of every K-armed learner (decision set of a
    simulation: ``DecisionSet{k, d: 0}``)::

        arm = learner.select()              # one decision, outstanding until its reward
        arms = learner.select_many(n)       # n decisions (int64 array)
        learner.update(arm, reward)         # the reward of a pull of `arm`: any order, any time
        learner.update(reward)              # when exactly one selection is outstanding
        learner.update_many(arms, rewards)  # the loop of update(arm, reward), in Rust
        policy = learner.policy()           # picklable, from released values only

    Delayed and out-of-order feedback: the queued reduction QPM-D of
    Joulani, György & Szepesvári, "Online Learning under Delayed Feedback",
    ICML 2013, Sec. 3.2 (Algorithm 1), in ``rust/src/policy/delayed.rs``.
    The learner's algorithm proposes an arm; every selection returns that
    proposal (asked once: a Thompson learner does not redraw per
    selection). A reward of arm a is queued in a's FIFO queue; whenever the
    proposal's queue is non-empty its head is fed to the algorithm, which
    proposes anew. With strict alternation (select, then its reward) this is
    exactly the algorithm run round by round. The paper bounds the regret by
    the algorithm's own plus an additive term of order K times the expected
    delay. A reward may also come for a pull served elsewhere (from a
    published :meth:`policy`); ``update(arm, reward)`` takes it the same way.

    Privacy semantics of delay: the protected unit is one reward. Each
    reward enters the private statistics at most once, in per-arm arrival
    order (a queued reward the algorithm never asks for is never released);
    trees and phases count the rewards fed (:attr:`t`), not the selections;
    decisions read only released values. The order in which rewards enter
    depends only on the arms chosen and on arrival times (assumed
    independent of the reward values), never on the values, so the
    learner's guarantee (``privacy``) holds as stated.

    Horizon: rewards accepted (fed + queued) never exceed ``horizon``; a
    selection is refused (:class:`~dpbandits.errors.StateError`) once fed +
    queued + outstanding selections reach it.

    Arms added and retired during a run: ``arm = learner.add_arm()``
    appends an arm (index k, then k grows by one) with statistics of its
    own, exactly those a fresh learner gives each arm: no pulls, a fresh
    per-arm tree or counter (private UCB / Thompson learners) drawing its
    own noise, or for the phased learners a fresh phase schedule whose
    phases get the phase noise when they end (DP-SE: it joins the running
    epoch). ``learner.retire_arm(i)`` means arm i is never selected again
    (its index is -inf; a phased learner closes the arm's running phase and
    releases it at once, so every reward it holds enters exactly one
    released phase sum). A retired arm's outstanding selections and later
    rewards are still accepted and queued, but never fed to the algorithm:
    they are counted in :attr:`dropped` and use up the horizon like any
    accepted reward. Refused: retiring the last arm not retired, and, for
    ``PrivateThompsonSampling`` with gap estimation, changing the arms
    during its round-robin phases (adding before the first round is
    accepted). :attr:`retired` and :attr:`arms` show the arm set;
    checkpoints carry it (validated on restore), :meth:`policy`,
    ``select_many`` / ``update_many`` and the delayed-feedback queues
    follow it; ``simulate`` builds fresh learners from the constructor's
    configuration, with its k arms.

    Privacy semantics of a changing arm set: the protected unit is one
    reward, and each reward enters the private statistics of exactly one
    arm at most once (per-arm trees, counters or phase sums compose in
    parallel), so the guarantee (``privacy``) holds for the whole run
    whatever the arms added or retired: it covers every arm, added ones
    included, with the noise the constructor calibrated, and the horizon
    still bounds the rewards fed over all arms. When to add or retire an
    arm must not depend on reward values beyond what the learner has
    released (it then is post-processing). The regret analyses of the
    papers assume a fixed arm set and do not cover these runs.

    Threads: the engine holds the lock (:attr:`lock`, a reentrant lock
    with the ``threading.RLock`` interface) and takes it once per call, in
    Rust; ``select`` and ``update`` call the engine's own methods in
    Rust (native methods of the learner's class, no Python frame per
    call). Hold ``learner.lock`` across a
    ``select``/``update(reward)`` pair from several threads, or use
    ``update(arm, reward)``.
    """

    k: int
    horizon: int

    def _bind(self, engine: Any) -> None:
        engine._set_label(type(self).__name__)  # named in its clipped-reward warning

    def select(self) -> int:
        """The arm (0 <= arm < k) to pull: the algorithm's current proposal,
        counted as outstanding until its reward arrives."""
        return int(self._engine.select())

    def update(self, *args: Any) -> None:
        """``update(arm, reward)``: the reward of a pull of ``arm``, in any
        order and at any time after the selection (or for a pull served
        from :meth:`policy`); ``update(reward)``: the reward of the one
        outstanding selection (StateError naming the outstanding arms when
        there are several or none). Range policy as configured; refused
        input changes nothing."""
        self._engine.update(*args)

    def select_many(self, n: int) -> NDArray[np.int64]:
        """``n`` decisions at once (an int64 array; all outstanding). Without
        feedback the algorithm does not move: they are all its proposal."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
            raise TypeError(f"invalid argument `n`: expected an integer >= 0, got {n!r}")
        return self._engine.select_many(int(n))

    def update_many(self, arms: ArrayLike, rewards: ArrayLike) -> None:
        """Equal, bit for bit, to ``for a, r in zip(arms, rewards):
        update(a, r)`` (in Rust, GIL released): it stops at the first
        refused pair, whose error names its index, the earlier pairs
        recorded as the loop would have."""
        a = np.asarray(arms)
        if a.dtype == np.bool_ or a.dtype.kind not in "iu":
            raise TypeError(f"invalid argument `arms`: expected integer arm indices, got dtype {a.dtype}")
        if a.ndim != 1:
            raise ValueError(f"invalid argument `arms`: expected 1 dimension, got shape {a.shape}")
        if a.dtype.kind == "u" and a.size and int(a.max()) >= self.k:
            raise ValueError(f"invalid argument `arms`: entries must be < {self.k}, got {int(a.max())}")
        r = float_array("rewards", rewards, ndim=1, finite=False)
        if r.shape != a.shape:
            raise ValueError(f"invalid argument `rewards`: needs one reward per arm, got {r.size} for {a.size} arms")
        self._engine.update_many(np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(r))

    @property
    def outstanding(self) -> int:
        """Selections made by ``select``/``select_many`` not yet answered by
        a reward (per arm: :meth:`outstanding_by_arm`)."""
        return int(self._engine.outstanding)

    def outstanding_by_arm(self) -> NDArray[np.uint64]:
        """Per arm, the outstanding selections."""
        return self._engine.outstanding_by_arm()

    def queue_lengths(self) -> NDArray[np.uint64]:
        """Per arm, rewards received and not yet fed to the algorithm."""
        return self._engine.queue_lengths()

    def policy(self) -> ArmPolicy:
        """The current decision as a read-only, picklable
        :class:`~dpbandits.serving.ArmPolicy`, built from released values
        only: serving it elsewhere is post-processing (no privacy cost).
        Send the rewards of the pulls it serves to ``update(arm, reward)``."""
        arm, version = self._engine.policy()
        return ArmPolicy(k=self.k, arm=int(arm), version=int(version))

    @property
    def policy_version(self) -> int:
        """Increments when a new policy is available (the algorithm's
        proposal changed)."""
        return int(self._engine.policy_version)

    def add_arm(self) -> int:
        """Adds an arm with fresh statistics and its own noise (class
        docstring); returns its index, the old ``k``."""
        with self.lock:
            arm = int(self._engine.add_arm())
            self.k = int(self._engine.k)
        return arm

    def retire_arm(self, arm: int) -> None:
        """Retires ``arm``: it is never selected again; its later rewards
        are accepted and dropped (class docstring). Retiring a retired arm
        does nothing; the last arm not retired cannot be retired."""
        if isinstance(arm, bool) or not isinstance(arm, int | np.integer):
            raise TypeError(f"invalid argument `arm`: expected an int, got {type(arm).__name__}")
        if arm < 0:
            raise ValueError(f"invalid argument `arm`: must be >= 0, got {arm}")
        self._engine.retire_arm(int(arm))

    @property
    def retired(self) -> NDArray[np.bool_]:
        """Per arm, whether it is retired."""
        return self._engine.retired()

    @property
    def arms(self) -> NDArray[np.int64]:
        """The arms not retired (indices, increasing)."""
        return np.flatnonzero(~self._engine.retired()).astype(np.int64)

    @property
    def dropped(self) -> int:
        """Rewards of retired arms accepted and never fed to the algorithm."""
        return int(self._engine.dropped)

    def _simulation_factory(self) -> Any:
        """The simulation's engine factory: this engine's, or, after arms
        were added, that of a fresh learner of the constructor's
        configuration (``simulate`` runs the configuration's k arms)."""
        if int(self._engine.k) == int(self._args["k"]):
            return self._engine._factory()
        return type(self)._from_checkpoint_config(self._checkpoint_config())._engine._factory()

    def _checkpoint_extra(self) -> dict[str, Any]:
        # Queues, outstanding selections and the proposal are in the engine
        # bytes; the arm set is also named here, so that the engine built
        # from the header can be given the same arms before it is compared.
        return {"arms": {"k": int(self._engine.k), "retired": [bool(r) for r in self._engine.retired()]}}

    def _match_checkpoint(self, extra: Mapping[str, Any], name: str) -> None:
        """Gives the engine built from the header the arms added in the
        checkpoint's run, so that its configuration can be compared with
        the restored engine's (CheckpointError for a malformed arm set)."""
        arms = _arm_set(extra, name)
        if arms is None:
            return
        k, _ = arms
        if k < self.k:
            raise CheckpointError(f"{name!r}: the arm set names k = {k}, fewer than the configuration's {self.k}")
        try:
            for _ in range(k - self.k):
                self._engine.add_arm()
        except (ValueError, RuntimeError) as exc:
            raise CheckpointError(f"{name!r}: the arm set does not fit the configuration: {exc}") from None

    def _restore_extra(self, extra: Mapping[str, Any]) -> None:
        super()._restore_extra(extra)
        arms = _arm_set(extra, "the checkpoint")
        engine_k = int(self._engine.k)
        if arms is not None:
            k, retired = arms
            if k != engine_k or retired != [bool(r) for r in self._engine.retired()]:
                raise CheckpointError(f"the checkpoint's arm set (k = {k}, retired {retired}) is not its "
                                      f"engine's (k = {engine_k})")
        self.k = engine_k

    @property
    def t(self) -> int:
        """Rewards fed to the algorithm so far (queued ones excluded)."""
        return int(self._engine.t)

    @property
    def pulls(self) -> NDArray[np.uint64]:
        """Pulls of each arm counted by the index statistics."""
        return self._engine.pulls()

    def released_sums(self) -> NDArray[np.float64]:
        """The per-arm reward sums the index reads (noisy for private learners)."""
        return self._engine.sums()


class UCB1(KArmedLearner):
    """Non-private UCB1 (Auer, Cesa-Bianchi & Fischer 2002): pull every arm
    once, then argmax mean_a + w sqrt(2 ln t / n_a), t the round
    (1-indexed), w = hi - lo the width of ``reward_range`` (rewards are not
    clipped: no privacy proof depends on them). Ties go to the lowest arm.

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
    seed:
        None or an integer.
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
    >>> learner = dp.UCB1(k=3, horizon=1000, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))   # K-armed: select() takes no argument
    >>> learner.t, learner.privacy.model
    (200, 'none')
    """

    def __init__(
        self,
        k: int,
        horizon: int,
        reward_range: Sequence[float] = (0.0, 1.0),
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {"k": k, "horizon": horizon, "reward_range": reward_range, "seed": seed}
        )
        self.k = positive_int("k", k)
        self.horizon = positive_int("horizon", horizon)
        _check_arms(self.k, self.horizon, private=False)
        lo, hi = _reward_range(reward_range)
        self._engine = _core.MabEngine(
            self.k, self.horizon, index="ucb", noise_bound=0.0, lo=lo, hi=hi, bounds="unchecked",
            seed=seed_or_none("seed", seed),
        )

    @property
    def privacy(self) -> Guarantee:
        """No privacy: exact sums."""
        return Guarantee.none("non-private UCB1")


class ThompsonSampling(KArmedLearner):
    """Non-private Thompson sampling (Agrawal & Goyal 2012, 2013).

    - ``prior="beta"``: Beta(1 + s_a, 1 + n_a - s_a) on rewards binarized
      to Bernoulli((y - lo) / w) (rewards clipped into ``reward_range``);
    - ``prior="gaussian"``: N(S_a / (n_a + 1), w^2 / (n_a + 1)) (rewards
      not clipped).

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
    prior:
        ``"beta"`` (default) or ``"gaussian"``.
    reward_range:
        (lo, hi), finite with lo < hi (default [0, 1]).
    seed:
        None or an integer (the posterior draws).
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
    >>> learner = dp.ThompsonSampling(k=3, horizon=1000, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))   # K-armed: select() takes no argument
    >>> learner.t, learner.privacy.model
    (200, 'none')
    """

    def __init__(
        self,
        k: int,
        horizon: int,
        prior: Literal["beta", "gaussian"] = "beta",
        reward_range: Sequence[float] = (0.0, 1.0),
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {"k": k, "horizon": horizon, "prior": prior, "reward_range": reward_range, "seed": seed}
        )
        self.k = positive_int("k", k)
        self.horizon = positive_int("horizon", horizon)
        _check_arms(self.k, self.horizon, private=False)
        lo, hi = _reward_range(reward_range)
        if prior not in ("beta", "gaussian"):
            raise ValueError(f"invalid argument `prior`: must be 'beta' or 'gaussian', got {prior!r}")
        self._engine = _core.MabEngine(
            self.k, self.horizon, index=f"thompson_{prior}", lo=lo, hi=hi,
            bounds="clip" if prior == "beta" else "unchecked", seed=seed_or_none("seed", seed),
        )

    @property
    def privacy(self) -> Guarantee:
        """No privacy: exact sums."""
        return Guarantee.none("non-private Thompson sampling")


class PrivateUCB(KArmedLearner):
    """Private UCB of Mishra & Thakurta 2015 (Alg. 1; App. A, Lemma 5, App. D.1).

    One Laplace tree counter per arm over that arm's rewards (App. A):
    leaf j of arm a's tree is a's j-th reward, every node carries
    Lap(b) drawn once, and the index reads the released sum r~_a only.
    Every arm is pulled once, then

    - ``confidence="lemma5"`` (Alg. 1 line 9 with Lemma 5): argmax
      r~_a / n_a + w sqrt(2 ln t / n_a) + N / n_a, with N the Lemma 5 bound
      on |Noise_a(t)| for all arms and rounds w.p. >= 1 - gamma
      (:func:`dpbandits.privacy.mishra_thakurta.lemma5_noise_bound`);
    - ``confidence="empirical"`` (App. D.1, the interval of the paper's
      experiments): argmax r~_a / n_a + sqrt(max(r~_a - lo n_a, 0) ln t) / n_a
      + w ln t / n_a. It has no noise term (its intervals need not cover
      the Laplace noise: a strongly negative early node can lock the best
      arm out for the rest of the run); privacy is the same (post-processing). This is App. D.1 as written
      (we checked the index term by term), and it fails by design: with
      node noise of scale k log2 T / epsilon (about 83 at k = 5, T = 10^5,
      eps = 1) the noise dominates every arm's sum, the interval has no
      term that grows to cover it, and an arm whose early node is strongly
      negative is never pulled again (its tree nodes, hence its release,
      change only when it is pulled); most runs lock onto a suboptimal
      arm, at every epsilon (the decisions depend on the noise's ratios
      only). Use ``"lemma5"``, or :class:`dpbandits.DPKLUCB`.

    Node scale b (:func:`~dpbandits.privacy.mishra_thakurta.private_ucb_node_scale`):
    ``calibration="paper"``: k w log2 T / epsilon (Lemma 5 proof);
    ``"tight"``: w tree_levels(T) / epsilon (each reward enters one tree).

    Rewards must lie in ``reward_range`` = [lo, hi] (default [0, 1], the
    paper's; w = hi - lo is the sensitivity): ``bounds="clip"`` clips,
    ``bounds="error"`` raises ValueError.

    Guarantee: epsilon-DP of the reward sequence (central model): the
    choices are post-processing of the k trees' noisy nodes. ``privacy``
    reports the requested epsilon, or the exactly accounted one
    (tree_levels(T) w / b) when that is larger (paper calibration, k = 1).

    ``counter="smooth-binary"`` (``calibration="tight"``; not in the
    paper): each arm's sums by the smooth binary mechanism (Andersson &
    Pagh 2023, :mod:`dpbandits.privacy.smooth_binary`): a reward reaches
    H - w nodes, every release sums w; ``privacy`` names it.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 2.
    epsilon:
        Privacy parameter, finite and > 0 (within the range the calibration's
        arithmetic supports): epsilon-DP of the rewards.
    gamma:
        Failure probability of the Lemma 5 bound, in (0, 1); None (default)
        for 1 / T.
    confidence:
        ``"lemma5"`` (default) or ``"empirical"`` (App. D.1).
    reward_range:
        (lo, hi), finite with lo < hi (default [0, 1]); hi - lo is the
        sensitivity.
    bounds:
        ``"clip"`` (default) or ``"error"`` for a reward outside
        ``reward_range``.
    calibration:
        ``"paper"`` (default) or ``"tight"``: the node scale above.
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
        ``"binary"`` (default, the paper's tree) or ``"smooth-binary"``
        (``calibration="tight"`` only).
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

    Delayed feedback (the protocol of :class:`KArmedLearner`, QPM-D): each
    reward enters its arm's tree once, as the next leaf in its arm's arrival
    order; the order depends on the arms chosen and on arrival times, never on
    the reward values, so the guarantee is unchanged.

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.PrivateUCB(k=3, horizon=1000, epsilon=1.0, calibration="tight", seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=0)
    >>> for _ in range(100):
    ...     arm = learner.select()
    ...     learner.update(env.pull(arm))
    >>> learner.t, learner.privacy.model, learner.privacy.epsilon
    (100, 'central', 1.0)
    """

    @epsilon_range
    def __init__(
        self,
        k: int,
        horizon: int,
        epsilon: float,
        gamma: float | None = None,
        confidence: Literal["lemma5", "empirical"] = "lemma5",
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        calibration: Calibration = "paper",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        counter: Literal["binary", "smooth-binary"] = "binary",
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "k": k, "horizon": horizon, "epsilon": epsilon, "gamma": gamma, "confidence": confidence,
            "reward_range": reward_range, "bounds": bounds, "calibration": calibration, "seed": seed,
            "sampler": sampler, "secure": secure, "counter": counter,
        })
        self.sampler = sampler_choice(sampler)
        self.k = positive_int("k", k)
        self.horizon = positive_int("horizon", horizon, minimum=2)
        _check_arms(self.k, self.horizon, private=True)
        self.epsilon = positive("epsilon", epsilon)
        self.gamma = _gamma(gamma, self.horizon)
        self.calibration = _calibration(calibration)
        lo, hi = _reward_range(reward_range)
        self.width = hi - lo
        if confidence not in ("lemma5", "empirical"):
            raise ValueError(f"invalid argument `confidence`: must be 'lemma5' or 'empirical', got {confidence!r}")
        self.confidence = confidence
        # Every argument was validated above, once: the formulas trust them.
        self.counter = counter_choice(counter, "laplace")
        k, n, cal = self.k, self.horizon, self.calibration
        self.node_scale = private_ucb_node_scale_checked(k, n, self.epsilon, self.width, cal, self.counter)
        self.noise_bound = lemma5_noise_bound_checked(self.node_scale, k, n, self.gamma, cal, self.counter)
        #: The tree's node noise, as the engine gets it (rust/src/py/noise.rs).
        self.noise_wire = _laplace_wire(self.node_scale, lo, hi, self.sampler, self.horizon)
        theta, omega = counter_parameters(self.counter, self.horizon, "laplace")
        self._engine = _core.MabEngine(
            self.k, self.horizon, index="ucb" if confidence == "lemma5" else "empirical",
            noise_bound=self.noise_bound, noise=self.noise_wire,
            lo=lo, hi=hi, bounds=_bounds(bounds), seed=seed_or_none("seed", seed),
            counter=self.counter, theta=theta, omega=omega,
        )
        self._use_secure(secure, self.sampler)

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (Mishra & Thakurta Alg. 1, App. A)."""
        realized = realized_tree_epsilon(self.horizon, self.node_scale, self.width, counter=self.counter)
        basis = "Mishra & Thakurta 2015, Alg. 1 + App. A (per-arm Laplace trees); exact node count"
        if self.counter != "binary":
            basis += ("; per-arm sums by the smooth binary mechanism (Andersson & Pagh 2023), H - w nodes per "
                      "reward (dpbandits.privacy.smooth_binary)")
        return self._secure_guarantee(Guarantee(
            model="central", epsilon=_reported_epsilon(self.epsilon, realized), delta=0.0, protects="rewards",
            basis=basis,
            calibration=self.calibration,  # type: ignore[arg-type]
            sampler=self.sampler,
        ))


class PrivateThompsonSampling(KArmedLearner):
    """Private Thompson sampling of Mishra & Thakurta 2015 (Alg. 2, Lemma 9).

    Three phases; the choices the appendix leaves open are ours, stated here:

    1. Gap estimation (Lemma 9, App. C.1). Batch i = 1, 2, ... pulls every
       arm m_i = ceil(192 k log2 T / (epsilon Delta_i^2)) times round-robin,
       Delta_i = 2^-i (halving), and releases each arm's batch mean plus
       Laplace noise; it stops after the first batch whose two largest
       released means differ by more than Delta_i, giving Delta^ = Delta_i
       (Lemma 9: Delta / 3 <= Delta^ <= 2 Delta w.h.p.). Choice: batches that
       do not fit in T rounds are not started (the phase then stops at the
       last batch that did). Noise scale: ``"paper"`` 2 k w / (epsilon m_i)
       (the proof's deviation 2k log(.)/(epsilon m_i)), ``"tight"``
       2 w / (epsilon m_i); either way the phase is (epsilon / 2)-DP: a
       reward enters one batch mean of one arm, of sensitivity w / m_i.
    2. Random pulling. Choice (the main paper's m is not in the appendix;
       App. D.1 says the experiments used "a smaller value"): every arm is
       pulled ceil(N / Delta^) times, N the Lemma 5 bound of the trees of
       phase 3, so that the trees' noise per pull is at most Delta^ when
       sampling starts. These rewards already enter the trees.
    3. Thompson sampling on privately released counts: rewards are
       binarized (Bernoulli((y - lo) / w), Agrawal & Goyal 2012) and
       inserted into one Laplace tree per arm; arm a is scored by a draw of
       Beta(1 + s~_a, 1 + n_a - s~_a), s~_a the released count clamped to
       [0, n_a] (choice: the clamp keeps the Beta parameters valid; it is
       post-processing). Trees get the other epsilon / 2: node scale
       :func:`~dpbandits.privacy.mishra_thakurta.private_ucb_node_scale`
       at epsilon / 2 with sensitivity 1 (a binarized leaf is 0 or 1).

    When Lemma 9's first batch (k m_1 pulls) exceeds the horizon, or the
    first batch plus its random pulls (the earliest Thompson sampling can
    start) reaches it, the learner never samples (regret linear in T); the
    constructor then warns with :class:`dpbandits.errors.LinearRegretWarning`,
    naming the horizon it needs
    (:func:`~dpbandits.privacy.mishra_thakurta.lemma9_first_batch_horizon`
    for the first batch: 353,915 rounds at k = 5, eps = 1; with the random
    pulls, about 2 * 10^6 there).

    ``gap_estimation=False`` skips phases 1 and 2 (as the paper's own
    experiments did, App. D.1: with Lemma 9's constants the first batch
    alone needs 192 k log2 T / (epsilon / 4) pulls, more than T in most
    settings) and gives the trees the whole epsilon.

    Privacy: basic composition of the two halves gives epsilon-DP of the
    rewards; ``privacy`` reports the exact sum of both phases' accounted
    epsilons when that exceeds epsilon (paper calibration with k = 1).
    Rewards outside ``reward_range`` are clipped (``bounds="clip"``) or
    refused (``"error"``).

    Delayed feedback (the protocol of :class:`KArmedLearner`, QPM-D): each
    reward enters its arm's tree once, as the next leaf in its arm's arrival
    order; the order depends on the arms chosen and on arrival times, never on
    the reward values, so the guarantee is unchanged.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 2.
    epsilon:
        Privacy parameter, finite and > 0: epsilon-DP of the rewards.
    gamma:
        Failure probability of the Lemma 5 bound, in (0, 1); None (default)
        for 1 / T.
    gap_estimation:
        True (default) for Lemma 9's phases 1 and 2; False to skip them.
    reward_range:
        (lo, hi), finite with lo < hi (default [0, 1]).
    bounds:
        ``"clip"`` (default) or ``"error"`` for a reward outside
        ``reward_range``.
    calibration:
        ``"paper"`` (default) or ``"tight"``.
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
    >>> learner = dp.PrivateThompsonSampling(k=3, horizon=1000, epsilon=1.0, gap_estimation=False, seed=0)
    >>> env = dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1)
    >>> for t in range(200):
    ...     learner.update(env.pull(learner.select()))   # K-armed: select() takes no argument
    >>> learner.t, learner.privacy.model
    (200, 'central')
    """

    @epsilon_range
    def __init__(
        self,
        k: int,
        horizon: int,
        epsilon: float,
        gamma: float | None = None,
        gap_estimation: bool = True,
        reward_range: Sequence[float] = (0.0, 1.0),
        bounds: Bounds = "clip",
        calibration: Calibration = "paper",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "k": k, "horizon": horizon, "epsilon": epsilon, "gamma": gamma, "gap_estimation": gap_estimation,
            "reward_range": reward_range, "bounds": bounds, "calibration": calibration, "seed": seed,
            "sampler": sampler, "secure": secure,
        })
        self.sampler = sampler_choice(sampler)
        self.k = positive_int("k", k)
        self.horizon = positive_int("horizon", horizon, minimum=2)
        _check_arms(self.k, self.horizon, private=True)
        self.epsilon = positive("epsilon", epsilon)
        self.gamma = _gamma(gamma, self.horizon)
        self.calibration = _calibration(calibration)
        lo, hi = _reward_range(reward_range)
        self.width = hi - lo
        if not isinstance(gap_estimation, bool):
            raise TypeError(f"invalid argument `gap_estimation`: expected a bool, got {gap_estimation!r}")
        self.gap_estimation = gap_estimation
        tree_epsilon = self.epsilon / 2.0 if gap_estimation else self.epsilon
        k, n, cal = self.k, self.horizon, self.calibration
        self.node_scale = private_ucb_node_scale_checked(k, n, tree_epsilon, 1.0, cal)
        self.noise_bound = lemma5_noise_bound_checked(self.node_scale, k, n, self.gamma, cal)
        self.schedule: GapSchedule | None = None
        phases = None
        if gap_estimation:
            s = self.schedule = gap_estimation_schedule(
                self.k, self.horizon, self.epsilon, self.width, self.noise_bound, self.calibration
            )
            self._warn_linear_schedule(s, gamma)
            # Each batch releases its sum + Laplace(b_i m_i), exact on a
            # lattice by default (the mean is that / m_i): as private as the
            # mean's Laplace(b_i) on sensitivity w / m_i.
            batch_noise: list[NoiseWire] = [
                ("zero",) if b * m == 0.0
                else _laplace_wire(b * m, lo, hi, self.sampler, self.horizon)
                for b, m in zip(s.batch_scales, s.batch_sizes, strict=True)
            ]
            phases = (list(s.gaps), list(s.batch_sizes), batch_noise, list(s.random_pulls))
        #: Per batch of gap estimation: the noise value of the released sum
        #: (the mean is the sum over m_i), as the engine gets it.
        self.batch_noise: tuple[NoiseWire, ...] = tuple(phases[2]) if phases else ()
        # Binarized rewards (0 or 1) enter the trees.
        self.noise_wire = _laplace_wire(self.node_scale, 0.0, 1.0, self.sampler, self.horizon)
        self._engine = _core.MabEngine(
            self.k, self.horizon, index="thompson_beta", noise=self.noise_wire,
            lo=lo, hi=hi, bounds=_bounds(bounds), phases=phases, seed=seed_or_none("seed", seed),
        )
        self._use_secure(secure, self.sampler)

    def _forced_rounds(self, horizon: int, gamma: float | None) -> int:
        """Rounds of the shortest possible gap estimation + random pulling
        (stop after batch 1) for a learner like this one at ``horizon``."""
        g = _gamma(gamma, horizon)
        scale = private_ucb_node_scale(self.k, horizon, self.epsilon / 2.0, 1.0, self.calibration)
        bound = lemma5_noise_bound(scale, self.k, horizon, g, self.calibration)
        s = gap_estimation_schedule(self.k, horizon, self.epsilon, self.width, bound, self.calibration)
        return self.k * (s.batch_sizes[0] + s.random_pulls[0])

    def _warn_linear_schedule(self, s: GapSchedule, gamma: float | None) -> None:
        """Warns (LinearRegretWarning) when Thompson sampling cannot start
        within the horizon: Lemma 9's first batch alone exceeds it, or the
        first batch plus its random pulls (the earliest possible start)
        reach it; names the horizon needed."""
        first = self.k * s.batch_sizes[0]
        forced = first + self.k * s.random_pulls[0]
        if forced < self.horizon:
            return
        if first > self.horizon:
            needed = lemma9_first_batch_horizon(self.k, self.epsilon)
            what = f"Lemma 9's first gap-estimation batch needs {first:,} pulls, more than the horizon"
        else:
            needed = self.horizon
            while self._forced_rounds(needed, gamma) >= needed:
                needed *= 2
            what = (f"gap estimation and random pulling take at least {forced:,} rounds (first batch "
                    f"{first:,} + random pulls {forced - first:,}), not less than the horizon")
        warnings.warn(
            f"PrivateThompsonSampling(k={self.k}, epsilon={self.epsilon:g}): {what} {self.horizon:,}, so Thompson "
            f"sampling never starts (linear regret). It needs a horizon of at least {needed:,} rounds"
            f"{'' if first > self.horizon else ' (within a factor 2)'}; use gap_estimation=False (the paper's "
            "own experiments, App. D.1) or dpbandits.DPTS.",
            LinearRegretWarning,
            stacklevel=3,
        )

    @property
    def phase(self) -> str:
        """``"gap"``, ``"random"`` or ``"index"`` (Thompson sampling)."""
        return str(self._engine.phase)

    def released_batch_means(self) -> NDArray[np.float64]:
        """The noisy batch means released by the gap-estimation phase (batches x k)."""
        return self._engine.released_batch_means()

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (basic composition of the two halves)."""
        s = self.schedule
        gap_eps = 0.0
        if s is not None:
            gap_eps = max(self.width / (m * b) for m, b in zip(s.batch_sizes, s.batch_scales, strict=True))
        realized = realized_tree_epsilon(self.horizon, self.node_scale, 1.0) + gap_eps
        return self._secure_guarantee(Guarantee(
            model="central", epsilon=_reported_epsilon(self.epsilon, realized), delta=0.0, protects="rewards",
            basis="Mishra & Thakurta 2015, Alg. 2 + Lemma 9 (Laplace batch means) + App. A trees; basic composition",
            calibration=self.calibration,  # type: ignore[arg-type]
            sampler=self.sampler,
        ))


def _arm_set(extra: Mapping[str, Any], name: str) -> tuple[int, list[bool]] | None:
    """The (k, retired) a checkpoint's extra names, checked; None when absent."""
    arms = extra.get("arms")
    if arms is None:
        return None
    ok = (isinstance(arms, Mapping) and isinstance(arms.get("k"), int) and not isinstance(arms.get("k"), bool)
          and isinstance(arms.get("retired"), list) and all(isinstance(r, bool) for r in arms["retired"])
          and 1 <= arms["k"] <= 1 << 24 and len(arms["retired"]) == arms["k"] and not all(arms["retired"]))
    if not ok:
        raise CheckpointError(f"{name!r}: the arm set of the checkpoint is malformed")
    return int(arms["k"]), list(arms["retired"])
