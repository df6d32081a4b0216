"""Contextual bandits with logistic rewards, and the d = 20, K = 100 linear instance.

:class:`LogisticContextualEnv` keeps the decision sets of Shariff & Sheffet
2018, App. D (:class:`~dpbandits.envs.shariff_sheffet.ShariffSheffetEnv`)
and gives Bernoulli rewards y in {0, 1} with P(y = 1) = mu(s <x, theta*>),
mu(z) = 1 / (1 + exp(-z)): the logistic generalized linear bandit of
Filippi, Cappé, Garivier & Szepesvári, "Parametric Bandits: The Generalized
Linear Case", NeurIPS 2010, Sec. 2, and Li, Lu & Zhou, "Provably Optimal
Algorithms for Generalized Linear Contextual Bandits", ICML 2017, Sec. 2
(binary rewards: clicks, conversions). Runs in Rust
(``rust/src/env/logistic_contextual.rs``).

:func:`d20_instance` is App. D's linear generator at d = 20, K = 100: a
higher-dimensional instance for the private contextual learners.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._validation import positive, seed_or_none
from dpbandits.envs.shariff_sheffet import ShariffSheffetEnv, _AppendixDRounds, _decision_set_shape

__all__ = ["LogisticContextualEnv", "d20_instance"]

#: Largest link scale s accepted (the Rust environment's bound).
MAX_SCALE = 1e6


class LogisticContextualEnv(_AppendixDRounds):
    """App. D's decision sets with logistic (Bernoulli) rewards (see the
    module docstring).

    The pseudo-regret of an action x is mu(s r*) - mu(s <x, theta*>), r* =
    ``optimal_reward``. As a spec, :func:`dpbandits.simulate` runs it
    entirely in Rust, one instance per replicate; it also follows the
    Python environment protocol (``decision_set(t)``, ``reward(t, index)``,
    ``mean_rewards(t)``). ``seed`` works as for
    :class:`~dpbandits.envs.shariff_sheffet.ShariffSheffetEnv`, whose
    decision sets (same seed) this environment shares.

    Parameters
    ----------
    d:
        Dimension, an integer >= 2.
    k:
        Actions per round, an integer >= 1; None (default) for d^2.
    gap:
        Gap in <x, theta*> between the best action and the others, in
        [0, 2 optimal_reward) (default 0.1).
    optimal_reward:
        <x*, theta*> of the best action, in (0, 1) (default 0.75).
    scale:
        The link's scale s, in (0, 1e6] (default 2.0: success
        probabilities between mu(-1.5) = 0.18 and mu(1.5) = 0.82).
    seed:
        None (default) or an integer.

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``scale``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> env = dp.LogisticContextualEnv(d=5, gap=0.1, seed=0)
    >>> actions = env.decision_set(1)
    >>> actions.shape, env.reward(1, 0) in (0.0, 1.0)
    ((25, 5), True)
    >>> round(float(env.mean_rewards(1).max()), 4)  # mu(2 * 0.75)
    0.8176
    """

    def __init__(
        self,
        d: int,
        k: int | None = None,
        gap: float = 0.1,
        optimal_reward: float = 0.75,
        scale: float = 2.0,
        seed: int | None = None,
    ) -> None:
        self.d, self.k = _decision_set_shape(d, k)
        self.gap = float(gap)
        self.optimal_reward = float(optimal_reward)
        self.scale = positive("scale", scale)
        if self.scale > MAX_SCALE:
            raise ValueError(f"invalid argument `scale`: must lie in (0, {MAX_SCALE:g}], got {scale!r}")
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.LogisticContextualEnvEngine(
            self.d, self.k, self.gap, self.optimal_reward, self.scale, self.seed
        )

    def reward(self, t: int, index: int) -> float:
        """Realized reward (0 or 1) of row ``index`` in round ``t``."""
        return super().reward(t, index)

    def mean_rewards(self, t: int) -> NDArray[np.float64]:
        """mu(s <x, theta*>) of each action of round t (the current round)."""
        return super().mean_rewards(t)

    def __repr__(self) -> str:
        return (
            f"LogisticContextualEnv(d={self.d}, k={self.k}, gap={self.gap}, "
            f"optimal_reward={self.optimal_reward}, scale={self.scale}, seed={self.seed!r})"
        )


def d20_instance(
    gap: float = 0.1, reward: Literal["pm1", "gaussian"] = "pm1", seed: int | None = None
) -> ShariffSheffetEnv:
    """App. D's linear generator at d = 20 with K = 100 actions per round.

    Parameters
    ----------
    gap:
        Suboptimality gap, in [0, 1.5) (default 0.1).
    reward:
        ``"pm1"`` (default) or ``"gaussian"``.
    seed:
        None (default) or an integer.

    Returns
    -------
    ShariffSheffetEnv
        The instance (simulated in Rust like any other).

    Examples
    --------
    >>> import dpbandits as dp
    >>> env = dp.envs.d20_instance(seed=0)
    >>> env.decision_set(1).shape
    (100, 20)
    """
    return ShariffSheffetEnv(20, k=100, gap=gap, reward=reward, seed=seed)
