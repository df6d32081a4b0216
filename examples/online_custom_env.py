"""Online use with a custom environment.

A user-defined environment only needs ``decision_set(t)`` and
``reward(t, index)`` (the :class:`dpbandits.envs.Environment` protocol;
``mean_rewards(t)`` lets the loop measure regret). Here: a linear
bandit whose actions drift on the unit circle, driven round by round with
``select`` / ``update`` by a jointly differentially private LinUCB
(Shariff & Sheffet 2018), then run as whole replicates by
``dpbandits.simulate``, which accepts the same object.

    python examples/online_custom_env.py [horizon]    # default 20000
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

import dpbandits as dp


class DriftingCircle:
    """K unit-norm actions in the plane, rotating slowly; rewards
    <x, theta*> + N(0, 0.1^2), clipped to [-1, 1] (the learner's |y| <= 1)."""

    def __init__(self, k: int = 8, seed: int = 0) -> None:
        self.k = k
        self.rng = np.random.default_rng(seed)
        self.theta = np.array([math.cos(1.0), math.sin(1.0)])
        self.actions = np.zeros((k, 2))

    def decision_set(self, t: int) -> np.ndarray:
        angles = 2 * math.pi * np.arange(self.k) / self.k + 1e-3 * t
        self.actions = np.column_stack([np.cos(angles), np.sin(angles)])
        return self.actions

    def mean_rewards(self, t: int) -> np.ndarray:
        return self.actions @ self.theta

    def reward(self, t: int, index: int) -> float:
        return float(np.clip(self.mean_rewards(t)[index] + 0.1 * self.rng.standard_normal(), -1.0, 1.0))


def main(horizon: int) -> None:
    learner = dp.JointDPLinUCB(d=2, horizon=horizon, epsilon=1.0, delta=0.1, calibration="tight", seed=1)
    print(learner.privacy)
    env = DriftingCircle(seed=2)
    regret = 0.0
    for t in range(1, horizon + 1):
        actions = env.decision_set(t)
        i = learner.select(actions)
        learner.update(env.reward(t, i))
        means = env.mean_rewards(t)
        regret += float(means.max() - means[i])
    print(f"online: {horizon} rounds, regret {regret:.1f}")

    # The same environment class through simulate: one fresh instance per seed.
    res = dp.simulate(learner, lambda seed: DriftingCircle(seed=seed), horizon=horizon, seeds=2)
    print(res.summary())


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("DPBANDITS_EXAMPLE_HORIZON", 20_000)))
