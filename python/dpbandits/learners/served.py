"""The released state of the policies a learner has served, kept so that
the rewards or losses of the decisions drawn from them can be fed back.

A learner whose decisions are draws from released state (EXP2's p_t,
SCRiBLe's iterate x_t) records, in :meth:`policy`, the released state of
the version it hands out. ``update(..., policy_version=v)`` then reads the
state of version v, the one the serving process drew from, for the
estimate (EXP2's importance weight 1 / p_v(i), SCRiBLe's direction
y - x_v). The state kept is what the learner already released (a function
of privatized values only), so keeping it and reading it is
post-processing. The most recent :data:`KEPT` versions are kept; a decision
of an older one is refused (ValueError naming the version).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.errors import CheckpointError

__all__ = ["KEPT", "ServedVersions"]

#: How many served versions a learner keeps.
KEPT = 1024


class ServedVersions:
    """Version -> the released state (a float64 vector of length ``n``) of
    the policies a learner served, the :data:`KEPT` most recent."""

    __slots__ = ("_n", "_states")

    def __init__(self, n: int) -> None:
        self._n = int(n)
        self._states: OrderedDict[int, NDArray[np.float64]] = OrderedDict()

    def record(self, version: int, state: NDArray[np.float64]) -> None:
        """Keeps ``state`` as version ``version``'s (a read-only copy)."""
        kept = np.array(state, dtype=np.float64, copy=True)
        kept.setflags(write=False)
        self._states[int(version)] = kept
        self._states.move_to_end(int(version))
        while len(self._states) > KEPT:
            self._states.popitem(last=False)

    def get(self, version: Any) -> NDArray[np.float64]:
        """The state of ``version``; TypeError for a non-integer, ValueError
        for a version this learner did not serve or no longer keeps."""
        if isinstance(version, bool) or not isinstance(version, int | np.integer):
            raise TypeError(f"invalid argument `policy_version`: expected an int, got {type(version).__name__}")
        state = self._states.get(int(version))
        if state is None:
            kept = f"{min(self._states)}..{max(self._states)}" if self._states else "none"
            raise ValueError(
                f"invalid argument `policy_version`: version {int(version)} was not served by this learner's "
                f"policy() or is no longer kept (the {KEPT} most recent are; kept now: {kept})"
            )
        return state

    def to_extra(self) -> dict[str, list[float]]:
        """The kept states, for a checkpoint (JSON-able)."""
        return {str(v): s.tolist() for v, s in self._states.items()}

    @classmethod
    def from_extra(cls, n: int, extra: Mapping[str, Any] | None, check: Any) -> ServedVersions:
        """The kept states of a checkpoint; CheckpointError unless each is a
        finite vector of length ``n`` that ``check`` (a predicate on the
        vector) accepts."""
        out = cls(n)
        if extra is None:
            return out
        if not isinstance(extra, Mapping) or len(extra) > KEPT:
            raise CheckpointError("the checkpoint's served policies are not a map of at most "
                                  f"{KEPT} versions")
        for key, value in extra.items():
            try:
                version = int(key)
                state = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError):
                raise CheckpointError(f"the checkpoint's served policy {key!r} is not a version and a vector") from None
            if state.shape != (n,) or not np.all(np.isfinite(state)) or not check(state):
                raise CheckpointError(f"the checkpoint's served policy of version {version} is not a valid state")
            out.record(version, state)
        return out
