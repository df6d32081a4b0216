"""The online ``select`` / ``update`` protocol shared by learner classes."""

from __future__ import annotations

import inspect
import os
import pickle
import threading
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits._validation import float_array
from dpbandits.errors import CheckpointError, DuplicatedNoiseWarning, StateError

# Guards the lazy creation of each learner's lock (subclasses do not call a
# base __init__, so the lock is made on first use).
_LOCK_GUARD = threading.Lock()


def _class_kind(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _loadable_classes() -> dict[str, type]:
    """The registry of learner classes a checkpoint may name: every class
    ``dpbandits.learners`` exports, by ``module:qualname``. Built from
    modules this package has already imported; a file's ``kind`` is only
    ever looked up here, so loading imports nothing and runs no code the
    file names."""
    from dpbandits import learners

    classes = (getattr(learners, name) for name in learners.__all__)
    return {_class_kind(cls): cls for cls in classes if isinstance(cls, type) and issubclass(cls, LearnerBase)}


def _resolve_kind(kind: str, path: str) -> type:
    """The learner class named by a checkpoint's ``kind``, from the registry
    of loadable classes (:func:`_loadable_classes`); CheckpointError for
    any other name (another module, a function, a class of a user module:
    nothing is imported on behalf of a file)."""
    target = _loadable_classes().get(kind) if isinstance(kind, str) else None
    if target is None:
        shown = repr(kind) if len(repr(kind)) <= 120 else repr(kind)[:117] + "..."
        raise CheckpointError(
            f"{path!r} holds a {shown}, which is not a learner class of dpbandits.learners; "
            "only those classes are loaded from a checkpoint"
        )
    return target


def engine_decision_set(decision_set: ArrayLike) -> NDArray[np.float64]:
    """``decision_set`` as a float64 ndarray for an engine's ``select`` or
    ``ucb``. The engine binding is the one check of a decision set (shape
    (k, d) with k >= 1, finite entries; ``decision_set`` in
    rust/src/py/learners.rs), made in one pass with the copy it reads. A
    float64 ndarray (the common case) passes through untouched: at K = 400
    actions, NumPy's finiteness test alone cost several microseconds per
    round."""
    if type(decision_set) is np.ndarray and decision_set.dtype == _FLOAT64:
        return decision_set
    # Lists, other dtypes, subclasses: converted (complex refused) by the
    # one conversion of the package's arrays; the engine checks the rest.
    return float_array("decision_set", decision_set, finite=False)


_FLOAT64 = np.dtype(np.float64)
_FLOATS = (float, np.float64)


class LearnerBase:
    """What every learner class shares: its constructor arguments as
    ``config``, its ``seed``, a ``repr`` that shows every argument that
    changes behaviour, ``spawn`` and ``fork``, and a warning on copies.

    Subclasses set ``self._args`` (the constructor's arguments) first thing
    in ``__init__`` and hold a Rust engine in ``self._engine`` (with
    ``to_bytes`` / ``from_bytes``).

    Checkpoints: :meth:`save` writes the class, the constructor
    configuration, the engine bytes (every stored node noise and the
    generator state) and the pending selection to a file atomically, with a
    format version and a SHA-256 checksum (or, with ``key=``, an
    HMAC-SHA256 tag; :mod:`dpbandits.checkpoint`); :meth:`load` restores a
    learner whose future decisions and noise are bit-identical to the
    original's, after checking that the engine bytes carry the noise the
    header's configuration calls for. Subclasses with more Python-side round
    state extend :meth:`_checkpoint_extra` / :meth:`_restore_extra`; those
    whose constructor takes something a file cannot hold (a function)
    override :meth:`_checkpoint_config` / :meth:`_from_checkpoint_config`.

    Budget: the guarantee is calibrated for ``horizon`` rounds. Past them
    ``select`` and ``update`` raise :class:`dpbandits.errors.StateError`
    (also after a checkpoint round trip); there is deliberately no
    "recalibrate" path, because extending a tree calibrated for n leaves
    changes every node's noise requirement. To go on, build a new learner
    for the longer horizon; its privacy loss composes with the first run's.

    Threads: every learner has a reentrant :attr:`lock`; ``select`` and
    ``update`` take it, so concurrent calls never interleave inside the
    engine and no update is lost. ``update(reward)`` refers to "the last
    selection", which another thread may have replaced: threads sharing a
    learner either hold the lock across the pair
    (``with learner.lock: i = learner.select(D); learner.update(r)``) or
    use the explicit form ``update(x, reward)``.

    Copies and pickles: a private learner's state includes its noise
    generator. A ``copy.deepcopy`` or a pickle round trip therefore
    duplicates future noise: two copies fed different rows add the same
    noise, and the difference of their releases reveals the rows exactly.
    Pickling is for checkpoints (one live copy at a time); to run copies
    side by side on purpose, use :meth:`fork`, which reseeds the copy's
    future noise. ``copy.copy`` and ``copy.deepcopy`` of a private learner
    warn with :class:`dpbandits.errors.DuplicatedNoiseWarning`.
    """

    _engine: Any
    #: The selection awaiting its update: an index (K-armed, elimination,
    #: EXP2) or the played features (contextual learners).
    _pending: int | NDArray[np.float64] | None
    _args: dict[str, Any]

    @property
    def lock(self) -> threading.RLock:
        """This learner's reentrant lock (held by ``select``, ``update``, ``save``)."""
        lock = self.__dict__.get("_lock")
        if lock is None:
            with _LOCK_GUARD:
                lock = self.__dict__.setdefault("_lock", threading.RLock())
        return lock  # type: ignore[no-any-return]

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_lock", None)  # locks do not pickle; a copy gets its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _checkpoint_extra(self) -> dict[str, Any]:
        """Python-side round state a checkpoint must carry (JSON-able values
        and arrays): here the pending selection of ``update(reward)``."""
        return {"pending": getattr(self, "_pending", None)}

    def _restore_extra(self, extra: Mapping[str, Any]) -> None:
        if "pending" in extra:
            pending = extra["pending"]
            if pending is None or (isinstance(pending, int) and not isinstance(pending, bool)):
                self._pending = pending  # an index (K-armed, elimination, EXP2 learners)
            else:
                self._pending = np.asarray(pending, dtype=np.float64)

    def save(self, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> None:
        """Writes a checkpoint of this learner to ``path`` atomically
        (temporary file ``.<name>.tmp``, fsync, rename, directory fsync):
        class, constructor configuration, engine state with every stored
        node noise and the generator, pending selection, format version,
        checksum. The checksum only detects accidents; with ``key`` (bytes
        or str) the file is authenticated with HMAC-SHA256 and only a
        ``load(path, key=key)`` accepts it: use one whenever the file is
        stored where others can write (see :mod:`dpbandits.checkpoint`).
        The file holds exact statistics: treat it like the raw data, and
        resume from it once (two live copies would add the same future
        noise)."""
        from dpbandits.checkpoint import write_checkpoint

        with self.lock:
            write_checkpoint(
                path, _class_kind(type(self)), self._checkpoint_config(), bytes(self._engine.to_bytes()),
                self._checkpoint_extra(), key=key,
            )

    def _checkpoint_config(self) -> dict[str, Any]:
        """The configuration a checkpoint stores (default: the constructor
        arguments); :meth:`_from_checkpoint_config` rebuilds the learner."""
        return self._args

    @classmethod
    def _from_checkpoint_config(cls, config: Mapping[str, Any]) -> Any:
        return cls(**config)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> Any:
        """The learner saved in ``path`` by :meth:`save`, continuing exactly
        where it stopped (bit-identical future decisions; no node noise is
        drawn again). ``Cls.load`` refuses a file holding a learner that is
        not a ``Cls``.

        The learner is rebuilt from the header's configuration, so its
        ``privacy`` is recomputed by the library's own formulas, never read
        from the file; the noise parameters its engine gets from them
        (noise law, scales, lattice exponents, shift, padding, horizon,
        bounds) must equal those the engine bytes in the file were built
        with, so a header edited to claim another guarantee (epsilon, delta,
        horizon, calibration, noise kind, sampler, ...) is refused, naming
        the field. ``key``: the file must be authenticated with it
        (HMAC-SHA256, see :meth:`save`); without it, it must not be.

        Raises :class:`dpbandits.errors.CheckpointError` (a ValueError) for
        a corrupted or truncated file, one from an unknown format version,
        one holding another class, one whose header does not match its
        engine, or one failing authentication."""
        from dpbandits.checkpoint import read_checkpoint, verify_engine

        name = os.fspath(path)
        ckpt = read_checkpoint(name, key=key)
        target = _resolve_kind(ckpt.kind, name)
        if not issubclass(target, cls):
            raise CheckpointError(f"{name!r} holds a {ckpt.kind}, not a {_class_kind(cls)}")
        try:
            learner = target._from_checkpoint_config(ckpt.config)
            restored = type(learner._engine).from_bytes(ckpt.state)
        except (TypeError, ValueError, KeyError) as exc:
            raise CheckpointError(f"{name!r}: the learner state does not restore: {exc}") from None
        # The engine just built from the header is the reference: its noise
        # parameters come from the library's calibration of the header's
        # configuration; the restored engine's come from the file.
        verify_engine(name, ckpt.config, learner._engine, restored)
        learner._engine = restored
        learner._restore_extra(ckpt.extra)
        return learner

    @property
    def config(self) -> Mapping[str, Any]:
        """The constructor arguments (a read-only copy)."""
        return dict(self._args)

    @property
    def seed(self) -> int | None:
        """The seed given at construction (None: operating-system entropy
        online; the replicate seed alone in a simulation)."""
        return self._args.get("seed")  # type: ignore[no-any-return]

    @property
    def secure(self) -> bool:
        """Whether the privacy noise comes from the operating system
        (``secure=True``): exact lattice noise that nobody, the operator
        included, can reproduce or predict from a seed."""
        return bool(getattr(self, "_secure_mode", False) or getattr(self._engine, "os_entropy", False))

    def _use_secure(self, secure: bool, sampler: str) -> None:
        """Switches the engine's privacy noise to operating-system entropy
        (``secure=True``), before the first round. Secure noise is the exact
        lattice noise: ``sampler="float"`` is refused with it."""
        if not isinstance(secure, bool):
            raise TypeError(f"invalid argument `secure`: expected True or False, got {secure!r}")
        if secure:
            if sampler != "lattice":
                raise ValueError("invalid argument `secure`: secure noise is exact lattice noise; "
                                 "sampler='float' cannot be secure")
            self._engine.use_os_entropy()

    def _secure_if_private(self, secure: bool, epsilon: float | None) -> None:
        """:meth:`_use_secure` for a learner that is private when ``epsilon`` is given."""
        if epsilon is None and secure:
            raise ValueError("invalid argument `secure`: the non-private learner (epsilon=None) draws no noise")
        if epsilon is not None:
            self._use_secure(secure, getattr(self, "sampler", "lattice"))

    def _secure_guarantee(self, guarantee: Any) -> Any:
        """``guarantee`` with the entropy source named when it is the operating system."""
        if self.secure and guarantee.is_private:
            return replace(guarantee, basis=f"{guarantee.basis}; secure sampler: operating-system entropy")
        return guarantee

    def spawn(self, seed: int | None) -> Any:
        """A fresh learner (round 0) with the same configuration and another seed."""
        return type(self)(**{**self._args, "seed": seed})

    def fork(self, seed: int | None = None) -> Any:
        """A copy at the current round whose future noise comes from a new
        generator (``seed=None``: operating-system entropy). Past releases
        are shared, future ones are independent, so running the copy and
        the original on different data leaks nothing beyond what each
        releases."""
        clone = pickle.loads(pickle.dumps(self))
        clone._engine.reseed(seed)
        clone._args = {**self._args, "seed": seed}
        return clone

    def _warn_copy(self) -> None:
        guarantee = getattr(self, "privacy", None)
        if guarantee is not None and guarantee.is_private:
            warnings.warn(
                f"copying {type(self).__name__} duplicates its noise generator: two copies fed different "
                "data add the same future noise, and the difference of their releases reveals the data. "
                "Use learner.fork() for an independent copy.",
                DuplicatedNoiseWarning,
                stacklevel=3,
            )

    def __copy__(self) -> Any:
        self._warn_copy()
        return pickle.loads(pickle.dumps(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        self._warn_copy()
        return pickle.loads(pickle.dumps(self))

    def __repr__(self) -> str:
        params = _init_parameters(type(self))
        shown = []
        for name, p in params.items():
            if name == "self" or name not in self._args:
                continue
            value = self._args[name]
            if p.default is inspect.Parameter.empty or value != p.default:
                shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


_INIT_PARAMETERS: dict[type, Mapping[str, inspect.Parameter]] = {}


def _init_parameters(cls: type[LearnerBase]) -> Mapping[str, inspect.Parameter]:
    """The constructor's parameters of a learner class, looked up once per
    class: ``simulate`` labels its results with ``repr(learner)``, and
    building a signature costs more than a short simulation."""
    params = _INIT_PARAMETERS.get(cls)
    if params is None:
        params = _INIT_PARAMETERS[cls] = inspect.signature(cls).parameters
    return params


class OnlineLearner(LearnerBase):
    """Round-by-round use: ``i = learner.select(D)``, then
    ``learner.update(reward)`` (for the action just selected) or
    ``learner.update(x, reward)`` (any played features, e.g. logged data).
    """

    d: int
    _pending: NDArray[np.float64] | None

    def select(self, decision_set: ArrayLike) -> int:
        """Index (row of ``decision_set``, shape (k, d)) of the action to play."""
        actions = engine_decision_set(decision_set)
        with self.lock:
            index: int = self._engine.select(actions)
            # A copy: the caller may reuse its array before update().
            self._pending = actions[index].copy()
        return index

    def update(self, *args: ArrayLike | float) -> None:
        """``update(reward)`` for the last selection, or ``update(x, reward)``
        (the form to use from several threads without holding :attr:`lock`)."""
        with self.lock:
            self._update(*args)

    def _update(self, *args: ArrayLike | float) -> None:
        if len(args) == 1:
            if self._pending is None:
                raise StateError(
                    "update(reward) needs a preceding select(); pass update(x, reward) to record another action"
                )
            x, reward = self._pending, args[0]
        elif len(args) == 2:
            x = float_array("x", args[0], ndim=1, finite=False)
            reward = args[1]
        else:
            raise TypeError("update takes (reward) or (x, reward)")
        # A Python float or a NumPy float64 (an entry of a reward array; a
        # float subclass), the common cases, is taken as is; anything else
        # goes through NumPy's conversion, as before.
        r = reward if type(reward) in _FLOATS else float(np.asarray(reward, dtype=np.float64))
        # The engine is the one check of (x, r): the length of x, then the
        # bounds of the privacy proof with finiteness ("invalid argument
        # `reward`: must be finite", "`x`: contains NaN or infinite
        # entries"), before anything is recorded; the simulation loop relies
        # on the same check.
        self._engine.observe(x, r)
        self._pending = None

    @property
    def t(self) -> int:
        """Rounds recorded so far."""
        return int(self._engine.t)
