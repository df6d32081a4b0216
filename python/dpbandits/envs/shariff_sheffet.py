"""The synthetic environment of Shariff & Sheffet 2018, App. D.

theta* uniform on the unit sphere; each round a fresh decision set of k unit
actions: one optimal action with <x, theta*> = ``optimal_reward`` and k - 1
suboptimal ones uniform on the sphere with <x, theta*> in
[-optimal_reward, optimal_reward - gap]. Rewards are +-1 with mean <x, theta*>
(``reward="pm1"``; |y| <= 1, subgaussian with sigma^2 = 1) or
N(<x, theta*>, 1) (``reward="gaussian"``, D.1). D.2 uses d = 5, k = 25,
gap 0.1 (right panel) or 0 (left panel). Runs in Rust
(``rust/src/env/shariff_sheffet.rs``).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._validation import positive_int, seed_or_none

__all__ = ["ShariffSheffetEnv"]


#: Entries (k d) of one decision set the Rust environment accepts (2^26).
_MAX_SET_ENTRIES = 2**26


def _decision_set_shape(d: int, k: int | None) -> tuple[int, int]:
    """(d, k) of App. D's decision sets, checked: d >= 2, k >= 1 (None:
    d^2), k d entries at most ``_MAX_SET_ENTRIES``."""
    d = positive_int("d", d, minimum=2)
    if d > _MAX_SET_ENTRIES:
        raise ValueError(f"invalid argument `d`: must be <= {_MAX_SET_ENTRIES} (entries per decision set), got {d}")
    if k is None and d**3 > _MAX_SET_ENTRIES:
        # The default k = d^2 makes each decision set d^3 entries: name
        # d (the argument given), not the k it implies.
        raise ValueError(
            f"invalid argument `d`: the default k = d^2 gives decision sets of d^3 = {d**3} entries, "
            f"more than {_MAX_SET_ENTRIES}; d <= {int(_MAX_SET_ENTRIES ** (1 / 3))} works, or pass k"
        )
    return d, positive_int("k", d**2 if k is None else k)


class _AppendixDRounds:
    """The round-by-round protocol of the environments on App. D's decision
    sets (this one and :class:`~dpbandits.envs.logistic.LogisticContextualEnv`):
    rounds requested in order, the realized reward and the means of the
    current round, read from the Rust engine."""

    d: int
    k: int
    _engine: Any

    def decision_set(self, t: int) -> NDArray[np.float64]:
        """The next round's (k, d) actions (rounds must be requested in order)."""
        if t != self._engine.t + 1:
            raise ValueError(f"invalid argument `t`: expected round {self._engine.t + 1}, got {t}")
        return self._engine.next_round()  # type: ignore[no-any-return]

    def reward(self, t: int, index: int) -> float:
        """Realized reward of row ``index`` in round ``t``."""
        if t != self._engine.t:
            raise ValueError(f"invalid argument `t`: the current round is {self._engine.t}, got {t}")
        # Checked here so that a NaN or infinite index is named, not a bare
        # OverflowError from int().
        index = positive_int("index", index, minimum=0)
        if not index < self.k:
            raise ValueError(f"invalid argument `index`: must lie in [0, {self.k}), got {index}")
        return float(self._engine.reward(index))

    def mean_rewards(self, t: int) -> NDArray[np.float64]:
        """The mean reward of each action of round t (the current round)."""
        # Only the current round's means exist.
        if t != self._engine.t:
            raise ValueError(f"invalid argument `t`: the current round is {self._engine.t}, got {t}")
        return self._engine.mean_rewards()  # type: ignore[no-any-return]

    @property
    def theta(self) -> NDArray[np.float64]:
        """The hidden parameter theta*."""
        return self._engine.theta()  # type: ignore[no-any-return]


class ShariffSheffetEnv(_AppendixDRounds):
    """App. D's contextual linear bandit (see the module docstring).

    As a spec, :func:`dpbandits.simulate` runs it entirely in Rust, one
    instance per replicate. It also follows the Python environment protocol
    (``decision_set(t)``, ``reward(t, index)``, ``mean_rewards(t)``) for
    round-by-round use.

    ``seed``: None (default) draws theta* and the rounds from operating-system
    entropy in round-by-round use, and from the replicate seed alone in
    :func:`dpbandits.simulate`; an integer makes round-by-round use
    reproducible and is combined with each replicate seed in a simulation
    (:func:`dpbandits.sim.replicate_seed`), so two environment seeds give two
    different sets of replicates.

    Parameters
    ----------
    d:
        Dimension, an integer >= 2.
    k:
        Actions per round, an integer >= 1; None (default) for d^2.
    gap:
        Suboptimality gap, in [0, 2 optimal_reward) (default 0.1).
    optimal_reward:
        Mean reward of the best action, in (0, 1) (default 0.75).
    reward:
        ``"pm1"`` (default: +-1 rewards) or ``"gaussian"``.
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
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=0)
    >>> actions = env.decision_set(1)
    >>> actions.shape, env.reward(1, 0) in (-1.0, 1.0), float(env.mean_rewards(1).max())
    ((25, 5), True, 0.75)
    """

    def __init__(
        self,
        d: int,
        k: int | None = None,
        gap: float = 0.1,
        optimal_reward: float = 0.75,
        reward: Literal["pm1", "gaussian"] = "pm1",
        seed: int | None = None,
    ) -> None:
        self.d, self.k = _decision_set_shape(d, k)
        self.gap = float(gap)
        self.optimal_reward = float(optimal_reward)
        self.reward_model = reward
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.ShariffSheffetEnvEngine(
            self.d, self.k, self.gap, self.optimal_reward, reward, self.seed
        )

    def __repr__(self) -> str:
        return (
            f"ShariffSheffetEnv(d={self.d}, k={self.k}, gap={self.gap}, "
            f"optimal_reward={self.optimal_reward}, reward={self.reward_model!r}, seed={self.seed!r})"
        )
