"""dpbandits: differentially private bandit and online-learning algorithms.

A Rust core (``dpbandits._core``) does the arithmetic; this package validates
input, makes every privacy decision (``dpbandits.privacy``) and assembles
learners. See README.md for the two commands that run the main job and the
tests.
"""

from __future__ import annotations

from dpbandits import design, errors, mechanisms, privacy
from dpbandits._core import __version__
from dpbandits.envs import (
    BernoulliBandit,
    GaussianBandit,
    LinearBanditEnv,
    LossArray,
    ShariffSheffetEnv,
    StochasticLosses,
    SwitchingBestExpert,
    UniformLosses,
)
from dpbandits.learners import (
    DPIMED,
    DPKLUCB,
    DPSE,
    DPTS,
    EXP2,
    KLUCB,
    UCB1,
    AdaCKLUCB,
    AdaCUCB,
    AdaPKLUCB,
    AdaPUCB,
    ContextualEliminationBandit,
    EliminationLinearBandit,
    JointDPLinUCB,
    LinUCB,
    LocalLinUCB,
    PrivateContextualThompsonSampling,
    PrivateContextualUCB,
    PrivateFTPL,
    PrivateFTRL,
    PrivateThompsonSampling,
    PrivateUCB,
    SCRiBLe,
    ShuffleLinUCB,
    ThompsonSampling,
)
from dpbandits.learners.bai import AdaPTT, BAIRuns, DPTopTwo, TopTwoBAI
from dpbandits.sim import SimulationResult, simulate, simulate_many
from dpbandits.sweeps import SweepResult, sweep

__all__ = [
    "DPIMED",
    "DPKLUCB",
    "DPSE",
    "DPTS",
    "EXP2",
    "KLUCB",
    "UCB1",
    "AdaCKLUCB",
    "AdaCUCB",
    "AdaPKLUCB",
    "AdaPTT",
    "AdaPUCB",
    "BAIRuns",
    "BernoulliBandit",
    "ContextualEliminationBandit",
    "DPTopTwo",
    "EliminationLinearBandit",
    "GaussianBandit",
    "JointDPLinUCB",
    "LinUCB",
    "LinearBanditEnv",
    "LocalLinUCB",
    "LossArray",
    "PrivateContextualThompsonSampling",
    "PrivateContextualUCB",
    "PrivateFTPL",
    "PrivateFTRL",
    "PrivateThompsonSampling",
    "PrivateUCB",
    "SCRiBLe",
    "ShariffSheffetEnv",
    "ShuffleLinUCB",
    "SimulationResult",
    "StochasticLosses",
    "SweepResult",
    "SwitchingBestExpert",
    "ThompsonSampling",
    "TopTwoBAI",
    "UniformLosses",
    "__version__",
    "design",
    "errors",
    "mechanisms",
    "privacy",
    "simulate",
    "simulate_many",
    "sweep",
]
