"""Core sets: approximately G-optimal designs by Frank–Wolfe.

Batched elimination (Hanna, Girgis, Fragouli & Diggavi, Alg. 1-3) plays,
in batch i, only the actions of a *core set* C_i with a distribution pi_i
such that every action a of the current set satisfies

    ||a||^2_{V(pi)^{-1}} <= 2d,   V(pi) = sum_{a in C} pi(a) a a^T

(Lemma 2, Eq. 5), and pulls each a in C exactly n_a = ceil(pi(a) q^i) times
(Alg. 1, line 7; :meth:`CoreSet.pulls`). Few distinct actions mean few
noisy reward sums, which is where the privacy comes almost for free.

:func:`core_set` computes one with the Frank–Wolfe algorithm of App. A
(uniform start, exact line-search step), then reduces its support to at
most d(d+1)/2 actions, the Kiefer–Wolfowitz bound (Lattimore &
Szepesvári, *Bandit Algorithms*, Ch. 21, Thm. 21.1). The arithmetic runs
in Rust (``rust/src/design.rs``) without the GIL.

Example
-------
>>> import numpy as np
>>> from dpbandits.design import core_set
>>> cs = core_set(np.eye(4))
>>> cs.support.tolist(), cs.weights.tolist(), cs.value
([0, 1, 2, 3], [0.25, 0.25, 0.25, 0.25], 4.0)
>>> cs.pulls(10).tolist()
[3, 3, 3, 3]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._validation import float_array, positive, positive_int

__all__ = ["DEFAULT_MAX_ITER", "CoreSet", "core_set"]

DEFAULT_MAX_ITER = 10_000
"""Default bound on Frank-Wolfe steps (same as the Rust core)."""


@dataclass(frozen=True, eq=False)
class CoreSet:
    """A design over a subset of the actions (Hanna et al., Lemma 2).

    Attributes
    ----------
    support:
        Row indices (into the ``actions`` given to :func:`core_set`) of the
        actions with positive weight, increasing; int64, read-only.
    weights:
        pi(a) for each index of ``support``: positive, summing to 1;
        float64, read-only.
    value:
        max over *all* actions of ||a||^2_{V(pi)^{-1}}, computed afresh from
        ``weights``; at most ``stop_at``, and at least d for every design.
    iterations:
        Frank–Wolfe steps taken.
    stop_at:
        The threshold the design was computed for (2d unless given).
    """

    support: NDArray[np.int64]
    weights: NDArray[np.float64]
    value: float
    iterations: int
    stop_at: float

    def __post_init__(self) -> None:
        for name in ("support", "weights"):
            arr = np.array(getattr(self, name), copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def pulls(self, q: float) -> NDArray[np.int64]:
        """Pull counts n_a = ceil(pi(a) q), aligned with ``support``
        (Hanna et al., Alg. 1, line 7, with q = q^i the nominal batch
        length). Every core-set action is pulled at least once, and the
        batch has fewer than q + |C| pulls. ``q`` must be finite and > 0.
        """
        return np.ceil(self.weights * positive("q", q)).astype(np.int64)

    def __len__(self) -> int:
        """|C|, the number of actions in the core set."""
        return int(self.support.shape[0])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CoreSet):
            return NotImplemented
        return (
            np.array_equal(self.support, other.support)
            and np.array_equal(self.weights, other.weights)
            and self.value == other.value
            and self.iterations == other.iterations
            and self.stop_at == other.stop_at
        )

    __hash__ = None  # type: ignore[assignment]


def core_set(
    actions: ArrayLike,
    *,
    stop_at: float | None = None,
    max_iter: int = DEFAULT_MAX_ITER,
    reduce_support: bool = True,
) -> CoreSet:
    """A core set of ``actions`` by Frank–Wolfe (Hanna et al., App. A).

    Starts from the uniform distribution pi_0 over the K actions and
    repeats pi_{k+1} = (1 - gamma_k) pi_k + gamma_k 1{a_k} with
    a_k = argmax_a ||a||^2_{V(pi_k)^{-1}} (first index on ties) and
    gamma_k = ((1/d) g_k - 1) / (g_k - 1), g_k = ||a_k||^2_{V(pi_k)^{-1}},
    until max_a ||a||^2_{V(pi)^{-1}} <= ``stop_at`` (Lemma 2, Eq. 5, with
    ``stop_at = 2d``). Each step costs O(K d) (Sherman–Morrison updates of
    all K quadratic forms, recomputed exactly every 50 steps and before
    stopping).

    With ``reduce_support`` (the default) the support is then cut to at
    most d(d+1)/2 actions (Kiefer–Wolfowitz; Lattimore & Szepesvári
    Ch. 21) by a Carathéodory argument that keeps V(pi) and lowers the
    total weight, so after renormalization every ||a||^2_{V^{-1}} can only
    shrink and the stopping rule still holds. It is deterministic (index
    order; grouped as in Maalouf, Jubran & Feldman 2019 for large K); see
    ``DesignOptions::reduce_support`` in ``rust/src/design.rs``. Note that
    Lemma 2 states |C| <= B d for a constant B; this implementation
    guarantees the d(d+1)/2 bound only.

    Parameters
    ----------
    actions:
        (K, d) array whose rows are the actions; finite, no zero row,
        spanning R^d (so K >= d). C or Fortran order, or any strides.
    stop_at:
        The threshold on max_a ||a||^2_{V(pi)^{-1}}; ``None`` means 2d.
        Must be >= d, the optimum; ``(1 + eps) * d`` asks for a relative
        accuracy eps and needs O(d / eps) steps.
    max_iter:
        Bound on Frank–Wolfe steps (>= 0); exceeding it raises ValueError
        naming ``max_iter``.
    reduce_support:
        Reduce the support to at most d(d+1)/2 actions (otherwise the
        Frank–Wolfe weights are returned as they are: from the uniform
        start, every action keeps a positive weight).

    Raises
    ------
    ValueError
        ``actions`` not a finite 2-D array, K = 0 or d = 0; ``stop_at``
        not finite or < d; ``max_iter`` negative or reached.
    dpbandits.errors.DegenerateInputError
        (a ValueError) ``actions`` has a zero row, K < d, or does not span
        R^d.
    """
    arr = float_array("actions", actions, ndim=2)
    stop = None if stop_at is None else positive("stop_at", stop_at)
    support, weights, value, iterations, used_stop = _core.core_set(
        arr,
        stop,
        positive_int("max_iter", max_iter, minimum=0),
        bool(reduce_support),
    )
    return CoreSet(
        support=support,
        weights=weights,
        value=float(value),
        iterations=int(iterations),
        stop_at=float(used_stop),
    )
