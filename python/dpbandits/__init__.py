"""dpbandits: differentially private bandit and online-learning algorithms.

A Rust core (``dpbandits._core``) does the arithmetic; this package validates
input, makes every privacy decision (``dpbandits.privacy``) and assembles
learners. See README.md for the two commands that run the main job and the
tests.
"""

from __future__ import annotations

from dpbandits import design, errors, mechanisms, privacy
from dpbandits._core import __version__
from dpbandits.envs import BernoulliBandit, GaussianBandit, LinearBanditEnv, ShariffSheffetEnv
from dpbandits.learners import (
    UCB1,
    ContextualEliminationBandit,
    EliminationLinearBandit,
    JointDPLinUCB,
    LinUCB,
    PrivateContextualThompsonSampling,
    PrivateContextualUCB,
    PrivateThompsonSampling,
    PrivateUCB,
    ThompsonSampling,
)
from dpbandits.sim import SimulationResult, simulate, simulate_many

__all__ = [
    "UCB1",
    "BernoulliBandit",
    "ContextualEliminationBandit",
    "EliminationLinearBandit",
    "GaussianBandit",
    "JointDPLinUCB",
    "LinUCB",
    "LinearBanditEnv",
    "PrivateContextualThompsonSampling",
    "PrivateContextualUCB",
    "PrivateThompsonSampling",
    "PrivateUCB",
    "ShariffSheffetEnv",
    "SimulationResult",
    "ThompsonSampling",
    "__version__",
    "design",
    "errors",
    "mechanisms",
    "privacy",
    "simulate",
    "simulate_many",
]
