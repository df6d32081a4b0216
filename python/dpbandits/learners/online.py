"""The online ``select`` / ``update`` protocol shared by learner classes."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits._validation import float_array
from dpbandits.errors import StateError


def as_decision_set(decision_set: ArrayLike, d: int) -> NDArray[np.float64]:
    """A (k, d) float64 array of finite actions, or ValueError."""
    arr = float_array("decision_set", decision_set)
    if arr.ndim == 1 and arr.shape[0] == d:
        arr = arr.reshape(1, d)
    if arr.ndim != 2 or arr.shape[1] != d or arr.shape[0] == 0:
        raise ValueError(f"invalid argument `decision_set`: expected shape (k, {d}) with k >= 1, got {arr.shape}")
    return arr


class OnlineLearner:
    """Round-by-round use: ``i = learner.select(D)``, then
    ``learner.update(reward)`` (for the action just selected) or
    ``learner.update(x, reward)`` (any played features, e.g. logged data).
    """

    _engine: Any
    d: int
    _pending: NDArray[np.float64] | None

    def select(self, decision_set: ArrayLike) -> int:
        """Index (row of ``decision_set``, shape (k, d)) of the action to play."""
        actions = as_decision_set(decision_set, self.d)
        index = int(self._engine.select(actions))
        self._pending = actions[index].copy()
        return index

    def update(self, *args: ArrayLike | float) -> None:
        """``update(reward)`` for the last selection, or ``update(x, reward)``."""
        if len(args) == 1:
            if self._pending is None:
                raise StateError(
                    "update(reward) needs a preceding select(); pass update(x, reward) to record another action"
                )
            x, reward = self._pending, args[0]
        elif len(args) == 2:
            x = float_array("x", args[0], ndim=1)
            reward = args[1]
        else:
            raise TypeError("update takes (reward) or (x, reward)")
        r = float(np.asarray(reward, dtype=np.float64))
        if not np.isfinite(r):
            raise ValueError(f"invalid argument `reward`: must be finite, got {reward!r}")
        self._engine.observe(np.asarray(x, dtype=np.float64), r)
        self._pending = None

    @property
    def t(self) -> int:
        """Rounds recorded so far."""
        return int(self._engine.t)
