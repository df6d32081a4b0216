"""Serving the learners whose decisions are draws from released state.

EXP2, batched EXP3, SCRiBLe, FTRL / FTPL, batched elimination, the
private experts learners and logistic Thompson sampling decide by drawing from a distribution (or a
schedule) that is a function of what they have already released: the
privatized losses, the released tree sums, the surviving set of
elimination, the experts released at a batch's end (for the non-private
:class:`dpbandits.LogisticThompsonSampling`, whose whole state is
released, its Laplace-approximation posterior). ``learner.policy()``
freezes that distribution in one of the policies below. A policy holds no
exact statistic and none of the learner's generators: it draws with its
own generator (``seed``; None: operating-system entropy), so its draws are
samples from the same law as the learner's next decision, not the
learner's own draws. Computing decisions from it, anywhere and as often
as wanted, is post-processing of released values: it costs no privacy.
The policy's generator is not privacy noise: copies of a policy (pickles,
threads) that draw alike leak nothing.

Every policy is read-only, thread-safe and picklable, answers ``select``
and ``select_many``, and carries the ``version`` (the learner's
``policy_version`` when it was taken); refresh it when
``learner.policy_version`` moves past ``policy.version``.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.errors import StateError

__all__ = ["BAIPolicy", "ContextualEliminationPolicy", "DikinPolicy", "DistributionPolicy", "EliminationPolicy",
           "LaplacePosteriorPolicy", "LeaderPolicy", "PointPolicy"]


def _count(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"invalid argument `n`: must be an integer >= 0, got {n!r}")
    return int(n)


def _frozen(values: ArrayLike, dtype: Any = np.float64) -> NDArray[Any]:
    out = np.array(values, dtype=dtype, copy=True)
    out.setflags(write=False)
    return out


class _Sampling:
    """A policy's own generator (never the learner's), behind a lock."""

    def __init__(self, seed: int | None) -> None:
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()

    def _uniform(self, n: int | None = None) -> Any:
        with self._lock:
            return self._rng.random() if n is None else self._rng.random(n)

    def reseed(self, seed: int | None = None) -> None:
        """Draws from a new generator (``seed``; None: operating-system entropy)."""
        with self._lock:
            self._rng = np.random.default_rng(seed)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


class DistributionPolicy(_Sampling):
    """Draws index i with probability ``probabilities[i]`` (inverse CDF of
    one uniform, the first i whose cumulative weight exceeds it, as the
    engines draw). ``k``: the number of indices; ``version``: the learner's
    ``policy_version`` when taken."""

    def __init__(self, probabilities: ArrayLike, version: int, *, seed: int | None = None) -> None:
        super().__init__(seed)
        self.probabilities = _frozen(probabilities)
        self.version = int(version)
        self._cdf = np.cumsum(self.probabilities)
        positive = np.flatnonzero(self.probabilities > 0.0)
        # Rounding: the weights sum to 1 - O(eps); a uniform above the sum
        # takes the last index with positive weight, as the engines do.
        self._last = int(positive[-1]) if len(positive) else 0

    @property
    def k(self) -> int:
        """Number of indices (arms, experts)."""
        return len(self.probabilities)

    def _index(self, u: Any) -> Any:
        i = np.searchsorted(self._cdf, u, side="right")
        return np.where(i >= self.k, self._last, i)

    def select(self) -> int:
        """One index drawn from ``probabilities``."""
        return int(self._index(self._uniform()))

    def select_many(self, n: int) -> NDArray[np.int64]:
        """``n`` independent draws (an int64 array)."""
        return np.asarray(self._index(self._uniform(_count(n))), dtype=np.int64)


class BAIPolicy(DistributionPolicy):
    """The sampling rule of a best-arm identification learner
    (:meth:`dpbandits.learners.bai.BestArmIdentifier.policy`): draws arm i
    with probability ``probabilities[i]`` (uniform over the arms without a
    release before every arm has one; then the leader probability on the
    leader and the rest on the challenger), and carries the learner's
    ``recommendation`` (None before every arm has a release) and
    ``should_stop`` when it was taken."""

    def __init__(self, probabilities: ArrayLike, version: int, *, recommendation: int | None,
                 should_stop: bool, seed: int | None = None) -> None:
        super().__init__(probabilities, version, seed=seed)
        self.recommendation = None if recommendation is None else int(recommendation)
        self.should_stop = bool(should_stop)


class LeaderPolicy(DistributionPolicy):
    """The decision x_t of a follow-the-leader learner (FTRL, FTPL):
    :meth:`decision` returns it; on the simplex, ``select`` draws an
    index from it (its expected loss is <l_t, x_t>); on the ball and the
    cube the decision is a point and ``select`` raises StateError."""

    def __init__(self, decision: ArrayLike, geometry: str, version: int, *, seed: int | None = None) -> None:
        x = _frozen(decision)
        super().__init__(x if geometry == "simplex" else np.zeros(len(x)), version, seed=seed)
        self.geometry = geometry
        self._decision = x

    def decision(self) -> NDArray[np.float64]:
        """x_t (a copy)."""
        return self._decision.copy()

    def select(self) -> int:
        """An index drawn from x_t (simplex only)."""
        self._simplex()
        return super().select()

    def select_many(self, n: int) -> NDArray[np.int64]:
        """``n`` indices drawn from x_t (simplex only)."""
        self._simplex()
        return super().select_many(n)

    def _simplex(self) -> None:
        if self.geometry != "simplex":
            raise StateError(f"a {self.geometry} learner plays points: use decision()")


class PointPolicy:
    """A point the learner plays until its next release (``version``):
    ``select`` returns it, ``select_many(n)`` n copies (shape (n, N))."""

    def __init__(self, point: ArrayLike, version: int) -> None:
        self.point = _frozen(point)
        self.version = int(version)

    def select(self) -> NDArray[np.float64]:
        """The point (a copy)."""
        return self.point.copy()

    def select_many(self, n: int) -> NDArray[np.float64]:
        """``n`` copies of the point."""
        return np.tile(self.point, (_count(n), 1))


class DikinPolicy(_Sampling):
    """SCRiBLe's exploration at the iterate x_t (Abernethy, Hazan & Rakhlin
    2012, Alg. 1 lines 5-7, with the unit ball's barrier -log(1 - ||x||^2)):
    y = x_t + s lambda_i^{-1/2} e_i, for an eigenvector e_i of the barrier's
    Hessian at x_t (i uniform in 0..N-1) and a sign s uniform in {-1, +1};
    the eigenbasis is the Householder reflection that maps the first unit
    vector to x_t / ||x_t||, as the engine builds it (column 0 radial,
    eigenvalue 2 (1 + r^2) / (1 - r^2)^2; the others tangent, 2 / (1 - r^2)),
    so the 2N points of :meth:`support` are the engine's, each drawn with
    probability 1 / (2N)."""

    def __init__(self, iterate: ArrayLike, version: int, *, seed: int | None = None) -> None:
        super().__init__(seed)
        self.iterate = _frozen(iterate)
        self.version = int(version)

    @property
    def n(self) -> int:
        """Dimension N of the ball."""
        return len(self.iterate)

    def _points(self, index: NDArray[np.int64], sign: NDArray[np.float64]) -> NDArray[np.float64]:
        x, n = self.iterate, self.n
        r2 = float(np.sum(x * x))
        r, s = np.sqrt(r2), 1.0 - r2
        eye = np.eye(n)[index]
        if r == 0.0:
            direction, eigenvalue = eye, np.full(len(index), 2.0)
        else:
            v = -(x / r)
            v[0] += 1.0
            vv = float(np.sum(v * v))
            direction = eye - 2.0 * v[None, :] * v[index, None] / vv if vv > 1e-24 else eye
            eigenvalue = np.where(index == 0, 2.0 * (1.0 + r2) / (s * s), 2.0 / s)
        step = sign / np.sqrt(eigenvalue)
        return x[None, :] + step[:, None] * direction  # type: ignore[no-any-return]

    def support(self) -> NDArray[np.float64]:
        """The 2N points y (shape (2N, N)): direction i = 0..N-1 with sign
        +1, then the same with sign -1."""
        index = np.tile(np.arange(self.n), 2)
        return self._points(index, np.repeat([1.0, -1.0], self.n))

    def select(self) -> NDArray[np.float64]:
        """One point y (shape (N,))."""
        return self.select_many(1)[0]

    def select_many(self, n: int) -> NDArray[np.float64]:
        """``n`` independent points (shape (n, N))."""
        u = self._uniform(2 * _count(n)).reshape(-1, 2)
        index = np.minimum((u[:, 0] * self.n).astype(np.int64), self.n - 1)
        return self._points(index, np.where(u[:, 1] < 0.5, 1.0, -1.0))


class EliminationPolicy(DistributionPolicy):
    """Batched elimination's current batch (Hanna et al. Alg. 1 lines 3-4):
    the core set C_i of the surviving set A_i and the pulls
    ceil(pi_i(a) q^i) of each, both fixed from A_i alone when the batch
    starts; ``select`` draws an action (a row of the action set) with
    probability proportional to its pulls in the batch, so a served stream
    plays the batch's design in expectation. After the last batch it
    returns the committed action. ``active``: A_i; ``batch``: the batch
    index (the version)."""

    def __init__(self, k: int, support: ArrayLike, pulls: ArrayLike, active: ArrayLike, committed: int | None,
                 version: int, *, seed: int | None = None) -> None:
        weights = np.zeros(int(k))
        self.support = _frozen(support, np.int64)
        self.pulls = _frozen(pulls, np.int64)
        self.active = _frozen(active, np.int64)
        self.committed = committed
        if committed is None:
            weights[self.support] = self.pulls / max(int(np.sum(self.pulls)), 1)
        else:
            weights[int(committed)] = 1.0
        super().__init__(weights, version, seed=seed)


class ContextualEliminationPolicy(_Sampling):
    """The server side of :class:`dpbandits.ContextualEliminationBandit`
    from its linear learner's :class:`EliminationPolicy`: ``select_theta``
    draws theta (a row of ``thetas``) as that policy draws its action;
    ``select(features)`` is the client's action for it,
    argmax_a <phi(a, c), theta> (ties to the lowest index)."""

    def __init__(self, thetas: ArrayLike, plan: EliminationPolicy) -> None:
        super().__init__(None)
        self.thetas = _frozen(thetas)
        self.plan = plan
        self.version = plan.version

    def select_theta(self) -> NDArray[np.float64]:
        """theta_t for one client."""
        return self.thetas[self.plan.select()].copy()  # type: ignore[no-any-return]

    def select(self, features: ArrayLike) -> int:
        """The client's action on its own context features (shape (actions, d))."""
        phi = np.asarray(features, dtype=np.float64)
        if phi.ndim != 2 or phi.shape[1] != self.thetas.shape[1]:
            raise ValueError(f"invalid argument `features`: expected shape (actions, {self.thetas.shape[1]}), "
                             f"got {phi.shape}")
        return int(np.argmax(phi @ self.select_theta()))

    def select_many(self, features: ArrayLike) -> NDArray[np.int64]:
        """The actions of n clients (features of shape (n, actions, d)), each with its own theta draw."""
        phi = np.asarray(features, dtype=np.float64)
        if phi.ndim != 3 or phi.shape[2] != self.thetas.shape[1]:
            raise ValueError(f"invalid argument `features`: expected shape (n, actions, {self.thetas.shape[1]}), "
                             f"got {phi.shape}")
        thetas = self.thetas[self.plan.select_many(phi.shape[0])]
        return np.argmax(np.einsum("nad,nd->na", phi, thetas), axis=1).astype(np.int64)  # type: ignore[no-any-return]


class LaplacePosteriorPolicy(_Sampling):
    """Laplace-approximation Thompson sampling from a frozen posterior
    (Chapelle & Li 2011, Alg. 3, with the full precision matrix), as
    :class:`dpbandits.LogisticThompsonSampling` selects: each decision
    draws theta~ = theta + v C^-T z (A = C C^T, z standard normal), so
    theta~ ~ N(theta, v^2 A^-1), and plays the row x of its decision set
    with the largest <x, theta~> (the first of ties). ``theta`` and
    ``precision`` (A) are the learner's, bit for bit; the draws come from
    the policy's own generator, so they follow the law of the learner's
    next decision, not its own draws."""

    def __init__(self, theta: ArrayLike, precision: ArrayLike, v: float, version: int, *,
                 seed: int | None = None) -> None:
        super().__init__(seed)
        self.theta = _frozen(theta)
        d = len(self.theta)
        self.precision = _frozen(precision).reshape(d, d)
        self.v = float(v)
        self.version = int(version)
        try:
            self._chol = np.linalg.cholesky(self.precision)
        except np.linalg.LinAlgError:
            raise ValueError("invalid argument `precision`: must be positive definite") from None

    @property
    def d(self) -> int:
        """Feature dimension."""
        return len(self.theta)

    def draw(self, n: int) -> NDArray[np.float64]:
        """``n`` posterior draws theta~ (shape (n, d))."""
        count = _count(n)
        with self._lock:
            z = self._rng.standard_normal((count, self.d))
        w = np.linalg.solve(self._chol.T, z.T).T if count else z  # rows C^-T z ~ N(0, A^-1)
        return self.theta[None, :] + self.v * w  # type: ignore[no-any-return]

    def _sets(self, decision_sets: ArrayLike, ndim: int) -> NDArray[np.float64]:
        sets = np.asarray(decision_sets, dtype=np.float64)
        if sets.ndim != ndim or sets.shape[-1] != self.d or sets.shape[-2] < 1 or not np.all(np.isfinite(sets)):
            shape = "(k, d)" if ndim == 2 else "(n, k, d)"
            raise ValueError(f"invalid argument `decision_set{'s' if ndim == 3 else ''}`: must be a finite "
                             f"{shape} array with d = {self.d} and k >= 1, got shape {sets.shape}")
        return sets

    def select(self, decision_set: ArrayLike) -> int:
        """The row of ``decision_set`` (shape (k, d)) with the largest
        <x, theta~> for one fresh draw theta~."""
        sets = self._sets(decision_set, 2)
        return int(np.argmax(sets @ self.draw(1)[0]))

    def select_many(self, decision_sets: ArrayLike) -> NDArray[np.int64]:
        """:meth:`select` on each set of ``decision_sets`` (shape (n, k, d)),
        one draw per set."""
        sets = self._sets(decision_sets, 3)
        thetas = self.draw(sets.shape[0])
        return np.argmax(np.einsum("nkd,nd->nk", sets, thetas), axis=1).astype(np.int64)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"LaplacePosteriorPolicy(d={self.d}, v={self.v!r}, version={self.version})"
