"""``select`` and ``update`` bound to the engine, in Rust.

A learner class that mixes in :class:`BoundOnlineCall` derives from the
native ``dpbandits._core.OnlineBase``, and its ``select`` and ``update``
are replaced by native ones of the same parameters (the class's own carry
the documentation): method descriptors made for that very class
(``dpbandits._core.learner_method``), which the interpreter calls on its
specialised path for a method of the learner's exact type, with the
arguments passed without a tuple where the signature allows. They reach a
``dpbandits._core.OnlineCall`` built around the learner's engine. That object holds the learner's lock (a
reentrant lock with the ``threading.RLock`` interface, taken once per call
in Rust) and the outstanding selection, and plays the common round (strict
alternation, a Python float as the reward or loss) without a Python frame.
Any other call goes to the class's ``_checked_select`` /
``_checked_update``, which check everything and give the errors; they run
under the same lock and read the same outstanding selection
(:attr:`BoundOnlineCall._online_pending`).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from dpbandits import _core

__all__ = ["BoundOnlineCall"]

#: The native form of a documented method of these parameters (any other:
#: the general ``select(*args, **kwargs)`` / ``update(*args, policy_version=None)``).
_NATIVE_FORMS = {("select", ("self",)): "select_noargs", ("update", ("self", "losses")): "update_losses"}


class BoundOnlineCall(_core.OnlineBase):
    """Binds ``select`` / ``update`` to a ``_core.OnlineCall`` (see the module docs)."""

    __dict__: dict[str, Any]
    _online_forms: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The form of each native method (its parameters), inherited from
        # the base classes and set by a documented method of this class.
        forms: dict[str, str] = dict(getattr(cls, "_online_forms", {}))
        for name in ("select", "update"):
            documented = cls.__dict__.get(name)
            if documented is not None:
                params = tuple(inspect.signature(documented).parameters)
                forms[name] = _NATIVE_FORMS.get((name, params), name)
            if name in forms:
                # The documented (or inherited) method gives way to the
                # native one of the same parameters, a method descriptor of
                # this very class (see the module docs).
                setattr(cls, name, _core.learner_method(cls, forms[name]))
        cls._online_forms = forms

    def _checked_select(self, *args: Any) -> Any:  # pragma: no cover - every user overrides it
        raise NotImplementedError

    def _checked_update(self, *args: Any) -> None:  # pragma: no cover - every user overrides it
        raise NotImplementedError

    def _samples_indices(self) -> bool:
        """Whether ``select()`` samples an index in the engine (false: the
        checked path answers, e.g. with an error)."""
        return True

    def _new_call(self, engine: Any, old: Any) -> Any:
        """The call around ``engine``, keeping ``old``'s outstanding selection."""
        call = _core.OnlineCall(engine, self._checked_select, self._checked_update, simplex=self._samples_indices())
        if old is not None:
            call.pending = old.pending
        return call

    def _bind(self, engine: Any) -> Any:
        d = self.__dict__
        call = self._new_call(engine, d.get("_call"))
        d["_bound_engine"] = engine
        d["_call"] = call
        self._online_call = call
        return call

    def _online(self) -> Any:
        call = self.__dict__.get("_call")
        return self._bind(self.__dict__["_bound_engine"]) if call is None else call

    @property
    def _engine(self) -> Any:
        return self.__dict__["_bound_engine"]

    @_engine.setter
    def _engine(self, engine: Any) -> None:
        self._bind(engine)

    @property
    def lock(self) -> Any:
        """This learner's reentrant lock (a ``dpbandits._core.EngineLock``),
        held by ``select``, ``update`` and ``save``; as ``threading.RLock``."""
        return self._online().lock

    @property
    def _online_pending(self) -> Any:
        """The outstanding selection (None: none)."""
        return self._online().pending

    @_online_pending.setter
    def _online_pending(self, value: Any) -> None:
        self._online().pending = value

    def __getstate__(self) -> dict[str, Any]:
        state: dict[str, Any] = super().__getstate__()  # type: ignore[misc]
        call = state.pop("_call", None)
        state.pop("decision", None)  # bound to this learner's call; rebound on unpickling
        state["_online_pending_state"] = None if call is None else call.pending
        queue = None if call is None else call.queue
        if queue is not None:
            state["_online_rows_state"] = queue.rows()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        if "_engine" in state:  # pickled before the call was bound
            state["_bound_engine"] = state.pop("_engine")
        pending = state.pop("_online_pending_state", None)
        rows = state.pop("_online_rows_state", None)
        for old in ("_pending", "_point", "_queue"):
            value = state.pop(old, None)
            if old == "_queue" and value is not None:
                if hasattr(value, "rows"):  # the rows of a contextual learner
                    rows, value = value.rows(), None
                else:
                    value = value.oldest() if len(value) else None
            pending = value if pending is None else pending
        super().__setstate__(state)  # type: ignore[misc]
        call = self._bind(self.__dict__["_bound_engine"])
        if call.queue is not None:
            if rows is not None and len(rows):
                call.queue.push_many(rows)
        else:
            call.pending = pending
