"""The research-replay switch shared by learners and mechanisms."""

from __future__ import annotations

import contextvars

#: Set inside :func:`dpbandits.research_replay`: restores and copies are bit-identical.
_REPLAY: contextvars.ContextVar[bool] = contextvars.ContextVar("dpbandits_research_replay", default=False)
