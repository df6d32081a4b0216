"""The online ``select`` / ``update`` protocol shared by learner classes."""

from __future__ import annotations

import inspect
import pickle
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits._validation import float_array
from dpbandits.errors import DuplicatedNoiseWarning, StateError


def as_decision_set(decision_set: ArrayLike, d: int) -> NDArray[np.float64]:
    """A (k, d) float64 array of finite actions, or ValueError."""
    arr = float_array("decision_set", decision_set)
    if arr.ndim == 1:
        # As scikit-learn refuses a 1-d X: a (d,) vector is ambiguous
        # (one action of d features, or d actions of one feature).
        raise ValueError(
            f"invalid argument `decision_set`: expected a 2-d (k, {d}) array, got a 1-d array of shape "
            f"{arr.shape}; a single action is x[None, :]"
        )
    if arr.ndim != 2 or arr.shape[1] != d or arr.shape[0] == 0:
        raise ValueError(f"invalid argument `decision_set`: expected shape (k, {d}) with k >= 1, got {arr.shape}")
    return arr


class LearnerBase:
    """What every learner class shares: its constructor arguments as
    ``config``, its ``seed``, a ``repr`` that shows every argument that
    changes behaviour, ``spawn`` and ``fork``, and a warning on copies.

    Subclasses set ``self._args`` (the constructor's arguments) first thing
    in ``__init__`` and hold a Rust engine in ``self._engine``.

    Copies and pickles: a private learner's state includes its noise
    generator. A ``copy.deepcopy`` or a pickle round trip therefore
    duplicates future noise: two copies fed different rows add the same
    noise, and the difference of their releases reveals the rows exactly.
    Pickling is for checkpoints (one live copy at a time); to run copies
    side by side on purpose, use :meth:`fork`, which reseeds the copy's
    future noise. ``copy.copy`` and ``copy.deepcopy`` of a private learner
    warn with :class:`dpbandits.errors.DuplicatedNoiseWarning`.
    """

    _engine: Any
    _args: dict[str, Any]

    @property
    def config(self) -> Mapping[str, Any]:
        """The constructor arguments (a read-only copy)."""
        return dict(self._args)

    @property
    def seed(self) -> int | None:
        """The seed given at construction (None: operating-system entropy
        online; the replicate seed alone in a simulation)."""
        return self._args.get("seed")  # type: ignore[no-any-return]

    def spawn(self, seed: int | None) -> Any:
        """A fresh learner (round 0) with the same configuration and another seed."""
        return type(self)(**{**self._args, "seed": seed})

    def fork(self, seed: int | None = None) -> Any:
        """A copy at the current round whose future noise comes from a new
        generator (``seed=None``: operating-system entropy). Past releases
        are shared, future ones are independent, so running the copy and
        the original on different data leaks nothing beyond what each
        releases."""
        clone = pickle.loads(pickle.dumps(self))
        clone._engine.reseed(seed)
        clone._args = {**self._args, "seed": seed}
        return clone

    def _warn_copy(self) -> None:
        if getattr(self, "privacy", None) is not None and self.privacy.is_private:
            warnings.warn(
                f"copying {type(self).__name__} duplicates its noise generator: two copies fed different "
                "data add the same future noise, and the difference of their releases reveals the data. "
                "Use learner.fork() for an independent copy.",
                DuplicatedNoiseWarning,
                stacklevel=3,
            )

    def __copy__(self) -> Any:
        self._warn_copy()
        return pickle.loads(pickle.dumps(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        self._warn_copy()
        return pickle.loads(pickle.dumps(self))

    def __repr__(self) -> str:
        params = inspect.signature(type(self).__init__).parameters
        shown = []
        for name, p in params.items():
            if name == "self" or name not in self._args:
                continue
            value = self._args[name]
            if p.default is inspect.Parameter.empty or value != p.default:
                shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


class OnlineLearner(LearnerBase):
    """Round-by-round use: ``i = learner.select(D)``, then
    ``learner.update(reward)`` (for the action just selected) or
    ``learner.update(x, reward)`` (any played features, e.g. logged data).
    """

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
