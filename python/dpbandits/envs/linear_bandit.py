"""The stochastic linear bandit of Hanna, Girgis, Fragouli & Diggavi, Sec. VI.

K actions (given, or uniform on the unit sphere S^{d-1}), theta* uniform on
the unit sphere, rewards y in {-1, +1} with mean <a, theta*> (bounded,
|y| <= 1, Assumption 1). The decision set is the same K x d matrix every
round. Fig. 2a: K = 10, d = 2, T = 10^6; Fig. 2b: K = 1000, T = 10^7. Runs
in Rust (``rust/src/env/linear_bandit.rs``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._sizes import check_bytes
from dpbandits._validation import float_array, positive_int, seed_or_none

__all__ = ["LinearBanditEnv"]


class LinearBanditEnv:
    """Sec. VI's linear bandit with a fixed action set.

    ``actions``: a (K, d) array with ||a|| <= 1, or an int K to draw K
    uniform unit actions in R^``d`` from ``seed`` (then ``d`` is required).
    The action set is drawn once, here: in :func:`dpbandits.simulate` every
    replicate plays these same actions (the learner's action set is fixed
    at construction: build it from ``env.actions``) and draws its own
    theta* and rewards from the replicate seed.

    ``seed``: None draws from operating-system entropy; an int reproduces
    the actions, theta* and the rewards of round-by-round use.

    Parameters
    ----------
    actions:
        A (K, d) array of actions with norm <= 1, or a number K of random
        unit actions.
    d:
        Dimension, required when ``actions`` is a number.
    seed:
        None (default) or an integer, as above.

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
    >>> env = dp.LinearBanditEnv(10, d=2, seed=0)
    >>> env.decision_set(1).shape, isinstance(env.reward(1, 0), float)
    ((10, 2), True)
    """

    def __init__(self, actions: ArrayLike | int, d: int | None = None, seed: int | None = None) -> None:
        self.seed = seed_or_none("seed", seed)
        if isinstance(actions, (int, np.integer)):
            k = positive_int("actions", int(actions))
            if d is None:
                raise ValueError("invalid argument `d`: give d when `actions` is a number of actions K")
            dim = positive_int("d", d)
            check_bytes("d", dim, 8 * 2 * dim, f"theta* and one action in R^{dim}")
            check_bytes("actions", k, 8 * k * (dim + 1), f"{k} actions in R^{dim} and their mean rewards")
            self._engine = _core.LinearBanditEnvEngine(k, dim, None, self.seed)
        else:
            arr = float_array("actions", actions, ndim=2)
            if d is not None and d != arr.shape[1]:
                raise ValueError(f"invalid argument `d`: {d} differs from the actions' dimension {arr.shape[1]}")
            self._engine = _core.LinearBanditEnvEngine(arr.shape[0], arr.shape[1], arr, self.seed)
        self.actions: NDArray[np.float64] = self._engine.actions()
        self.k, self.d = self.actions.shape
        self._t = 0

    def decision_set(self, t: int) -> NDArray[np.float64]:
        """The fixed (K, d) actions."""
        self._t = positive_int("t", t, minimum=0)
        return self.actions

    def reward(self, t: int, index: int) -> float:
        """A +-1 reward with mean <a_index, theta*>."""
        positive_int("t", t, minimum=0)
        i = positive_int("index", index, minimum=0)
        if not i < self.k:
            raise ValueError(f"invalid argument `index`: must lie in [0, {self.k}), got {index}")
        return float(self._engine.reward(i))

    def mean_rewards(self, t: int) -> NDArray[np.float64]:
        """<a, theta*> of every action."""
        positive_int("t", t, minimum=0)
        return self._engine.mean_rewards()

    @property
    def theta(self) -> NDArray[np.float64]:
        """The hidden parameter theta*."""
        return self._engine.theta()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (self._engine.to_bytes(), self.seed))

    def __repr__(self) -> str:
        return f"LinearBanditEnv(K={self.k}, d={self.d}, seed={self.seed!r})"


def _restore(state: bytes, seed: int | None) -> LinearBanditEnv:
    env = LinearBanditEnv.__new__(LinearBanditEnv)
    env.seed = seed
    env._engine = _core.LinearBanditEnvEngine.from_bytes(state)
    env.actions = env._engine.actions()
    env.k, env.d = env.actions.shape
    env._t = 0
    return env
