"""Write-ahead autosave: a release is durable before the decision that reveals it.

A learner releases a noisy value (a tree node, a phase sum, a batch mean)
inside an ``update`` and reveals it through the decisions that read it. If
the process dies after a decision revealed a release but before the release
reached a checkpoint, a restart from the older checkpoint would release the
same rounds again from other rewards with other noise: the privacy loss of
those rounds composes twice, unseen. :class:`Autosaved` (made by
:meth:`dpbandits.learners.online.LearnerBase.autosave`) closes that gap: after
every call it forwards to the learner, and in particular before a decision
(``select``, ``select_many``, ``policy``, ...) is returned, it writes the
checkpoint (atomically, fsynced: :meth:`~dpbandits.learners.online.LearnerBase.save`)
whenever the learner made a new release since the last one. The newest
checkpoint therefore holds every release a decision ever revealed, and a
restart restores from it once (restores for use: ``load``).

When did the learner release? The signal is the cheapest sound one each
engine has: the rounds recorded (``engine.t``; a tree-based learner releases
a node every round), or, for the phased learners, whose releases are the
phase ends, the pulls their released statistics count (the sum of
``engine.pulls()``, which moves only when a phase is released). Both move
whenever a release is made, so no release is ever revealed before it is
durable; a phased learner is saved once per phase, not once per round.
Updates that make no release are not saved: losing them in a crash loses
rewards that were never released, which costs no privacy (call
:meth:`Autosaved.sync` to make every acknowledged reward durable).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

__all__ = ["Autosaved"]


def release_marker(learner: Any) -> int:
    """A count that moves whenever ``learner`` makes a new release (see the
    module docstring)."""
    engine = learner._engine
    if type(engine).__name__ == "PhasedMabEngine":
        return int(engine.pulls().sum())
    return int(engine.t)


class Autosaved:
    """``learner`` in write-ahead autosave mode to ``path`` (``key``: the
    checkpoint's HMAC key, see :meth:`~dpbandits.learners.online.LearnerBase.save`).

    Every attribute is the learner's; every method call goes to the learner
    under its lock and, before it returns, makes a new release durable (the
    module docstring). The current state is saved when the wrapper is made.
    Use only this object from then on: calls made on the learner itself are
    not saved before they return (the next call through the wrapper saves
    them).

    ``checkpoint_id`` is the id of the newest checkpoint (restore from that
    file, once).
    """

    def __init__(self, learner: Any, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> None:
        self.__dict__["_learner"] = learner
        self.__dict__["_path"] = os.fspath(path)
        self.__dict__["_key"] = key
        self.__dict__["_marker"] = None
        self.__dict__["checkpoint_id"] = None
        self.sync()

    @property
    def learner(self) -> Any:
        """The learner this wrapper saves."""
        return self.__dict__["_learner"]

    @property
    def path(self) -> str:
        """The checkpoint file."""
        return self.__dict__["_path"]  # type: ignore[no-any-return]

    def sync(self) -> str:
        """Saves now (whatever changed) and returns the checkpoint id."""
        learner = self.__dict__["_learner"]
        with learner.lock:
            marker = release_marker(learner)
            checkpoint_id = learner.save(self.__dict__["_path"], key=self.__dict__["_key"])
            self.__dict__["_marker"] = marker
            self.__dict__["checkpoint_id"] = checkpoint_id
        return checkpoint_id  # type: ignore[no-any-return]

    def _durable(self) -> None:
        learner = self.__dict__["_learner"]
        if release_marker(learner) != self.__dict__["_marker"]:
            self.sync()

    def __getattr__(self, name: str) -> Any:
        learner = self.__dict__["_learner"]
        value = getattr(learner, name)
        if not callable(value) or name.startswith("__"):
            return value
        return _saving(self, learner, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"an Autosaved learner is changed only through its methods, not by setting {name!r}")

    def __repr__(self) -> str:
        return f"Autosaved({self.__dict__['_learner']!r}, {self.__dict__['_path']!r})"

    def __reduce__(self) -> Any:
        raise TypeError("an Autosaved learner does not pickle: load its checkpoint file instead")


def _saving(wrapper: Autosaved, learner: Any, method: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        with learner.lock:
            out = method(*args, **kwargs)
            wrapper._durable()
        return out

    call.__name__ = getattr(method, "__name__", "call")
    call.__doc__ = getattr(method, "__doc__", None)
    return call
