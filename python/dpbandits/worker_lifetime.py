"""Worker processes that exit with the process that started them.

A sweep (:func:`dpbandits.sweep`, ``dpbandits sweep``, ``dpbandits
reproduce``) runs its cells in local worker processes. Killed with
``kill -9``, the parent has no chance to stop them, and they would run on
as orphans (adopted by init), holding memory and CPU until their cells
end. :func:`die_with_parent`, called first thing in a worker, ties the
worker's life to its parent's:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (through :mod:`ctypes`):
  the kernel kills the worker when the thread that started it exits
  (Linux ties the signal to that thread; worker pools start their workers
  from threads that live as long as the pool);
- everywhere, a daemon thread that checks every half second whether the
  parent process id changed (the parent died and the worker was adopted)
  and then ends the worker with ``os._exit``.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

__all__ = ["die_with_parent"]

#: Seconds between two checks of the parent process id.
POLL_SECONDS = 0.5
#: prctl option that sets the signal sent when the parent exits (linux/prctl.h).
_PR_SET_PDEATHSIG = 1

_installed_in: int | None = None
_guard = threading.Lock()


def die_with_parent() -> None:
    """Makes this (worker) process exit when its parent process dies; does
    nothing the second time in one process. Exits at once when the parent
    is already gone."""
    global _installed_in
    with _guard:
        if _installed_in == os.getpid():
            return
        _installed_in = os.getpid()
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
            pass
    if os.getppid() != parent or parent == 1:
        # The parent died before the signal was armed.
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="dpbandits-parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    while True:
        threading.Event().wait(POLL_SECONDS)
        if os.getppid() != parent:
            os._exit(1)
