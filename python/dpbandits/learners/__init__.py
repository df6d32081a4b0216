"""Learners: validated configuration + calibration + a handle on a Rust engine.

One module per family (DESIGN.md). Every learner has ``select``, ``update``
and ``privacy`` (a :class:`dpbandits.privacy.Guarantee`).
"""

from dpbandits.learners.elimination import ContextualEliminationBandit, EliminationLinearBandit
from dpbandits.learners.linucb import JointDPLinUCB, LinUCB

__all__ = ["ContextualEliminationBandit", "EliminationLinearBandit", "JointDPLinUCB", "LinUCB"]
