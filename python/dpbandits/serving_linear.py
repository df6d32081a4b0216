"""Serving a contextual linear learner's decisions from released values.

``learner.policy()`` returns a read-only policy frozen from what the
learner has already released: for the LinUCB family (Shariff & Sheffet
2018, Alg. 1 and Eq. (1)) the released, regularised Gram matrix V_t and
vector u~_t of the current round (the noisy ones for the private learners:
the tree's or the users' released sums plus the shift; V_t^{-1} and
theta_t for the non-private :class:`dpbandits.LinUCB`; for the
non-private :class:`dpbandits.LogisticUCB`, whose whole state is released,
the V_t^{-1} and theta_t of its UCB-GLM index) and the confidence width
beta_t; for Mishra & Thakurta's learners the released (A~, b~).
Nothing else of the learner (no exact sum, no generator) is in it, so
computing decisions from it, anywhere and as often as wanted, is
post-processing: it costs no privacy.

A policy answers ``select(decision_set)`` and ``select_many(decision_sets)``
as the learner would at the round it was taken (the LinUCB family bit for
bit: the same kernels score the same released values; LogisticUCB to
rounding of its index, so except at near ties). It pickles, so it
can be shipped to other threads, processes or machines; ``version`` is the
learner's ``policy_version`` when it was taken. A serving process refreshes
its policy when ``learner.policy_version`` moves past ``policy.version``.

Before a learner's first release (:class:`dpbandits.JointDPLinUCB` with
``counter="epoch"`` before its first epoch ends, the batched reweighted
learners before theirs) the policy holds the prior (V a multiple of the
identity, u~ = 0), whose UCBs tie across rows up to the rounding of
||x||: the policy plays their first maximum, while the learner plays a
row uniformly at random from a stream of its own (a policy holds no
generator). From the first release on, both play the first maximum of
the same scores.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._validation import float_array, non_negative

__all__ = ["LinearUCBPolicy", "MishraThakurtaPolicy"]

_FLOAT64 = np.dtype(np.float64)


def _sets(decision_sets: ArrayLike) -> NDArray[np.float64]:
    if type(decision_sets) is np.ndarray and decision_sets.dtype == _FLOAT64:
        return decision_sets
    return float_array("decision_sets", decision_sets, finite=False)


class LinearUCBPolicy:
    """UCB(x) = <theta~, x> + beta ||x||_{V^{-1}} from a LinUCB-type
    learner's released (V, u~) and beta (module docstring). Thread-safe;
    picklable; read-only."""

    def __init__(self, engine: _core.LinearPolicyEngine, version: int) -> None:
        self._engine = engine
        self.version = int(version)
        self._lock = threading.Lock()

    @property
    def d(self) -> int:
        """Feature dimension."""
        return int(self._engine.d)

    @property
    def beta(self) -> float:
        """The confidence width of the policy's round."""
        return float(self._engine.beta)

    @property
    def theta(self) -> NDArray[np.float64]:
        """theta~ = V^{-1} u~."""
        with self._lock:
            return self._engine.theta()

    def released(self) -> tuple[str, NDArray[np.float64], NDArray[np.float64]]:
        """``("released", V, u~)`` or, for the non-private LinUCB,
        ``("inverse", V^{-1}, theta)``: everything the policy holds besides beta."""
        return self._engine.released()  # type: ignore[no-any-return]

    def scores(self, decision_set: ArrayLike) -> NDArray[np.float64]:
        """The UCB of every row of ``decision_set`` (shape (k, d))."""
        with self._lock:
            return self._engine.scores(_sets(decision_set))

    def select(self, decision_set: ArrayLike) -> int:
        """The row of ``decision_set`` (shape (k, d)) with the largest UCB
        (the first of ties), as the learner selects (before the learner's
        first release, which it plays uniformly at random: module docstring)."""
        with self._lock:
            return int(self._engine.select(_sets(decision_set)))

    def select_many(self, decision_sets: ArrayLike) -> NDArray[np.int64]:
        """:meth:`select` on each set of ``decision_sets`` (shape (n, k, d)),
        in Rust with the GIL released."""
        with self._lock:
            chosen, error = self._engine.select_many(_sets(decision_sets))
        if error is not None:
            raise error
        return chosen

    def __getstate__(self) -> dict[str, Any]:
        return {"engine": self._engine, "version": self.version}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._engine = state["engine"]
        self.version = int(state["version"])
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LinearUCBPolicy(d={self.d}, version={self.version}, beta={self.beta!r})"


class MishraThakurtaPolicy:
    """Mishra & Thakurta's contextual UCB or Thompson sampling (App. D.2
    Alg. 3, App. D.3 Alg. 4, with the readings of
    :mod:`dpbandits.learners.mishra_thakurta`) from the released
    (A~, b~): when A~ is positive definite, UCB plays argmax z^T A~^-1 b~ +
    alpha sqrt(z^T A~^-1 z) and Thompson sampling argmax z^T mu~ with
    mu~ ~ N(A~^-1 b~, alpha A~^-1); otherwise the fallback branch (z^T b~ +
    alpha ||z||, resp. mu~ ~ N(b~, alpha I)). Thompson draws come from the
    policy's own generator (``seed``): sampling is post-processing too.
    Scores are computed with NumPy, so they equal the learner's to rounding
    (the selected row agrees except at near ties)."""

    def __init__(
        self, rule: str, alpha: float, a: NDArray[np.float64], b: NDArray[np.float64], version: int,
        seed: int | None = None,
    ) -> None:
        if rule not in ("ucb", "thompson"):
            raise ValueError(f"invalid argument `rule`: must be 'ucb' or 'thompson', got {rule!r}")
        self.rule = rule
        self.alpha = non_negative("alpha", alpha)
        self._a = np.array(a, dtype=np.float64)
        self._b = np.array(b, dtype=np.float64)
        self.version = int(version)
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        try:
            self._chol: NDArray[np.float64] | None = np.asarray(np.linalg.cholesky(self._a), dtype=np.float64)
        except np.linalg.LinAlgError:
            self._chol = None
        self._mu = self._b.copy() if self._chol is None else np.linalg.solve(self._a, self._b)

    @property
    def d(self) -> int:
        """Feature dimension."""
        return int(self._b.shape[0])

    def released(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The released (A~, b~) the policy reads."""
        return self._a.copy(), self._b.copy()

    def scores(self, decision_set: ArrayLike) -> NDArray[np.float64]:
        """The score of every row of ``decision_set`` (one Thompson draw per call)."""
        z = float_array("decision_set", decision_set, ndim=2)
        if z.shape[1] != self.d or z.shape[0] < 1:
            raise ValueError(f"invalid argument `decision_set`: expected shape (k, {self.d}) with k >= 1, "
                             f"got {z.shape}")
        if self.rule == "ucb":
            if self._chol is None:
                width = np.sqrt((z * z).sum(axis=1))
            else:
                w = np.linalg.solve(self._chol, z.T)
                width = np.sqrt(np.maximum((w * w).sum(axis=0), 0.0))
            return z @ self._mu + self.alpha * width  # type: ignore[no-any-return]
        with self._lock:
            draw = self._rng.standard_normal(self.d)
        if self._chol is not None:
            draw = np.linalg.solve(self._chol.T, draw)  # L^-T g ~ N(0, A~^-1)
        return z @ (self._mu + np.sqrt(self.alpha) * draw)  # type: ignore[no-any-return]

    def select(self, decision_set: ArrayLike) -> int:
        """The row with the largest score (the first of ties)."""
        return int(np.argmax(self.scores(decision_set)))

    def select_many(self, decision_sets: ArrayLike) -> NDArray[np.int64]:
        """:meth:`select` on each set of ``decision_sets`` (shape (n, k, d))."""
        sets = float_array("decision_sets", decision_sets, ndim=3)
        return np.array([self.select(s) for s in sets], dtype=np.int64)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MishraThakurtaPolicy(rule={self.rule!r}, d={self.d}, version={self.version})"
