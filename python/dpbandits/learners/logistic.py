"""Logistic (generalized linear) contextual bandits: non-private UCB and
Thompson sampling, and the batched information-weighted learner with its
jointly and locally private versions.

Rewards are y in [0, 1] with mean mu(<x, theta*>), mu(z) = 1 / (1 + e^-z):
clicks and conversions (Filippi, Cappé, Garivier & Szepesvári, NeurIPS
2010, Sec. 2; Li, Lu & Zhou, ICML 2017, Sec. 2). The Rust engines are
``rust/src/policy/logistic.rs`` and ``rust/src/policy/reweighted_glm.rs``;
the private construction, its proof and what is reconstructed are in
:mod:`dpbandits.privacy.reweighted_glm`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._validation import epsilon_range, in_open_unit, integral_arguments, positive, positive_int, seed_or_none
from dpbandits.learners.online import OnlineLearner, engine_decision_set
from dpbandits.privacy import Guarantee
from dpbandits.privacy.reweighted_glm import GlmCalibration, glm_calibration, glm_reward_chi, ucb_glm_width
from dpbandits.privacy.secure import sampler_choice

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

__all__ = [
    "JointDPReweightedLogisticUCB",
    "LocalDPReweightedLogisticUCB",
    "LogisticThompsonSampling",
    "LogisticUCB",
    "ReweightedLogisticUCB",
]

#: Largest dimension the engines accept.
MAX_DIM = 1024


def _dimension(d: int) -> int:
    d = positive_int("d", d)
    if d > MAX_DIM:
        raise ValueError(f"invalid argument `d`: must be <= {MAX_DIM}, got {d}")
    return d


def _clip(bounds: str) -> bool:
    if bounds not in ("clip", "error"):
        raise ValueError(f"invalid argument `bounds`: must be 'clip' or 'error', got {bounds!r}")
    return bounds == "clip"


class _LogisticBase(OnlineLearner):
    """What the logistic learners share: rewards in [0, 1], rows of norm <= L."""

    _engine: Any
    horizon: int

    def _declared_bounds(self) -> tuple[float, float]:
        return float(self._engine.noise_parameters()["l"]), 1.0

    def _warn_clipped_pair(self, x: NDArray[np.float64], reward: Any, stacklevel: int) -> None:
        L, _ = self._declared_bounds()
        norm = float(np.linalg.norm(np.asarray(x, dtype=np.float64)))
        what = f"reward {reward}" if not 0.0 <= reward <= 1.0 else f"x with ||x|| = {norm}"
        self._warn_clipped(what, f"bounds ||x|| <= L = {L}, reward in [0, 1]", stacklevel)

    def _warn_clipped_batch(self, xs: NDArray[np.float64], ys: NDArray[np.float64]) -> None:
        L, _ = self._declared_bounds()
        outside = (ys < 0.0) | (ys > 1.0) | (np.linalg.norm(xs, axis=1) > L * (1.0 + 1e-12))
        i = int(np.argmax(outside))
        self._warn_clipped_pair(xs[i], float(ys[i]), 4)

    @property
    def theta(self) -> NDArray[np.float64]:
        """The current estimate of theta*."""
        with self.lock:
            return self._engine.theta()  # type: ignore[no-any-return]


class _OnlineLogistic(_LogisticBase):
    _engine: _core.OnlineLogisticEngine

    def scores(self, decision_set: ArrayLike) -> NDArray[np.float64]:
        """The score of every row of ``decision_set`` (k, d): the UCB index,
        or <x, theta~> of a fresh posterior draw (Thompson sampling)."""
        actions = engine_decision_set(decision_set)
        with self.lock:
            return self._engine.scores(actions)

    def _state(self) -> dict[str, Any]:
        """The engine's theta, A, V^-1 and beta (the caller holds the lock)."""
        return _engine_state(self._engine.to_bytes()) | {"beta": float(self._engine.beta)}

    @property
    def privacy(self) -> Guarantee:
        """No privacy: the exact data are read."""
        return Guarantee.none(f"non-private {type(self).__name__}")


class LogisticUCB(_OnlineLogistic):
    """Non-private UCB for logistic contextual bandits (after UCB-GLM, Li,
    Lu & Zhou 2017, Alg. 1).

    Plays argmax <x, theta_t> + beta_t ||x||_{V_t^-1}, V_t = lambda I +
    sum x x^T, with beta_t = beta_scale (sigma / kappa) sqrt((d / 2)
    ln(1 + 2 t / d) + ln(1 / alpha)) (their Eq. (6); sigma = 1/2 for
    rewards in [0, 1], kappa = mu'(S L) the smallest slope of the link on
    the parameter set). theta_t is the recursive Newton (Laplace)
    approximation of the penalized maximum-likelihood estimate
    (``rust/src/policy/logistic.rs``), which replaces the exact MLE of
    their Alg. 1 (constant work per round); the regularizer replaces
    their initial random exploration. A non-private reference.

    Parameters
    ----------
    d:
        Dimension of the actions, an integer in [1, 1024].
    horizon:
        Number of rounds, an integer >= 1.
    alpha:
        Failure probability of the confidence sets, in (0, 1); None
        (default) for 1 / horizon.
    S, L:
        Bounds on ||theta*|| and ||x||, finite and > 0 (defaults 2 and 1;
        :class:`~dpbandits.envs.logistic.LogisticContextualEnv` has
        ||theta*|| = its ``scale``, 2 by default).
    ridge:
        lambda > 0 (default 1.0).
    beta_scale:
        Factor > 0 on beta_t (default 1.0: the radius of the analysis,
        which explores a lot; smaller values explore less).
    bounds:
        ``"clip"`` (default: rows scaled to norm L, rewards clipped to
        [0, 1]) or ``"error"``.
    seed:
        None (default) or an integer (this learner draws nothing).
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
    >>> learner = dp.LogisticUCB(d=5, horizon=1000, beta_scale=0.1, seed=0)
    >>> env = dp.LogisticContextualEnv(d=5, gap=0.1, seed=0)
    >>> for t in range(1, 201):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.t, learner.privacy.model
    (200, 'none')
    """

    def __init__(
        self,
        d: int,
        horizon: int,
        alpha: float | None = None,
        S: float = 2.0,
        L: float = 1.0,
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
        self.d = _dimension(d)
        self.horizon = positive_int("horizon", horizon)
        alpha_ = 1.0 / self.horizon if alpha is None else in_open_unit("alpha", alpha)
        self._engine = _core.OnlineLogisticEngine(
            self.d, self.horizon, rule="ucb", ridge=positive("ridge", ridge),
            width=ucb_glm_width(positive("S", S), positive("L", L)), log_inv_alpha=math.log(1.0 / alpha_),
            beta_scale=positive("beta_scale", beta_scale), l=L, clip=_clip(bounds), seed=seed_or_none("seed", seed),
        )
        self._pending = None

    def policy(self) -> Any:
        """A read-only, picklable :class:`~dpbandits.serving_linear.LinearUCBPolicy`
        of the UCB-GLM index at the current round: <x, theta_t> + beta_t
        ||x||_{V_t^-1} from this learner's theta_t, V_t^-1 and beta_t, bit
        for bit (``released()`` returns ``("inverse", V_t^-1, theta_t)``).
        This learner is not private: those values are its whole state, all
        of it released to whoever holds the policy. Its scores equal
        :meth:`scores` to rounding (the LinUCB kernels sum in another
        order), so it selects the learner's row except at near ties. Its
        ``version`` is :attr:`policy_version` (every recorded reward)."""
        from dpbandits.serving_linear import LinearUCBPolicy

        with self.lock:
            state = self._state()
            version = self.policy_version
        return LinearUCBPolicy(_linear_policy_engine(state["beta"], state["v_inv"], state["theta"]), version)


class LogisticThompsonSampling(_OnlineLogistic):
    """Non-private Laplace-approximation Thompson sampling for logistic
    contextual bandits (Chapelle & Li 2011, Alg. 3, with the full
    precision matrix).

    Each selection draws theta~ ~ N(theta_t, v^2 A_t^-1) and plays
    argmax <x, theta~>; theta_t and A_t = lambda I + sum mu'(<x, theta>)
    x x^T are the recursive Newton (Laplace) approximation of the
    posterior (``rust/src/policy/logistic.rs``). A non-private reference.

    Parameters
    ----------
    d:
        Dimension of the actions, an integer in [1, 1024].
    horizon:
        Number of rounds, an integer >= 1.
    v:
        Scale > 0 of the posterior draws (default 1.0: the Laplace
        approximation itself).
    L:
        Bound on ||x||, finite and > 0 (default 1).
    ridge:
        lambda > 0, the prior precision (default 1.0).
    bounds:
        ``"clip"`` (default) or ``"error"``.
    seed:
        None (default: operating-system entropy) or an integer (reproducible draws).
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
    >>> learner = dp.LogisticThompsonSampling(d=5, horizon=1000, seed=0)
    >>> env = dp.LogisticContextualEnv(d=5, gap=0.1, seed=0)
    >>> X = [env.decision_set(t) for t in range(1, 4)]
    >>> chosen = learner.select_many(X)
    >>> learner.update_many([X[i][c] for i, c in enumerate(chosen)], [1.0, 0.0, 1.0])
    >>> learner.t
    3
    """

    def __init__(
        self,
        d: int,
        horizon: int,
        v: float = 1.0,
        L: float = 1.0,
        ridge: float = 1.0,
        bounds: Literal["clip", "error"] = "clip",
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        self.d = _dimension(d)
        self.horizon = positive_int("horizon", horizon)
        self._engine = _core.OnlineLogisticEngine(
            self.d, self.horizon, rule="thompson", ridge=positive("ridge", ridge), beta_scale=positive("v", v),
            l=positive("L", L), clip=_clip(bounds), seed=seed_or_none("seed", seed),
        )
        self._pending = None

    def policy(self, seed: int | None = None) -> Any:
        """A read-only, picklable
        :class:`~dpbandits.serving_sampled.LaplacePosteriorPolicy` holding
        this learner's theta_t and precision A_t (bit for bit) and scale v:
        it draws theta~ ~ N(theta_t, v^2 A_t^-1) with its own generator
        (``seed``; None: operating-system entropy), never this learner's,
        so its decisions follow the law of the learner's next one. This
        learner is not private: theta_t and A_t are its whole state, all of
        it released to whoever holds the policy. Its ``version`` is
        :attr:`policy_version` (every recorded reward)."""
        from dpbandits.serving_sampled import LaplacePosteriorPolicy

        with self.lock:
            state = self._state()
            version = self.policy_version
            v = float(self._engine.noise_parameters()["beta_scale"])
        return LaplacePosteriorPolicy(state["theta"], state["a"], v, version, seed=seed)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _floats(data: bytes, pos: int, n: int | None = None) -> tuple[NDArray[np.float64], int]:
    if n is None:
        n, pos = _varint(data, pos)
    end = pos + 8 * n
    return np.frombuffer(data[pos:end], dtype="<f8").astype(np.float64), end


def _engine_state(data: bytes) -> dict[str, Any]:
    """theta, A and V^-1 of an ``OnlineLogisticEngine``'s ``to_bytes()``
    (the version byte, then the postcard encoding of
    ``rust/src/policy/logistic.rs``'s ``OnlineLogistic``: its configuration
    d, horizon, rule, five floats and clip; t; theta; A and V as
    ``RankOneInverse`` (n, the matrix, its inverse, two counters))."""
    if data[:1] != b"\x01":
        raise ValueError("unknown logistic-learner state version")
    d, pos = _varint(data, 1)
    _, pos = _varint(data, pos)  # horizon
    _, pos = _varint(data, pos)  # rule
    pos += 5 * 8 + 1  # ridge, width, log_inv_alpha, beta_scale, l; clip
    _, pos = _varint(data, pos)  # t
    theta, pos = _floats(data, pos)
    out: dict[str, Any] = {"theta": theta}
    for name in ("a", "v"):
        _, pos = _varint(data, pos)  # n
        matrix, pos = _floats(data, pos)
        inverse, pos = _floats(data, pos)
        _, pos = _varint(data, pos)  # updates
        _, pos = _varint(data, pos)  # refactor_every
        out[name], out[f"{name}_inv"] = matrix.reshape(d, d), inverse.reshape(d, d)
    if len(theta) != d:
        raise ValueError("inconsistent logistic-learner state")
    return out


def _varint_bytes(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _linear_policy_engine(beta: float, v_inv: NDArray[np.float64], theta: NDArray[np.float64]) -> Any:
    """The ``LinearPolicyEngine`` of the exact (V^-1, theta) and beta (the
    postcard encoding of ``rust/src/policy/linear_policy.rs``'s
    ``LinearPolicy`` with the ``Inverse`` form, which its loader validates)."""
    d = len(theta)
    flat = np.ascontiguousarray(v_inv, dtype="<f8").ravel()
    data = (_varint_bytes(d) + np.float64(beta).astype("<f8").tobytes() + _varint_bytes(1)
            + _varint_bytes(d * d) + flat.tobytes() + _varint_bytes(d)
            + np.ascontiguousarray(theta, dtype="<f8").tobytes())
    return _core.LinearPolicyEngine.from_bytes(data)


def _first_epoch(first_epoch: int | None, d: int, horizon: int) -> int:
    n0 = 64 * d if first_epoch is None else positive_int("first_epoch", first_epoch)
    return min(n0, horizon)


class _ReweightedLogistic(_LogisticBase):
    _engine: _core.ReweightedGlmEngine

    def ucb(self, decision_set: ArrayLike) -> NDArray[np.float64]:
        """<theta_k, x> + beta_k ||x||_{Lambda_k^-1} for every row (the epoch's UCB)."""
        actions = engine_decision_set(decision_set)
        with self.lock:
            return self._engine.ucb(actions)

    @property
    def releases(self) -> int:
        """Epochs released so far."""
        return int(self._engine.releases)

    @property
    def psd_failures(self) -> int:
        """Releases whose V was not positive definite (the previous estimate kept)."""
        return int(self._engine.psd_failures)


class ReweightedLogisticUCB(_ReweightedLogistic):
    """Non-private batched information-weighted logistic UCB: the learner
    of :class:`JointDPReweightedLogisticUCB` with no noise (its reference).

    Epochs of n_0, 2 n_0, ... recorded rewards; at the end of each, one
    weighted Newton step of the logistic likelihood from the epoch's pilot
    estimate, and the UCB of the next epoch in the geometry of the
    released Fisher information (:mod:`dpbandits.privacy.reweighted_glm`).

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
    S, L:
        Bounds on ||theta*|| (the estimate is projected on that ball) and
        ||x||, finite and > 0 (defaults 2 and 1).
    ridge:
        c_r > 0, the whitened ridge in units of gamma_k (default 1.0).
    beta_scale:
        Factor > 0 on the confidence radius (default 1.0).
    bounds:
        ``"clip"`` (default: rows scaled to norm L, rewards clipped to
        [0, 1]) or ``"error"``.
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
    >>> learner = dp.ReweightedLogisticUCB(d=5, horizon=1000, seed=0)
    >>> env = dp.LogisticContextualEnv(d=5, gap=0.1, seed=0)
    >>> for t in range(1, 401):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.releases  # epochs of 320, 640, ... rewards
    1
    """

    def __init__(
        self,
        d: int,
        horizon: int,
        first_epoch: int | None = None,
        leverage: float = 1.0,
        alpha: float | None = None,
        S: float = 2.0,
        L: float = 1.0,
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
        self.d = _dimension(d)
        self.horizon = positive_int("horizon", horizon)
        self.first_epoch = _first_epoch(first_epoch, self.d, self.horizon)
        if alpha is not None:
            in_open_unit("alpha", alpha)
        self._engine = _core.ReweightedGlmEngine(
            self.d, self.horizon, first_epoch=self.first_epoch, leverage=positive("leverage", leverage),
            model="joint", noise=None, ridge=positive("ridge", ridge),
            reward_chi=glm_reward_chi(self.d, self.horizon, alpha=alpha, first_epoch=self.first_epoch),
            s=positive("S", S), beta_scale=positive("beta_scale", beta_scale), l=positive("L", L),
            clip=_clip(bounds), seed=seed_or_none("seed", seed),
        )
        self._pending = None

    @property
    def privacy(self) -> Guarantee:
        """No privacy: the exact statistics are read."""
        return Guarantee.none("non-private batched information-weighted logistic UCB")


class _PrivateReweightedLogistic(_ReweightedLogistic):
    _model: Literal["joint", "local"]

    def _build(
        self, d: int, horizon: int, epsilon: float, delta: float, first_epoch: int | None, leverage: float,
        alpha: float | None, S: float, L: float, ridge: float, beta_scale: float, bounds: str,
        seed: int | None, sampler: str, secure: bool,
    ) -> None:
        self.d = _dimension(d)
        self.horizon = positive_int("horizon", horizon)
        self.epsilon = positive("epsilon", epsilon)
        self.delta = in_open_unit("delta", delta)
        self.sampler = sampler_choice(sampler)
        self.first_epoch = _first_epoch(first_epoch, self.d, self.horizon)
        try:
            self.calibration: GlmCalibration = glm_calibration(
                self.d, self.horizon, self.epsilon, self.delta, model=self._model, alpha=alpha,
                first_epoch=self.first_epoch, sampler=self.sampler,
            )
        except (OverflowError, ZeroDivisionError):
            raise ValueError(
                f"invalid arguments: the calibration overflows for epsilon={epsilon!r}, delta={delta!r}"
            ) from None
        c = self.calibration
        if not (math.isfinite(c.op_bound) and math.isfinite(c.chi_bound)):
            raise ValueError(f"invalid argument `epsilon`: {epsilon!r} gives a noise too large to use")
        self._engine = _core.ReweightedGlmEngine(
            self.d, self.horizon, first_epoch=self.first_epoch, leverage=positive("leverage", leverage),
            model=self._model, noise=c.wire(), op_bound=c.op_bound, chi_bound=c.chi_bound,
            ridge=positive("ridge", ridge), reward_chi=c.reward_chi, s=positive("S", S),
            beta_scale=positive("beta_scale", beta_scale), l=positive("L", L), clip=_clip(bounds),
            seed=seed_or_none("seed", seed),
        )
        self._use_secure(secure, self.sampler)
        self._pending = None

    @property
    def privacy(self) -> Guarantee:
        """(epsilon, delta)-DP of every user's (context, reward), joint or local."""
        return self._secure_guarantee(self.calibration.guarantee)

    @property
    def last_release(self) -> NDArray[np.float64]:
        """The last epoch's released statistic (exact lattice values; empty before the first)."""
        with self.lock:
            return self._engine.last_release()




class JointDPReweightedLogisticUCB(_PrivateReweightedLogistic):
    """Jointly differentially private batched information-weighted
    logistic UCB (after Chen, Li, Rakhlin & Simchi-Levi 2025, arXiv
    2502.13115).

    Each epoch's weighted Hessian and gradient statistic at the pilot
    estimate (m = d (d + 1) / 2 + d entries, L2 sensitivity sqrt(5)) is
    released once with i.i.d. Gaussian noise calibrated on the exact
    (epsilon, delta) curve; each reward enters one epoch, so the learner
    is (epsilon, delta)-jointly DP (proof, and what is reconstructed:
    :mod:`dpbandits.privacy.reweighted_glm`). Exact discrete Gaussian
    noise on a lattice by default, for every delta in (0, 1). Decisions
    read only released values.

    Before the first release the learner plays a row uniformly at random
    (as :class:`ReweightedLogisticUCB`: the prior's UCB ties across rows;
    a seeded stream of its own, not the noise generator; no data read, no
    privacy cost).

    Parameters
    ----------
    d:
        Dimension of the actions, an integer in [1, 1024].
    horizon:
        Number of rounds, an integer >= 1.
    epsilon, delta:
        The (epsilon, delta) to meet: epsilon finite and > 0, delta in (0, 1).
    first_epoch:
        n_0, an integer >= 1; None (default) for 64 d (capped at the horizon).
    leverage:
        c > 0 in gamma_k = c d / n_k (default 1.0).
    alpha:
        Failure probability of the confidence sets, in (0, 1); None
        (default) for 1 / horizon.
    S, L:
        Bounds on ||theta*|| (the estimate is projected on that ball) and
        ||x||, finite and > 0 (defaults 2 and 1). The privacy proof needs
        ||x|| <= L and rewards in [0, 1]: inputs outside are clipped or refused.
    ridge:
        c_r > 0, the whitened ridge in units of gamma_k beyond the noise's
        operator-norm bound (default 1.0).
    beta_scale:
        Factor > 0 on the confidence radius (default 1.0). It changes the
        regret, never the privacy guarantee.
    bounds:
        ``"clip"`` (default) or ``"error"``.
    seed:
        None (default: noise keyed by the operating system) or an integer
        (reproducible noise, research only). Restores and copies re-key the
        noise unless replayed (:func:`dpbandits.research_replay`).
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
    >>> learner = dp.JointDPReweightedLogisticUCB(d=5, horizon=1000, epsilon=1.0, delta=1e-6, seed=0)
    >>> env = dp.LogisticContextualEnv(d=5, gap=0.1, seed=0)
    >>> for t in range(1, 401):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.releases
    1
    >>> print(learner.privacy)  # doctest: +ELLIPSIS
    (1, 1e-06)-joint DP of contexts and rewards [Chen, Li, Rakhlin & Simchi-Levi 2025 ...; exact lattice noise]
    """

    _model = "joint"

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
        S: float = 2.0,
        L: float = 1.0,
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
        self._build(d, horizon, epsilon, delta, first_epoch, leverage, alpha, S, L, ridge, beta_scale, bounds,
                    seed, sampler, secure)


class LocalDPReweightedLogisticUCB(_PrivateReweightedLogistic):
    """Locally differentially private batched information-weighted
    logistic UCB (the local-model counterpart of
    :class:`JointDPReweightedLogisticUCB`, after Chen, Li, Rakhlin &
    Simchi-Levi 2025, arXiv 2502.13115).

    Each user plays the released policy on their own context and reports
    their contribution to the epoch's weighted Hessian and gradient
    statistic with their own i.i.d. Gaussian noise (the same sigma as the
    joint learner's, calibrated on the exact (epsilon, delta) curve); the
    server sums the reports. (epsilon, delta)-local DP of every user's
    context and reward (:mod:`dpbandits.privacy.reweighted_glm`); the sums
    carry n_k noise draws, so the regret's privacy term grows like
    sqrt(T) / epsilon instead of 1 / epsilon.

    Before the first release the learner plays a row uniformly at random
    (as :class:`ReweightedLogisticUCB`: the prior's UCB ties across rows;
    a seeded stream of its own, not the noise generator; no data read, no
    privacy cost).

    Parameters
    ----------
    d:
        Dimension of the actions, an integer in [1, 1024].
    horizon:
        Number of rounds, an integer >= 1.
    epsilon, delta:
        The (epsilon, delta) to meet: epsilon finite and > 0, delta in (0, 1).
    first_epoch:
        n_0, an integer >= 1; None (default) for 64 d (capped at the horizon).
    leverage:
        c > 0 in gamma_k = c d / n_k (default 1.0).
    alpha:
        Failure probability of the confidence sets, in (0, 1); None
        (default) for 1 / horizon.
    S, L:
        Bounds on ||theta*|| (the estimate is projected on that ball) and
        ||x||, finite and > 0 (defaults 2 and 1). The privacy proof needs
        ||x|| <= L and rewards in [0, 1]: inputs outside are clipped or refused.
    ridge:
        c_r > 0, the whitened ridge in units of gamma_k beyond the noise's
        operator-norm bound (default 1.0).
    beta_scale:
        Factor > 0 on the confidence radius (default 1.0). It changes the
        regret, never the privacy guarantee.
    bounds:
        ``"clip"`` (default) or ``"error"``.
    seed:
        None (default: noise keyed by the operating system) or an integer
        (reproducible noise, research only). Restores and copies re-key the
        noise unless replayed (:func:`dpbandits.research_replay`).
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
    >>> learner = dp.LocalDPReweightedLogisticUCB(d=5, horizon=1000, epsilon=1.0, delta=1e-6, seed=0)
    >>> env = dp.LogisticContextualEnv(d=5, gap=0.1, seed=0)
    >>> for t in range(1, 401):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.privacy.model, learner.releases
    ('local', 1)
    """

    _model = "local"

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
        S: float = 2.0,
        L: float = 1.0,
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
        self._build(d, horizon, epsilon, delta, first_epoch, leverage, alpha, S, L, ridge, beta_scale, bounds,
                    seed, sampler, secure)
