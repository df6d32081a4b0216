"""Batched elimination with core sets: central, local and shuffle privacy.

Hanna, Girgis, Fragouli & Diggavi, "Differentially Private Stochastic
Linear Bandits: (Almost) for Free": Alg. 1 (central model, Thm 1), Alg. 2
(local model, Thm 2), Alg. 3 (shuffle model, Thm 3), Alg. 4 (shuffle
model with the shuffled scalar sum of Cheu, Joseph, Mao & Peng 2021,
App. C, Thm 4), the zeta-nets of
Lemma 1 for continuous action sets, the Frank–Wolfe core sets of Lemma 2 /
App. A, and the contextual reduction with a known context distribution
(Sec. III-A, Corollary 1).

Every noise scale and confidence coefficient comes from
:mod:`dpbandits.privacy.elimination` (and, for Alg. 4,
:mod:`dpbandits.privacy.shuffle_sum`); the Rust engine
(``rust/src/policy/elimination.rs``) receives plain numbers and decides
only from released (privatized) reward sums.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._sizes import check_bytes, check_work, work_limit
from dpbandits._validation import (
    epsilon_range,
    float_array,
    integral_arguments,
    positive_int,
    reward_scalar,
    seed_or_none,
)
from dpbandits.errors import StateError
from dpbandits.learners.online import LearnerBase
from dpbandits.learners.online_call import BoundOnlineCall
from dpbandits.learners.outstanding import OutstandingIndices
from dpbandits.nets import zeta_net
from dpbandits.noise import NoiseWire
from dpbandits.privacy.elimination import (
    BatchSchedule,
    batch_schedule,
    central_laplace_scale,
    elimination_guarantee,
    gamma_coefficients,
    gamma_log_offset,
    local_laplace_scale,
    reward_sensitivity,
    shuffle_batch_epsilons,
)
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import lattice_laplace, sampler_choice
from dpbandits.privacy.shuffle_sum import (
    check_epsilon_delta,
    shuffle_sum_coefficients,
    shuffle_sum_gamma_scale,
    shuffle_sum_guarantee,
)
from dpbandits.serving_sampled import ContextualEliminationPolicy, EliminationPolicy

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

__all__ = ["ContextualEliminationBandit", "EliminationLinearBandit", "expected_best_actions"]

PrivacyKind = Literal["central", "local", "shuffle", "shuffle-sum"]
_PRIVACY = (None, "central", "local", "shuffle", "shuffle-sum")


class EliminationLinearBandit(BoundOnlineCall, LearnerBase):
    """Batched phased elimination with core sets (Hanna et al. Alg. 1-4).

    Batch i = 1..m (m = floor(ln T) - 1, q = (2T)^{1/ln T}) plays each
    action of the Frank–Wolfe core set C_i of the surviving set A_i
    ceil(pi_i(a) q^i) times, estimates theta by least squares from the
    privatized per-action reward sums, keeps the actions within 2 gamma_i
    of the best estimate, and after batch m plays the best estimated action
    to the horizon.

    Parameters
    ----------
    actions:
        A (K, d) array of actions with ||a|| <= 1 (Assumption 1), or
        ``"sphere"`` / ``"ball"`` for the unit sphere / ball of R^``d``,
        replaced by a zeta-net (Lemma 1, :func:`dpbandits.nets.zeta_net`;
        ``zeta`` defaults to 1/T as in line 2; a ValueError names ``zeta``
        when the net would exceed ``max_actions``).
    horizon:
        T >= 2.
    privacy:
        ``None`` (non-private), ``"central"`` (Alg. 1: Lap(s / epsilon) on
        each per-action sum, epsilon-DP, Thm 1), ``"local"`` (Alg. 2:
        Lap(s / epsilon) on each reward, epsilon-LDP, Thm 2; ``epsilon`` is
        eps0), ``"shuffle"`` (Alg. 3: Lap(s / eps0^(i)) on each reward with
        eps0^(i) = f^{-1}_{n_i,delta}(epsilon), the batch played in a
        shuffled order; (epsilon, delta)-DP, Thm 3). Here s is the
        sensitivity (see ``calibration``). ``"shuffle-sum"`` (Alg. 4, App.
        C): each per-action sum of a batch is one run of the shuffled
        scalar sum of Cheu, Joseph, Mao & Peng 2021 (Alg. 1, parameters of
        Lemma 3.1 for n = n_ia users; rewards mapped affinely to [0, 1] and
        the sum mapped back), gamma_i of Alg. 4 line 10; (epsilon, delta)-DP
        in the shuffle model (Thm 4, parallel composition over the sums);
        see :mod:`dpbandits.privacy.shuffle_sum`.
    epsilon, delta:
        epsilon finite and > 0 for every private model, and <= 15 for
        ``"shuffle-sum"`` (the range of the parameters of CJMP21 Lemma
        3.1); delta in (0, 1) for ``"shuffle"`` and ``"shuffle-sum"``
        only.
    reward_range:
        Declared [r_min, r_max] of rewards (default [-1, 1], Assumption 1).
        Rewards outside are clipped (``bounds="clip"``) or refused
        (``bounds="error"``) before they reach any sum.
    calibration:
        ``"tight"`` (default): sensitivity s = r_max - r_min (one
        replaced reward moves a per-action sum by that much): the least
        Laplace noise that meets the requested epsilon exactly (the
        package's name for a calibration that meets the guarantee with the
        least noise; the default of every learner whose published formula
        falls short of its own claim).
        ``"paper"``: s = 1, as in the paper's proof (Sec. VII-A, Eq. (12));
        under-noised when r_max - r_min > 1, kept for reproduction only.
        ``privacy`` then reports the weaker guarantee actually met.
        For ``"shuffle-sum"`` the guarantee is (epsilon, delta) under both
        (the protocol's [0, 1] inputs have sensitivity 1 after the affine
        map); ``"paper"`` there only drops the factor r_max - r_min from
        gamma_i (Alg. 4 line 10 as printed), so the confidence width
        under-covers the noise when r_max - r_min > 1.
    exploration:
        ``"core_set"`` (default) or ``"uniform"``: the no-core-set ablation
        of Fig. 2b (every a in A_i with pi_i(a) = 1/|A_i|; gamma_i then uses
        B d = K, and Lemma 3's 2d condition is not guaranteed).
    shuffle_method:
        ``"closed-form"`` (the paper's f_{n,delta}, FMT Thm 3.1) or
        ``"numerical"`` (FMT Thm 3.2; less noise), for ``privacy="shuffle"``.
    confidence:
        ``"paper"``: gamma_i exactly as Alg. 1 line 5 / Alg. 2 line 12 /
        Alg. 3 line 19 (with the Laplace scale of the calibration in place
        of 1/epsilon and B = (d+1)/2, since the core sets have at most
        d(d+1)/2 points). The only option.
    seed:
        None: operating-system entropy (deployment); an int reproduces the
        noise and the shuffler's permutations.
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
    >>> import numpy as np
    >>> import dpbandits as dp
    >>> actions = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    >>> learner = dp.EliminationLinearBandit(actions, horizon=10_000, privacy="central", epsilon=1.0, seed=0)
    >>> i = learner.select()
    >>> learner.update(0.5)
    >>> learner.t, learner.privacy.model
    (1, 'central')
    """

    @epsilon_range
    def __init__(
        self,
        actions: ArrayLike | Literal["sphere", "ball"],
        horizon: int,
        privacy: PrivacyKind | None = None,
        epsilon: float | None = None,
        delta: float | None = None,
        *,
        d: int | None = None,
        reward_range: tuple[float, float] = (-1.0, 1.0),
        calibration: Literal["tight", "paper"] = "tight",
        exploration: Literal["core_set", "uniform"] = "core_set",
        shuffle_method: Literal["closed-form", "numerical"] = "closed-form",
        confidence: Literal["paper"] = "paper",
        zeta: float | None = None,
        max_actions: int = 1_000_000,
        bounds: Literal["clip", "error"] = "clip",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        self.sampler = sampler_choice(sampler)
        self.horizon = positive_int("horizon", horizon, minimum=2)
        if privacy not in _PRIVACY:
            raise ValueError(f"invalid argument `privacy`: must be one of {_PRIVACY}, got {privacy!r}")
        if confidence != "paper":
            raise ValueError(f"invalid argument `confidence`: only 'paper' is available, got {confidence!r}")
        if exploration not in ("core_set", "uniform"):
            raise ValueError(f"invalid argument `exploration`: must be 'core_set' or 'uniform', got {exploration!r}")
        if bounds not in ("clip", "error"):
            raise ValueError(f"invalid argument `bounds`: must be 'clip' or 'error', got {bounds!r}")
        if privacy is None and (epsilon is not None or delta is not None):
            raise ValueError("invalid argument `epsilon`: privacy=None (non-private) takes no epsilon or delta")
        self.actions = _action_set(actions, d, self.horizon if zeta is None else None, zeta, max_actions)
        self.k, self.d = self.actions.shape
        self.privacy_model = privacy
        self.schedule: BatchSchedule = batch_schedule(self.horizon)
        sens = reward_sensitivity(reward_range, calibration)
        lo, hi = (float(v) for v in reward_range)
        self.epsilon = None if privacy is None else _epsilon(epsilon)
        self.delta = None
        self.batch_epsilons: tuple[float, ...] = ()
        m = self.schedule.batches
        if privacy is None:
            scales = [0.0] * m
        elif privacy == "central":
            scales = [central_laplace_scale(self.epsilon, sens)] * m  # type: ignore[arg-type]
        elif privacy == "local":
            scales = [local_laplace_scale(self.epsilon, sens)] * m  # type: ignore[arg-type]
        elif privacy == "shuffle-sum":
            self.epsilon, self.delta = check_epsilon_delta(self.epsilon, delta)
            # Alg. 4 line 10: Alg. 1's gamma_i with sqrt(180 ln(2/delta)) / epsilon
            # (times r_max - r_min under "tight") in place of the Laplace scale.
            scales = [shuffle_sum_gamma_scale(self.epsilon, self.delta, (lo, hi), calibration)] * m
        else:
            if delta is None:
                raise ValueError("invalid argument `delta`: privacy='shuffle' needs delta in (0, 1)")
            self.delta = float(delta)
            # The shuffler keeps the play order of a whole batch (4 bytes a round).
            check_bytes("horizon", self.horizon, 4 * math.floor(max(self.schedule.lengths)),
                        "the shuffled play order of the longest batch")
            self.batch_epsilons = shuffle_batch_epsilons(self.epsilon, self.delta, self.schedule,  # type: ignore[arg-type]
                                                         shuffle_method)
            scales = [local_laplace_scale(e0, sens) for e0 in self.batch_epsilons]
        if privacy not in ("shuffle", "shuffle-sum") and delta is not None:
            raise ValueError(f"invalid argument `delta`: privacy={privacy!r} is pure (delta = 0); pass delta=None")
        B = (self.d + 1) / 2 if exploration == "core_set" else self.k / self.d
        model = "none" if privacy is None else privacy
        exponents: list[int] = []
        noise: list[NoiseWire] = [("laplace", b) for b in scales] if privacy is not None else []
        if privacy in ("central", "local", "shuffle") and self.sampler == "lattice":
            # Exact discrete Laplace on a lattice, rewards rounded to it: as
            # private per draw as Laplace(b) on the true sensitivity
            # r_max - r_min (lattice_laplace), whichever calibration chose b.
            bound = self.horizon * max(abs(lo), abs(hi))
            lattices = [lattice_laplace(b, hi - lo, value_range=(lo, hi), sum_bound=bound) for b in scales]
            scales = [n.scale for n in lattices]
            exponents = [n.exponent for n in lattices]
            noise = [n.wire() for n in lattices]
        #: Each batch's noise, as the engine gets it (rust/src/py/noise.rs).
        self.noise_wire = tuple(noise)
        self.noise_scales = tuple(scales)
        #: Lattice exponent j of each batch's noise (values are multiples of 2^-j); empty: floating point.
        self.lattice_exponents = tuple(exponents)
        self.gamma_coefficients = tuple(
            gamma_coefficients("central" if model == "shuffle-sum" else model,  # type: ignore[arg-type]
                               self.d, q_i, s, B)
            for q_i, s in zip(self.schedule.lengths, scales, strict=True)
        )
        shuffle_sum = None
        if privacy == "shuffle-sum":
            self._guarantee = shuffle_sum_guarantee(self.epsilon, self.delta, calibration)  # type: ignore[arg-type]
            shuffle_sum = list(shuffle_sum_coefficients(self.epsilon, self.delta))  # type: ignore[arg-type]
        else:
            self._guarantee = elimination_guarantee(
                model, self.epsilon, self.delta, (lo, hi), calibration,  # type: ignore[arg-type]
                self.schedule, self.batch_epsilons, shuffle_method, sampler=self.sampler,
            )
        self._engine = _core.EliminationEngine(
            self.actions, self.horizon, list(self.schedule.lengths),
            [list(c) for c in self.gamma_coefficients], gamma_log_offset(self.horizon),
            "none" if privacy is None else privacy, noise,
            exploration, lo, hi, bounds == "clip", seed_or_none("seed", seed), shuffle_sum,
        )
        if privacy in ("central", "local", "shuffle"):
            self._use_secure(secure, self.sampler)
        elif secure:
            raise ValueError(f"invalid argument `secure`: privacy={privacy!r} has no secure (lattice) noise")
        self._pending = None

    @property
    def privacy(self) -> Guarantee:
        """The guarantee met (see ``calibration``)."""
        return self._secure_guarantee(self._guarantee)

    def __repr__(self) -> str:
        # The action matrix is shown by its shape (K may be in the thousands).
        text = super().__repr__()
        if not isinstance(self._args["actions"], str):
            text = text.replace(repr(self._args["actions"]), f"<{self.k} x {self.d} actions>", 1)
        return text

    @property  # type: ignore[override]
    def _pending(self) -> int | None:
        """The outstanding selection (None: none), held by the bound call."""
        pending: int | None = self._online_pending
        return pending

    @_pending.setter
    def _pending(self, index: int | None) -> None:
        self._online_pending = None if index is None else int(index)

    @property
    def outstanding(self) -> list[int]:
        """The actions selected and not yet updated (at most one: see :meth:`select`)."""
        pending = self._pending
        return [] if pending is None else [pending]

    def select(self, decision_set: ArrayLike | None = None) -> int:
        """Index (row of ``actions``) to play this round. ``decision_set``,
        if given, must be the fixed action set.

        Delayed feedback: refused (StateError) while a selection awaits its
        reward. A batch's pulls are fixed when it starts, but its last
        reward decides the next batch's core set (Hanna et al. Alg. 1 lines
        5-8), and the engine assigns each reward to the batch slot that
        was selected; one selection at a time keeps that assignment exact.
        Feed rewards as they arrive, select again after each."""
        call = self._online()
        return int(call.select() if decision_set is None else call.select(decision_set))

    def _checked_select(self, decision_set: ArrayLike | None = None) -> int:
        ds = None if decision_set is None else float_array("decision_set", decision_set, ndim=2)
        with self.lock:
            pending = self._pending
            if pending is not None:
                raise StateError(
                    f"select() while action {pending} awaits its reward: batched elimination takes one "
                    "selection at a time (its batches end on their last reward); call update first"
                )
            index = int(self._engine.select()) if ds is None else int(self._engine.select_set(ds))
            self._pending = index
        return index

    def update(self, *args: float, policy_version: int | None = None) -> None:
        """``update(reward)``: the reward of the outstanding selection;
        ``update(index, reward)``: the same, naming the action (it must be
        the outstanding one). The protected unit is one reward; it enters
        the batch's (privatized) sum once.

        Rewards of decisions drawn by a served policy
        (``policy_version=v``) are refused (ValueError): a batch plays each
        core-set action exactly n_ia times (Hanna et al. Alg. 1 line 4; the
        released sums and the confidence width gamma_i of the elimination
        step are calibrated for those counts), while the served policy
        draws actions at random in those proportions, so its decisions do
        not fill the batch's schedule. Serve the policy to show the
        current design; feed the learner's own selections."""
        self._online().update(*args, policy_version=policy_version)

    def _checked_update(self, *args: float, policy_version: int | None = None) -> None:
        if policy_version is not None:
            raise ValueError(
                "invalid argument `policy_version`: batched elimination takes the rewards of its own selections "
                "only: each batch plays every core-set action exactly n_ia times (Hanna et al. Alg. 1 line 4) "
                "and its noisy sums and elimination width are calibrated for those counts, which decisions "
                "drawn at random from the served policy do not fill; call select() and update(reward)"
            )
        if len(args) == 1:
            index, reward = None, args[0]
        elif len(args) == 2:
            index, reward = args
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
                raise TypeError(f"invalid argument `index`: expected an int, got {type(index).__name__}")
        else:
            raise TypeError("update takes (reward) or (index, reward)")
        r = reward if type(reward) is float else reward_scalar("reward", reward)
        if not math.isfinite(r):  # clipping would silently turn inf into r_max
            raise ValueError(f"invalid argument `reward`: must be finite, got {reward!r}")
        with self.lock:
            queue = OutstandingIndices(self.outstanding)
            pending = queue.only("reward")
            if index is not None and int(index) != pending:
                raise ValueError(f"invalid argument `index`: the outstanding selection is action {pending}, "
                                 f"got {int(index)}")
            if self._engine.update(pending, r):
                self._warn_first_clip(r)
            self._pending = None

    def _warn_first_clip(self, reward: float, detail: object = None, stacklevel: int = 2) -> None:
        """The warning of the first clipped reward (``stacklevel`` 1: the
        caller; the online call in Rust calls this too)."""
        lo, hi = (float(v) for v in self._args["reward_range"])
        self._warn_clipped(f"reward {reward}", f"reward_range [{lo}, {hi}]", stacklevel + 1)

    @property
    def t(self) -> int:
        """Rounds played so far."""
        return int(self._engine.t)

    @property
    def active(self) -> NDArray[np.uint64]:
        """The surviving set A_i (row indices of ``actions``)."""
        return self._engine.active()

    @property
    def committed(self) -> int | None:
        """The action played to the horizon once the last batch is over."""
        return self._engine.committed

    @property
    def policy_version(self) -> int:
        """The batch index: moves when a batch ends (its released sums
        decide the next surviving set) and when the last batch commits."""
        return int(self._engine.batch_plan()[2])

    def policy(self, seed: int | None = None) -> EliminationPolicy:
        """A read-only, picklable policy of the current batch
        (:class:`dpbandits.serving_sampled.EliminationPolicy`; its
        ``version`` is :attr:`policy_version`): it draws actions with
        probability proportional to their pulls in the batch (the committed
        action after the last batch), with its own generator (``seed``;
        None: operating-system entropy).

        Privacy: the batch's core set and pulls are computed from the
        surviving set A_i alone (Hanna et al. Alg. 1 lines 3-4), which the
        privatized sums of the earlier batches decided, so serving the
        policy, in any thread, process or machine, is post-processing: it
        costs no privacy. The policy's generator is not privacy noise. The
        rewards of actions it serves cannot be fed back: the engine credits
        each reward to the batch slot it selected (see :meth:`select`)."""
        with self.lock:
            support, pulls, batch = self._engine.batch_plan()
            return EliminationPolicy(self.k, support, pulls, self.active, self.committed, batch, seed=seed)

    @property
    def history(self) -> list[dict[str, Any]]:
        """Per finished batch: |A_i|, the core set, pi_i, n_ia, the design
        value (<= 2 rank), gamma_i, the Laplace scale (for
        ``"shuffle-sum"``: the scale in gamma_i, sqrt(180 ln(2/delta)) /
        epsilon, times r_max - r_min under ``"tight"``), the released sums,
        theta_i and |A_{i+1}|."""
        return self._engine.history()  # type: ignore[no-any-return]

    def _factory(self) -> Any:
        return self._engine._factory()


def _epsilon(epsilon: float | None) -> float:
    if epsilon is None:
        raise ValueError("invalid argument `epsilon`: a private model needs epsilon > 0")
    from dpbandits._validation import positive

    return positive("epsilon", epsilon)


def _action_set(
    actions: ArrayLike | str, d: int | None, horizon: int | None, zeta: float | None, max_actions: int
) -> NDArray[np.float64]:
    if zeta is not None:
        from dpbandits._validation import positive

        positive("zeta", zeta)  # also when an explicit action set makes it unused: never silently ignored
    max_actions = positive_int("max_actions", max_actions)
    if isinstance(actions, str):
        if d is None:
            raise ValueError(f"invalid argument `d`: actions={actions!r} needs the dimension d")
        z = 1.0 / horizon if zeta is None else zeta  # type: ignore[operator]
        return zeta_net(actions, d, z, max_actions)  # type: ignore[arg-type]
    arr = float_array("actions", actions, ndim=2)
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"invalid argument `actions`: expected a (K, d) array with K, d >= 1, got {arr.shape}")
    if d is not None and d != arr.shape[1]:
        raise ValueError(f"invalid argument `d`: {d} differs from the actions' dimension {arr.shape[1]}")
    norms = np.linalg.norm(arr, axis=1)
    if np.any(norms > 1.0 + 1e-9):
        i = int(np.argmax(norms))
        raise ValueError(
            f"invalid argument `actions`: row {i} has norm {norms[i]:.6g} > 1 (Assumption 1: ||a|| <= 1)"
        )
    return np.ascontiguousarray(arr)


#: Lower bounds on the cost of one Monte Carlo sample of
#: :func:`expected_best_actions` (a call of a Python function returning an
#: array, its conversion and scoring: about 10 microseconds measured) and
#: on the multiply-add rate, for the work bound of ``n_samples``.
SAMPLE_SECONDS = 5e-6
FLOPS = 1e10


def expected_best_actions(
    thetas: ArrayLike, context_sampler: Callable[[np.random.Generator], ArrayLike], n_samples: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Monte Carlo estimate of g(theta) = E_c[phi(a*(theta, c), c)] for each
    row theta of ``thetas``, a*(theta, c) = argmax_a <phi(a, c), theta>
    (Hanna et al. Sec. III-A; Hanna, Yang & Fragouli 2023).

    ``context_sampler(rng)`` returns one context's feature matrix, shape
    (number of actions, d), row a = phi(a, c). The same ``n_samples``
    contexts serve every theta.
    """
    th = float_array("thetas", thetas, ndim=2)
    n = positive_int("n_samples", n_samples)
    # Each sample calls the Python sampler and scores every action against
    # every theta: at least SAMPLE_SECONDS, and th.size multiply-adds per
    # action (at FLOPS a second).
    per_sample = SAMPLE_SECONDS + th.size / FLOPS
    check_work("n_samples", n, n * per_sample, f"{n} calls of context_sampler, each scored against "
               f"{th.shape[0]} thetas", max(1, int(work_limit()[0] / per_sample)))
    g = np.zeros_like(th)
    for _ in range(n):
        phi = float_array("context_sampler()", context_sampler(rng), ndim=2)
        if phi.shape[1] != th.shape[1]:
            raise ValueError(
                f"invalid argument `context_sampler`: returned features of dimension {phi.shape[1]}, "
                f"expected {th.shape[1]}"
            )
        best = np.argmax(phi @ th.T, axis=0)
        g += phi[best]
    return g / n


class ContextualEliminationBandit(LearnerBase):
    """Contextual linear bandits with a known context distribution through
    batched elimination (Hanna et al. Sec. III-A, Corollary 1; Remark 4
    for the local and shuffle models).

    The learner runs :class:`EliminationLinearBandit` on the action set
    X = {g(theta) : theta in ``thetas``}, g(theta) = E_c[phi(a*(theta, c), c)]
    estimated by Monte Carlo from ``context_sampler`` (``n_samples``
    contexts, drawn with ``sampler_seed``). Each round the server sends
    theta_t (the chosen row of ``thetas``) and the client plays
    a_t = argmax_a <phi(a, c_t), theta_t> on its own context
    (:meth:`client_action`, ties to the lowest index): the context never
    leaves the client, and the rewards are privatized as in the chosen
    model, so the central learner is (epsilon, 0)-joint DP (Corollary 1).

    ``thetas``: a (M, d) array of candidate parameters, or ``"sphere"`` for
    a zeta-net of the unit sphere (with ``zeta``, default 1/T). Other
    arguments as for :class:`EliminationLinearBandit`. Rows g(theta) have
    norm <= 1 when every ||phi(a, c)|| <= 1 (Assumption 1).

    Parameters
    ----------
    thetas:
        A (M, d) array of candidate parameters, or ``"sphere"``.
    context_sampler:
        A function ``rng -> (number of actions, d) array`` of the features
        phi(a, c) of one random context c.
    horizon:
        Number of rounds T, an integer >= 1.
    privacy:
        None (default: no privacy), ``"central"``, ``"local"``, ``"shuffle"``
        or ``"shuffle-sum"``, as :class:`EliminationLinearBandit`.
    epsilon, delta:
        As :class:`EliminationLinearBandit`: epsilon finite and > 0 is required
        with a private model; delta in (0, 1) for the shuffle models.
    d:
        Dimension, needed with ``thetas="sphere"``.
    n_samples:
        Contexts drawn to estimate g, an integer >= 1 (default 1000).
    sampler_seed:
        Seed of those draws (default 0).
    zeta:
        Resolution of the sphere's net, in (0, 1]; None (default) for 1 / T.
    max_actions:
        Largest net size accepted, an integer >= 1.
    seed:
        None (default) or an integer.
    options:
        Further keyword arguments of :class:`EliminationLinearBandit`.
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
    >>> import numpy as np
    >>> import dpbandits as dp
    >>> thetas = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> contexts = lambda rng: rng.uniform(-1, 1, size=(3, 2)) / np.sqrt(2)
    >>> learner = dp.ContextualEliminationBandit(thetas, contexts, horizon=1000, privacy="central",
    ...                                          epsilon=1.0, seed=0)
    >>> i = learner.select(np.array([[0.5, 0.1], [0.1, 0.5], [0.0, 0.0]]))
    >>> learner.update(0.4)
    >>> learner.privacy.model       # joint DP: the context stays with the client (Corollary 1)
    'joint'
    """

    def __init__(
        self,
        thetas: ArrayLike | Literal["sphere"],
        context_sampler: Callable[[np.random.Generator], ArrayLike],
        horizon: int,
        privacy: PrivacyKind | None = None,
        epsilon: float | None = None,
        delta: float | None = None,
        *,
        d: int | None = None,
        n_samples: int = 1000,
        sampler_seed: int = 0,
        zeta: float | None = None,
        max_actions: int = 100_000,
        seed: int | None = None,
        ledger: Ledger | None = None,
        dataset: str | None = None,
        **options: Any,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__", "options")}
        )
        self._args.update(options)
        horizon = positive_int("horizon", horizon, minimum=2)
        if not callable(context_sampler):
            raise TypeError(
                f"invalid argument `context_sampler`: expected a function rng -> features, got {context_sampler!r} "
                "(a learner restored from a checkpoint has none: it cannot spawn)"
            )
        if zeta is not None:
            from dpbandits._validation import positive

            positive("zeta", zeta)
        max_actions = positive_int("max_actions", max_actions)
        if isinstance(thetas, str):
            if d is None:
                raise ValueError(f"invalid argument `d`: thetas={thetas!r} needs the dimension d")
            self.thetas = zeta_net(thetas, d, 1.0 / horizon if zeta is None else zeta, max_actions)  # type: ignore[arg-type]
        else:
            self.thetas = float_array("thetas", thetas, ndim=2)
            if d is not None and d != self.thetas.shape[1]:
                raise ValueError(
                    f"invalid argument `d`: {d!r} differs from the thetas' dimension {self.thetas.shape[1]}"
                )
        self.g = expected_best_actions(self.thetas, context_sampler, n_samples, np.random.default_rng(sampler_seed))
        self.linear = EliminationLinearBandit(
            self.g, horizon, privacy, epsilon, delta, seed=seed, **options
        )
        self.linear._warn_as = (type(self).__name__, 1)  # its clipped-reward warning names this learner
        self.horizon = horizon
        self.d = self.thetas.shape[1]
        self._bind_client()

    @property
    def privacy(self) -> Guarantee:
        """The guarantee of the underlying linear learner (joint DP of
        contexts and rewards in the central model, Corollary 1)."""
        g = self.linear.privacy
        if g.model == "central":
            return Guarantee("joint", g.epsilon, g.delta, protects="contexts and rewards",
                             basis=f"Hanna et al. Corollary 1 with {g.basis}", calibration=g.calibration)
        return g

    @property  # type: ignore[override]
    def _engine(self) -> Any:
        """The linear learner's engine (one engine: a checkpoint restores it there)."""
        return self.linear._engine

    @_engine.setter
    def _engine(self, engine: Any) -> None:
        self.linear._engine = engine
        self._bind_client()

    def _bind_client(self) -> None:
        """Binds ``select`` / ``update`` to a ``_core.ClientCall`` on the
        linear learner's online call (its lock and outstanding selection):
        a round with a float64 feature array and a float reward is one
        Rust call each; other forms reach :meth:`_checked_select` /
        :meth:`_checked_update` under the same lock."""
        call = _core.ClientCall(self.linear._online(), self.thetas, self._checked_select, self._checked_update)
        d = self.__dict__
        d["_client"], d["select"], d["update"] = call, call.select, call.update

    @property
    def lock(self) -> Any:
        """The linear learner's reentrant lock (held by ``select``,
        ``update`` and ``save``; as ``threading.RLock``)."""
        return self.linear.lock

    @property
    def _theta_index(self) -> int | None:
        """The row of ``thetas`` sent to the outstanding round's client
        (the linear learner's outstanding selection)."""
        return self.linear._pending

    @_theta_index.setter
    def _theta_index(self, index: int | None) -> None:
        if index is not None:
            self.linear._pending = index

    def __getstate__(self) -> dict[str, Any]:
        state: dict[str, Any] = super().__getstate__()
        for bound in ("_client", "select", "update", "_theta_index"):
            state.pop(bound, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        index = state.get("_theta_index")
        state = {k: v for k, v in state.items() if k not in ("_client", "select", "update", "_theta_index")}
        super().__setstate__(state)
        self._theta_index = index
        self._bind_client()

    def _checkpoint_extra(self) -> dict[str, Any]:
        return {"pending": self.linear._pending, "theta_index": self._theta_index}

    # A checkpoint cannot hold ``context_sampler`` (code): it stores the
    # thetas and the estimated action set g instead, which is all the
    # learner uses after construction. The restored learner's config shows
    # context_sampler=None (so it cannot ``spawn``).
    def _checkpoint_config(self) -> dict[str, Any]:
        config = {k: v for k, v in self._args.items() if k != "context_sampler"}
        config["thetas"] = np.asarray(self.thetas)
        config["_g"] = np.asarray(self.g)
        config["_linear"] = self.linear._checkpoint_config()
        return config

    @classmethod
    def _from_checkpoint_config(cls, config: Any) -> Any:
        config = dict(config)
        g, linear_config = config.pop("_g", None), config.pop("_linear", None)
        if g is None or not isinstance(linear_config, dict):
            raise ValueError("the checkpoint lacks the action set g of a ContextualEliminationBandit")
        self = cls.__new__(cls)
        self._args = integral_arguments(type(self), {**config, "context_sampler": None})
        self.thetas = float_array("thetas", config["thetas"], ndim=2)
        self.g = float_array("g", g, ndim=2)
        # The linear learner is rebuilt from this learner's own configuration,
        # as __init__ builds it, so the configuration it shows is the one
        # that sets the guarantee; the stored copy must agree with it.
        named = {"thetas", "horizon", "privacy", "epsilon", "delta", "d", "n_samples", "sampler_seed", "zeta",
                 "max_actions", "seed"}
        options = {k: v for k, v in config.items() if k not in named}
        self.linear = EliminationLinearBandit(
            self.g, config["horizon"], config.get("privacy"), config.get("epsilon"), config.get("delta"),
            seed=config.get("seed"), **options,
        )
        self.linear._warn_as = (cls.__name__, 1)
        own = self.linear._checkpoint_config()
        for key in sorted(set(linear_config) | set(own)):
            a, b = linear_config.get(key), own.get(key)
            same = (np.array_equal(np.asarray(a), np.asarray(b)) if key == "actions"
                    else type(a) is type(b) and a == b)
            if not same:
                raise ValueError(
                    f"the checkpoint's linear learner has {key}={a!r}, its own configuration {key}={b!r}"
                )
        self.horizon = self.linear.horizon
        self.d = self.thetas.shape[1]
        self._bind_client()
        return self

    def _restore_extra(self, extra: Any) -> None:
        self.linear._restore_extra(extra)
        self._theta_index = extra.get("theta_index")

    @property
    def t(self) -> int:
        """Rounds played so far."""
        return self.linear.t

    def select_theta(self) -> NDArray[np.float64]:
        """Server side: the parameter theta_t sent to this round's client."""
        with self.lock:
            index: int = self.linear.select()
            return self.thetas[index]

    @property
    def policy_version(self) -> int:
        """The linear learner's batch index (:attr:`EliminationLinearBandit.policy_version`)."""
        return self.linear.policy_version

    def policy(self, seed: int | None = None) -> ContextualEliminationPolicy:
        """A read-only, picklable policy
        (:class:`dpbandits.serving_sampled.ContextualEliminationPolicy`)
        that draws theta as the linear learner's policy draws its action
        (with its own generator, ``seed``) and answers a client's
        ``select(features)`` with :meth:`client_action`.

        Privacy: as :meth:`EliminationLinearBandit.policy`: post-processing
        of the surviving set, no privacy cost; the context stays with the
        client."""
        with self.lock:
            return ContextualEliminationPolicy(self.thetas, self.linear.policy(seed))

    @staticmethod
    def client_action(features: ArrayLike, theta: ArrayLike) -> int:
        """Client side: argmax_a <phi(a, c_t), theta_t> on the client's own
        context features (shape (number of actions, d))."""
        phi = float_array("features", features, ndim=2)
        theta = float_array("theta", theta, ndim=1)
        if phi.shape[0] == 0 or phi.shape[1] != theta.shape[0]:
            raise ValueError(
                f"invalid argument `features`: expected shape (number of actions >= 1, {theta.shape[0]}), "
                f"got {phi.shape}"
            )
        return int(_core.best_row(phi, theta))

    def select(self, features: ArrayLike) -> int:
        """Both sides in one call: theta_t, then the client's action for
        ``features``."""
        return int(self.__dict__["_client"].select(features))

    def _checked_select(self, features: ArrayLike) -> int:
        return self.client_action(features, self.select_theta())

    def update(self, reward: float) -> None:
        """The client's reward for the last selection."""
        self.__dict__["_client"].update(reward)

    def _checked_update(self, reward: float) -> None:
        with self.lock:
            if self._theta_index is None:
                raise StateError("update(reward) needs a preceding select()")
            self.linear.update(reward)

    def _factory(self) -> Any:
        return self.linear._factory()
