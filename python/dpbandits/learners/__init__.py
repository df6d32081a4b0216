"""Learners: validated configuration + calibration + a handle on a Rust engine.

One module per family of algorithms. Every learner has ``select``, ``update``
and ``privacy`` (a :class:`dpbandits.privacy.Guarantee`).
"""

from dpbandits.learners.bai import CTBTT, AdaPTT, AdaPTTStar, DPTopTwo, TopTwoBAI
from dpbandits.learners.bai_fixed_budget import DPBAI, LinearDPBAI, SequentialHalving
from dpbandits.learners.elimination import ContextualEliminationBandit, EliminationLinearBandit
from dpbandits.learners.linucb import JointDPLinUCB, LinUCB
from dpbandits.learners.linucb_trust import LocalLinUCB, ShuffleLinUCB
from dpbandits.learners.logistic import (
    JointDPReweightedLogisticUCB,
    LocalDPReweightedLogisticUCB,
    LogisticThompsonSampling,
    LogisticUCB,
    ReweightedLogisticUCB,
)
from dpbandits.learners.mab import UCB1, PrivateThompsonSampling, PrivateUCB, ThompsonSampling
from dpbandits.learners.mishra_thakurta import PrivateContextualThompsonSampling, PrivateContextualUCB
from dpbandits.learners.online_learning import EXP2, PrivateFTPL, PrivateFTRL, SCRiBLe
from dpbandits.learners.phased_mab import (
    DPIMED,
    DPKLUCB,
    DPSE,
    DPTS,
    KLUCB,
    AdaCKLUCB,
    AdaCUCB,
    AdaPKLUCB,
    AdaPUCB,
)
from dpbandits.learners.private_experts import (
    BatchedPrivateEXP3,
    LazyPrivateExperts,
    LazyPrivateOCO,
    PrivateDartboardExperts,
    PrivateStochasticExperts,
)
from dpbandits.learners.reweighted import JointDPReweightedLinUCB, ReweightedLinUCB

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
    "BatchedPrivateEXP3",
    "ContextualEliminationBandit",
    "DPTopTwo",
    "EliminationLinearBandit",
    "JointDPLinUCB",
    "JointDPReweightedLinUCB",
    "JointDPReweightedLogisticUCB",
    "LazyPrivateExperts",
    "LazyPrivateOCO",
    "LinUCB",
    "LinearDPBAI",
    "LocalDPReweightedLogisticUCB",
    "LocalLinUCB",
    "LogisticThompsonSampling",
    "LogisticUCB",
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
    "ShuffleLinUCB",
    "ThompsonSampling",
    "TopTwoBAI",
]
