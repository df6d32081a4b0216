"""The Python environment protocol (custom or logged-data environments)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from numpy.typing import ArrayLike


@runtime_checkable
class Environment(Protocol):
    """What :func:`dpbandits.simulate` needs from a custom environment.

    Round t (1-indexed) calls ``decision_set(t)`` once, then, for the chosen
    row ``index``, ``reward(t, index)`` once. ``mean_rewards(t)`` is optional:
    when present the simulation reports pseudo-regret
    max(mean_rewards) - mean_rewards[index]; otherwise regret is NaN. For
    several seeds, pass a callable ``seed -> Environment``.
    """

    def decision_set(self, t: int) -> ArrayLike:
        """The (k, d) actions of round t."""
        ...

    def reward(self, t: int, index: int) -> float:
        """The realized reward of action ``index`` in round t."""
        ...
