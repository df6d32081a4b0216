"""Learners: validated configuration + calibration + a handle on a Rust engine.

One module per family (DESIGN.md). Every learner has ``select``, ``update``
and ``privacy`` (a :class:`dpbandits.privacy.Guarantee`).
"""

from dpbandits.learners.linucb import JointDPLinUCB, LinUCB
from dpbandits.learners.online_learning import EXP2, PrivateFTPL, PrivateFTRL, SCRiBLe

__all__ = ["EXP2", "JointDPLinUCB", "LinUCB", "PrivateFTPL", "PrivateFTRL", "SCRiBLe"]
