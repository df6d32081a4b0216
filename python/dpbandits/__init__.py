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
    ChasingAdversary,
    GaussianBandit,
    LinearBanditEnv,
    LogisticContextualEnv,
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
    BatchedPrivateEXP3,
    ContextualEliminationBandit,
    EliminationLinearBandit,
    JointDPLinUCB,
    JointDPReweightedLinUCB,
    JointDPReweightedLogisticUCB,
    LazyPrivateExperts,
    LazyPrivateOCO,
    LinUCB,
    LocalDPReweightedLogisticUCB,
    LocalLinUCB,
    LogisticThompsonSampling,
    LogisticUCB,
    PrivateContextualThompsonSampling,
    PrivateContextualUCB,
    PrivateDartboardExperts,
    PrivateFTPL,
    PrivateFTRL,
    PrivateStochasticExperts,
    PrivateThompsonSampling,
    PrivateUCB,
    ReweightedLinUCB,
    ReweightedLogisticUCB,
    SCRiBLe,
    ShuffleLinUCB,
    ThompsonSampling,
)
from dpbandits.learners.bai import CTBTT, AdaPTT, AdaPTTStar, BAIRuns, DPTopTwo, TopTwoBAI
from dpbandits.learners.bai_fixed_budget import DPBAI, LinearDPBAI, SequentialHalving
from dpbandits.learners.online import research_replay
from dpbandits.ledger import Ledger
from dpbandits.sim import SimulationResult, simulate, simulate_many
from dpbandits.sweeps import SweepResult, sweep

__all__ = [
    "CTBTT",
    "DPBAI",
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
    "AdaPTTStar",
    "AdaPUCB",
    "BAIRuns",
    "BatchedPrivateEXP3",
    "BernoulliBandit",
    "ChasingAdversary",
    "ContextualEliminationBandit",
    "DPTopTwo",
    "EliminationLinearBandit",
    "GaussianBandit",
    "JointDPLinUCB",
    "JointDPReweightedLinUCB",
    "JointDPReweightedLogisticUCB",
    "LazyPrivateExperts",
    "LazyPrivateOCO",
    "Ledger",
    "LinUCB",
    "LinearBanditEnv",
    "LinearDPBAI",
    "LocalDPReweightedLogisticUCB",
    "LocalLinUCB",
    "LogisticContextualEnv",
    "LogisticThompsonSampling",
    "LogisticUCB",
    "LossArray",
    "PrivateContextualThompsonSampling",
    "PrivateContextualUCB",
    "PrivateDartboardExperts",
    "PrivateFTPL",
    "PrivateFTRL",
    "PrivateStochasticExperts",
    "PrivateThompsonSampling",
    "PrivateUCB",
    "ReweightedLinUCB",
    "ReweightedLogisticUCB",
    "SCRiBLe",
    "SequentialHalving",
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
    "research_replay",
    "simulate",
    "simulate_many",
    "sweep",
]

# ``from __future__ import annotations`` binds the name in this namespace.
del annotations
