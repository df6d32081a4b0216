"""Policies served from a learner's released state.

``learner.policy()`` returns one of these: a small, read-only, picklable
value built only from what the learner has already released (for the
K-armed learners, the arm its algorithm proposes next, a function of the
released statistics and of the learner's own sampling randomness). Serving
it, in other threads, processes or machines, is post-processing of those
releases: it costs no privacy. The rewards of the pulls it serves go back
to the learner with ``learner.update(arm, reward)``; when
``learner.policy_version`` moves past ``policy.version``, a new policy is
available.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["ArmPolicy"]


@dataclass(frozen=True, slots=True)
class ArmPolicy:
    """The decision of a K-armed learner at one release point: ``arm`` (in
    [0, ``k``)) until the learner's ``policy_version`` exceeds ``version``.

    A K-armed learner under delayed feedback (the queued reduction QPM-D,
    Joulani, György & Szepesvári, ICML 2013, Sec. 3.2) pulls its current
    proposal until a reward of that arm reaches its algorithm, so a single
    arm is the whole policy between two versions.
    """

    k: int
    arm: int
    version: int

    def select(self) -> int:
        """The arm to pull."""
        return self.arm

    def select_many(self, n: int) -> NDArray[np.int64]:
        """``n`` decisions (an int64 array, all ``arm``)."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
            raise ValueError(f"invalid argument `n`: must be an integer >= 0, got {n!r}")
        return np.full(int(n), self.arm, dtype=np.int64)
