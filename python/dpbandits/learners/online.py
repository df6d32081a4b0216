"""The online ``select`` / ``update`` protocol shared by learner classes."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import pickle
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._replay import _REPLAY
from dpbandits._validation import float_array, reward_scalar
from dpbandits.errors import CheckpointError, _warn_clipped
from dpbandits.learners.online_call import BoundOnlineCall
from dpbandits.learners.outstanding import only_row

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



@contextlib.contextmanager
def research_replay() -> Iterator[None]:
    """Inside this context, ``pickle`` round trips (pickled or unpickled
    inside it), ``copy.copy`` and ``copy.deepcopy`` of learners are
    bit-identical research replays: the copy draws exactly the noise the
    original would have drawn, and spends on no ledger. For reproducible
    research on simulated data only: two such copies fed neighbouring real
    rewards release values whose difference is the data difference.
    ``load(path, replay=True)`` is the checkpoint form. The context is per
    thread and per task (a context variable).

    >>> import copy, dpbandits as dp
    >>> a = dp.DPKLUCB(k=2, horizon=100, epsilon=1.0, seed=3)
    >>> for r in (1.0, 0.0, 1.0):
    ...     _ = a.select()
    ...     a.update(r)
    >>> with dp.research_replay():
    ...     b = copy.deepcopy(a)
    >>> b.lineage["origin"], b.seed
    ('replay', 3)
    """
    token = _REPLAY.set(True)
    try:
        yield
    finally:
        _REPLAY.reset(token)


def _new_lineage(parent: str | None, generation: int, origin: str) -> dict[str, Any]:
    from dpbandits.checkpoint import new_checkpoint_id

    return {"learner_id": new_checkpoint_id(), "parent": parent, "generation": generation, "origin": origin}


class LearnerBase:
    """What every learner class shares: its constructor arguments as
    ``config``, its ``seed``, a ``repr`` that shows every argument that
    changes behaviour, checkpoints, ``spawn``, ``fork`` and copies that
    never duplicate future noise.

    Subclasses set ``self._args`` (the constructor's arguments) first thing
    in ``__init__`` and hold a Rust engine in ``self._engine`` (with
    ``to_bytes`` / ``from_bytes`` and ``reseed``).

    Checkpoints: :meth:`save` writes the class, the constructor
    configuration, the engine bytes (every stored node noise and the
    generator state), the pending selection and the lineage (a random
    checkpoint id, the parent's id and generation; :mod:`dpbandits.checkpoint`)
    to a file atomically, with a format version and a SHA-256 checksum (or,
    with ``key=``, an HMAC-SHA256 tag). :meth:`load` restores it for use
    (future noise re-keyed from operating-system entropy) or, with
    ``replay=True``, as a bit-identical research replay. Subclasses with
    more Python-side round state extend :meth:`_checkpoint_extra` /
    :meth:`_restore_extra`; those whose constructor takes something a file
    cannot hold (a function) override :meth:`_checkpoint_config` /
    :meth:`_from_checkpoint_config`.

    Restores never release a value twice from different data. Two live
    copies of one state with the same future noise, fed neighbouring
    rewards, would release values whose difference is exactly the data
    difference (epsilon = infinity). So every way of making a second live
    copy of a private learner that has recorded a round re-keys the copy's
    future noise from operating-system entropy: :meth:`load` (unless
    ``replay=True``), :meth:`fork` (its ``seed``), ``pickle`` round trips,
    ``copy.copy`` and ``copy.deepcopy``. What stays shared is only noise
    already attached to data both copies hold (the audit of every engine is
    in :meth:`load`), so each copy's new releases carry independent noise
    and the copies' privacy losses compose (each charged on a
    :class:`dpbandits.Ledger`). A learner at round 0 is a configuration: a
    copy of a seeded one is the same seeded learner (as building it twice
    with that seed), a copy of one with ``seed=None`` gets its own
    operating-system root. Inside :func:`research_replay` (and with
    ``load(..., replay=True)``) restores and copies are bit-identical, for
    reproducible research on simulated data only. The simulation machinery
    (``simulate``, ``sweep``) never restores a learner's state: it builds one
    fresh engine per replicate from the configuration and the replicate
    seed, so seeded simulations stay reproducible.

    Ledger: every learner class's constructor takes the keyword arguments
    ``ledger`` and ``dataset``; with them the new learner is registered on
    the :class:`dpbandits.Ledger` as the last step of construction, exactly
    as by ``ledger.register(learner, dataset=dataset)`` (the wrapper is
    installed on each subclass's ``__init__`` by ``__init_subclass__``).
    Each constructor also declares them, typed, in its signature and its
    docstring, so that type checkers and the API reference see them; the
    wrapper takes them before the constructor runs.

    Budget: the guarantee is calibrated for ``horizon`` rounds. Past them
    ``select`` and ``update`` raise :class:`dpbandits.errors.StateError`
    (also after a checkpoint round trip); there is deliberately no
    "recalibrate" path, because extending a tree calibrated for n leaves
    changes every node's noise requirement. To go on, build a new learner
    for the longer horizon; its privacy loss composes with the first run's.

    Threads: every learner has a reentrant :attr:`lock`; ``select`` and
    ``update`` take it, so concurrent calls never interleave inside the
    engine and no update is lost. ``update(reward)`` needs exactly one
    outstanding selection and raises :class:`dpbandits.errors.StateError`
    otherwise: threads sharing a learner use the explicit form
    ``update(action, reward)`` (the arm, or the played features), or hold
    the lock across the pair
    (``with learner.lock: i = learner.select(D); learner.update(r)``).

    Processes: ``os.fork`` of a process holding a live learner copies it
    without any of the above (no Python code runs); do not use the learner
    in both processes. Ship learners to other processes by pickling (a
    restore for use) or by :meth:`save` / :meth:`load`.
    """

    _engine: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Gives every learner class's constructor the keyword arguments
        ``ledger`` and ``dataset`` (:func:`_registering_init`)."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_registers", False):
            cls.__init__ = _registering_init(init)  # type: ignore[method-assign]
        if "__doc__" in cls.__dict__:
            cls.__doc__ = _with_ledger_parameters(cls.__doc__)

    #: The selection awaiting its update: an index (K-armed, elimination,
    #: EXP2) or the played features (contextual learners).
    _pending: int | NDArray[np.float64] | None
    _args: dict[str, Any]
    #: A learner run inside another: the outer class's name and the frames
    #: in between, for its clipped-reward warning (see ``_warn_clipped``).
    _warn_as: tuple[str, int]

    @property
    def lock(self) -> threading.RLock:
        """This learner's reentrant lock (held by ``select``, ``update``, ``save``)."""
        lock = self.__dict__.get("_lock")
        if lock is None:
            with _LOCK_GUARD:
                lock = self.__dict__.setdefault("_lock", threading.RLock())
        return lock  # type: ignore[no-any-return]

    # ------------------------------------------------------------ lineage

    def _lineage_state(self) -> dict[str, Any]:
        lineage = self.__dict__.get("_lineage")
        if lineage is None:
            with _LOCK_GUARD:
                lineage = self.__dict__.setdefault("_lineage", _new_lineage(None, 0, "new"))
        return lineage  # type: ignore[no-any-return]

    @property
    def lineage(self) -> Mapping[str, Any]:
        """Where this live learner's state comes from (a read-only copy):
        ``learner_id`` (random, one per live copy), ``parent`` (the id of
        the checkpoint or learner it was restored or copied from; None when
        built by its constructor), ``generation`` (restores and copies since
        the constructor), ``origin`` (``"new"``, ``"use"``: restored for
        use, ``"replay"``: a bit-identical research replay, ``"fork"``,
        ``"copy"``, ``"pickle"``) and ``ledger`` (the privacy ledger it
        spends on, or None)."""
        return {**self._lineage_state(), "ledger": self.__dict__.get("_ledger")}

    def _is_private(self) -> bool:
        guarantee = getattr(self, "privacy", None)
        return guarantee is not None and bool(guarantee.is_private)

    def _restored(self, origin: str, parent: str | None, generation: int, *, replay: bool) -> None:
        """Makes this object (a new live copy of a saved or copied state) a
        learner of its own: a new lineage and, unless ``replay``, future
        noise re-keyed from operating-system entropy when the state holds
        data (or its root came from the operating system: ``seed=None``).
        A seeded learner at round 0 is a configuration and stays seeded."""
        self.__dict__["_lineage"] = _new_lineage(parent, generation, "replay" if replay else origin)
        if replay or not self._is_private():
            return
        recorded = int(self._engine.t) > 0
        if recorded or self.seed is None:
            self._engine.reseed(None)
            if recorded:
                self._args = {**self._args, "seed": None}

    def _charge_copy(self, origin: str, source: Mapping[str, Any] | None) -> None:
        """Charges a new live copy of a learner that spends on a ledger (its
        guarantee once more, on the same data set); PrivacyBudgetError when
        that exceeds the budget. The copy spends on the same ledger."""
        binding = self.__dict__.get("_ledger")
        if binding is None:
            return
        from dpbandits.ledger import Ledger

        Ledger._shared(binding["path"])._charge_copy(self, binding, origin, source)

    def _clone(self) -> Any:
        """A bit-identical copy (pickled inside :func:`research_replay`)."""
        token = _REPLAY.set(True)
        try:
            clone = pickle.loads(pickle.dumps(self))
        finally:
            _REPLAY.reset(token)
        binding = self.__dict__.get("_ledger")
        if binding is not None:
            clone.__dict__["_ledger"] = binding
        return clone

    def __getstate__(self) -> dict[str, Any]:
        self._lineage_state()  # the copy names this learner as its parent
        state = self.__dict__.copy()
        state.pop("_lock", None)  # locks do not pickle; a copy gets its own
        if _REPLAY.get():
            state["_replay_pickle"] = True  # pickled inside research_replay(): unpickles bit-identically
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A pickle round trip is a restore: for use (re-keyed, charged on
        the learner's ledger) unless it was pickled or is unpickled inside
        :func:`research_replay`."""
        state = dict(state)
        replay = bool(state.pop("_replay_pickle", False)) or _REPLAY.get()
        source = state.get("_lineage")
        self.__dict__.update(state)
        parent = source.get("learner_id") if isinstance(source, dict) else None
        generation = int(source.get("generation", 0)) + 1 if isinstance(source, dict) else 1
        self._restored("pickle", parent, generation, replay=replay)
        if replay:
            self.__dict__.pop("_ledger", None)  # a research replay spends on no ledger
        else:
            self._charge_copy("pickle", source)

    def _checkpoint_extra(self) -> dict[str, Any]:
        """Python-side round state a checkpoint must carry (JSON-able values
        and arrays): here the pending selection of ``update(reward)``."""
        return {"pending": getattr(self, "_pending", None)}

    def _match_checkpoint(self, extra: Mapping[str, Any], name: str) -> None:
        """Brings the engine built from the header to the checkpoint's
        structure (for K-armed learners: the arms added during the run)
        before it is compared with the restored engine; nothing here."""

    def _restore_extra(self, extra: Mapping[str, Any]) -> None:
        if "pending" in extra:
            pending = extra["pending"]
            if pending is None or (isinstance(pending, int) and not isinstance(pending, bool)):
                self._pending = pending  # an index (K-armed, elimination, EXP2 learners)
            else:
                self._pending = np.asarray(pending, dtype=np.float64)

    def save(self, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> str:
        """Writes a checkpoint of this learner to ``path`` atomically
        (temporary file ``.<name>.tmp``, fsync, rename, directory fsync):
        class, constructor configuration, engine state with every stored
        node noise and the generator, pending selection, lineage (a new
        random checkpoint id, this learner's id, its parent and generation,
        its ledger), format version, checksum; returns the checkpoint id.
        The checksum only detects accidents; with ``key`` (bytes or str)
        the file is authenticated with HMAC-SHA256 and only a
        ``load(path, key=key)`` accepts it: use one whenever the file is
        stored where others can write (see :mod:`dpbandits.checkpoint`).
        The file holds exact statistics: treat it like the raw data.

        Deployment: restore from the newest checkpoint, once. A learner that
        released something after its last save and is then restored from
        that save releases those rounds again with other noise (the
        privacy loss of those rounds doubles); :meth:`autosave` makes every
        release durable before the decision that reveals it is returned,
        so the newest checkpoint always holds every release."""
        from dpbandits.checkpoint import new_checkpoint_id, write_checkpoint

        with self.lock:
            lineage = self._lineage_state()
            checkpoint_id = new_checkpoint_id()
            header = {
                "checkpoint_id": checkpoint_id,
                "learner_id": lineage["learner_id"],
                "parent": lineage["parent"],
                "generation": lineage["generation"],
                "origin": lineage["origin"],
                "round": int(self._engine.t),
                "ledger": self.__dict__.get("_ledger"),
            }
            write_checkpoint(
                path, _class_kind(type(self)), self._checkpoint_config(), bytes(self._engine.to_bytes()),
                self._checkpoint_extra(), key=key, lineage=header,
            )
            binding = header["ledger"]
            if binding is not None:
                # After the file: a crash in between leaves a newest file the
                # ledger does not know, whose restore is then simply the first.
                from dpbandits.ledger import Ledger

                Ledger._shared(binding["path"])._record_save(self, binding, header, os.fspath(path))
        return checkpoint_id

    def autosave(self, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> Any:
        """This learner in write-ahead autosave mode: a
        :class:`dpbandits.autosave.Autosaved` that forwards ``select``,
        ``update`` and the rest to this learner and makes every new release
        durable (a checkpoint written to ``path`` and fsynced, :meth:`save`)
        before the decision that reveals it is returned. Use the returned
        object, not this learner, from then on."""
        from dpbandits.autosave import Autosaved

        return Autosaved(self, path, key=key)

    def _checkpoint_config(self) -> dict[str, Any]:
        """The configuration a checkpoint stores (default: the constructor
        arguments); :meth:`_from_checkpoint_config` rebuilds the learner."""
        return self._args

    @classmethod
    def _from_checkpoint_config(cls, config: Mapping[str, Any]) -> Any:
        return cls(**config)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        key: bytes | str | None = None,
        replay: bool = False,
        ledger: Any = None,
        charge: bool = False,
    ) -> Any:
        """The learner saved in ``path`` by :meth:`save`. ``Cls.load``
        refuses a file holding a learner that is not a ``Cls``.

        Restore for use (default): every noise draw the restored learner
        makes comes from a generator re-keyed from operating-system entropy
        (``engine.reseed(None)``; ``seed`` becomes None), so two restores of
        one file, fed neighbouring rewards, release values with independent
        noise. Audit of the noise an engine stores before it is released,
        which is kept: a tree node's noise is drawn when the node completes
        and covers only rewards already recorded (binary tree counters of
        the trees, Gram-matrix trees, loss trees; ``rust/src/counter/tree``);
        the padding of a padded tree (fresh or persistent) is part of the
        current release and independent of the data; a factorization
        counter draws one noise vector per step when the step's value
        arrives and keeps it only through its effect on the buffers of the
        data already added (``rust/src/counter/factorization.rs``); phased
        learners draw a phase's noise when the phase ends
        (``rust/src/policy/phased_mab.rs``); the gap-estimation batches of
        ``PrivateThompsonSampling`` at the end of the batch
        (``rust/src/policy/mab.rs``); elimination, local and shuffle
        learners per report or at the batch end
        (``rust/src/policy/elimination.rs``, ``linucb_trust.rs``). No engine
        draws privacy noise ahead of the data it protects. Kept noise
        therefore only enters values of data both restores share, and every
        new reward enters new values through fresh noise. The permutation
        and sampling generators are re-keyed too. Such a restore is a second
        live copy of the saved state: on a :class:`dpbandits.Ledger` (the
        one the file names, or ``ledger``) it is recorded, and a second
        restore of the same checkpoint id for use is refused
        (PrivacyBudgetError) unless ``charge=True``, which charges the
        learner's guarantee once more on its data set.

        ``replay=True``: a bit-identical research replay (the future noise
        the saved learner would have drawn; nothing drawn again). Only for
        research on simulated or already-public data: such a learner spends
        on no ledger and :meth:`dpbandits.Ledger.register` refuses it.

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
        engine, or one failing authentication;
        :class:`dpbandits.errors.PrivacyBudgetError` for a restore the
        ledger refuses."""
        from dpbandits.checkpoint import read_checkpoint, verify_engine

        if not isinstance(replay, bool):
            raise TypeError(f"invalid argument `replay`: expected True or False, got {replay!r}")
        if not isinstance(charge, bool):
            raise TypeError(f"invalid argument `charge`: expected True or False, got {charge!r}")
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
        learner._match_checkpoint(ckpt.extra, name)
        verify_engine(name, ckpt.config, learner._engine, restored)
        learner._engine = restored
        learner._restore_extra(ckpt.extra)
        lineage = ckpt.lineage
        learner._restored("use", lineage.get("checkpoint_id"), int(lineage.get("generation", 0)) + 1, replay=replay)
        binding = lineage.get("ledger")
        if not replay and (binding is not None or ledger is not None):
            from dpbandits.ledger import Ledger

            if ledger is None:
                Ledger._shared(binding["path"])._record_restore(  # type: ignore[index]
                    learner, name, lineage, charge=charge)
            else:
                if not isinstance(ledger, Ledger):
                    raise TypeError(f"invalid argument `ledger`: expected a dpbandits.Ledger, got {ledger!r}")
                ledger._record_restore(learner, name, lineage, charge=charge)
        return learner

    @property
    def config(self) -> Mapping[str, Any]:
        """The constructor arguments (a read-only copy)."""
        return dict(self._args)

    @property
    def clipped_rewards(self) -> int:
        """Inputs recorded outside the declared bounds and clipped into them
        (``bounds="clip"``, the default): rewards outside ``reward_range``
        (K-armed and elimination learners), (x, reward) pairs with
        ||x|| > L or |reward| > B (linear and contextual learners), loss
        vectors or losses outside the loss set (online-learning and experts
        learners). Part of the saved state (restores, copies and forks keep
        it); the first clipped input raises
        :class:`dpbandits.errors.ClippedRewardWarning`. Always 0 for a
        learner that refuses out-of-range input (``bounds="error"``, the
        best-arm identification learners)."""
        return int(getattr(self._engine, "clipped_rewards", 0))

    def _warn_clipped(self, what: str, declared: str, stacklevel: int = 2) -> None:
        """The :class:`dpbandits.errors.ClippedRewardWarning` of this
        learner's first clipped input ``what`` outside ``declared``;
        ``stacklevel`` counts from the caller (2: the caller's caller). A
        learner run inside another (``_warn_as``: the outer class's name
        and its frames in between) warns as that one."""
        name, extra = self.__dict__.get("_warn_as") or (type(self).__name__, 0)
        _warn_clipped(name, what, declared, stacklevel + 1 + extra)

    @property
    def seed(self) -> int | None:
        """The seed given at construction (None: operating-system entropy
        online, also after a restore for use; the replicate seed alone in a
        simulation)."""
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
        """A fresh learner (round 0) with the same configuration and another
        seed (None: operating-system entropy, the choice for use on real
        data). It shares nothing with this learner and spends on no ledger
        until registered (:meth:`dpbandits.Ledger.register`). Two learners
        built with the same seed add the same noise: seeds are for
        research on simulated data."""
        return type(self)(**{**self._args, "seed": seed})

    def fork(self, seed: int | None = None) -> Any:
        """A copy at the current round whose future noise comes from a new
        generator (``seed=None``: operating-system entropy). Past releases
        are shared, future ones are independent, so running the copy and
        the original on different data leaks nothing beyond what each
        releases; on the same users their losses compose. A fork of a
        learner on a ledger is charged there (its guarantee once more) and
        must use operating-system entropy (two forks with one seed would
        add the same noise)."""
        binding = self.__dict__.get("_ledger")
        if seed is not None and binding is not None:
            raise ValueError("invalid argument `seed`: a learner on a privacy ledger forks with operating-system "
                             "entropy only (seed=None); two forks with one seed would add the same noise")
        clone = self._clone()
        source = self._lineage_state()
        clone._engine.reseed(seed)
        clone._args = {**self._args, "seed": seed}
        clone.__dict__["_lineage"] = _new_lineage(source["learner_id"], source["generation"] + 1, "fork")
        if binding is not None:
            clone.__dict__["_ledger"] = binding
            clone._charge_copy("fork", source)
        return clone

    def _copy(self) -> Any:
        clone = self._clone()
        source = self._lineage_state()
        replay = _REPLAY.get()
        clone._restored("copy", source["learner_id"], source["generation"] + 1, replay=replay)
        if replay:
            clone.__dict__.pop("_ledger", None)
        else:
            clone._charge_copy("copy", source)
        return clone

    def __copy__(self) -> Any:
        """A restore for use of this learner's state (re-keyed, charged on
        its ledger; bit-identical inside :func:`research_replay`)."""
        return self._copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """As :meth:`__copy__`."""
        return self._copy()

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


#: The loss set of each geometry, as the clipped-loss warning names it.
LOSS_SETS = {
    "simplex": "loss set [0, 1]^n",
    "ball": "loss set ||losses||_2 <= 1",
    "cube": "loss set ||losses||_1 <= 1",
}


def clipped_losses(losses: ArrayLike, geometry: str = "simplex") -> str:
    """The first clipped loss vector of ``losses`` (rows, or one row), as
    the warning names it: its first entry outside [0, 1] (simplex) or its
    norm (ball: Euclidean, cube: l1)."""
    rows = np.atleast_2d(np.asarray(losses, dtype=np.float64))
    if geometry == "simplex":
        outside = (rows < 0.0) | (rows > 1.0)
        r = int(np.argmax(outside.any(axis=1)))
        i = int(np.argmax(outside[r]))
        prefix = f"losses[{r}, {i}]" if rows.shape[0] > 1 else f"losses[{i}]"
        return f"{prefix} = {rows[r, i]}"
    norms = np.linalg.norm(rows, 2 if geometry == "ball" else 1, axis=1)
    r = int(np.argmax(norms > 1.0 + 1e-12))
    prefix = f"losses[{r}]" if rows.shape[0] > 1 else "losses"
    return f"{prefix} of norm {norms[r]}"


def _registering_init(init: Any) -> Any:
    """``init`` (a learner class's ``__init__``) taking two more keyword
    arguments, ``ledger`` (a :class:`dpbandits.Ledger`) and ``dataset`` (a
    data set name with a budget on it): when given, the learner is
    registered on the ledger as the last step of construction, exactly as
    ``ledger.register(learner, dataset=dataset)``
    (:meth:`dpbandits.Ledger.register`: the learner's whole guarantee is
    charged in one transaction, or construction fails with
    :class:`~dpbandits.errors.PrivacyBudgetError` and nothing is recorded).
    Neither is a constructor argument of the configuration (``config``,
    checkpoints, :meth:`LearnerBase.spawn`): a spawned or rebuilt learner is
    registered by its own call. A constructor that calls a base class's
    constructor registers once, in the outermost call."""

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, ledger: Any = None, dataset: str | None = None, **kwargs: Any) -> None:
        if (ledger is None) != (dataset is None):
            given, missing = ("ledger", "dataset") if dataset is None else ("dataset", "ledger")
            raise ValueError(f"invalid argument `{missing}`: `{given}` needs `{missing}` too (a learner registers "
                             "on a ledger's data set: ledger=Ledger(path), dataset='name')")
        if ledger is not None:
            from dpbandits.ledger import Ledger

            if not isinstance(ledger, Ledger):
                raise TypeError(f"invalid argument `ledger`: expected a dpbandits.Ledger, got {type(ledger).__name__}")
        init(self, *args, **kwargs)
        # A constructor that declares them (for type checkers and the API
        # reference) and collects its arguments from locals(): they are not
        # configuration.
        arguments = self.__dict__.get("_args")
        if isinstance(arguments, dict):
            arguments.pop("ledger", None)
            arguments.pop("dataset", None)
        if ledger is not None:
            ledger.register(self, dataset=dataset)

    signature = inspect.signature(init)
    params = list(signature.parameters.values())
    if not any(p.name == "ledger" for p in params):
        extra = [inspect.Parameter("ledger", inspect.Parameter.KEYWORD_ONLY, default=None,
                                   annotation="Ledger | None"),
                 inspect.Parameter("dataset", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="str | None")]
        at = next((i for i, p in enumerate(params) if p.kind is inspect.Parameter.VAR_KEYWORD), len(params))
        params = [*params[:at], *extra, *params[at:]]
    __init__.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    __init__._registers = True  # type: ignore[attr-defined]
    return __init__


_LEDGER_PARAMETERS = """    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).
"""


def _with_ledger_parameters(doc: str | None) -> str | None:
    """A class docstring with ``ledger`` and ``dataset`` appended to its
    numpy-style Parameters section (unchanged if it has none)."""
    if not doc or "ledger:\n" in doc:
        return doc
    head = "\n    Parameters\n    ----------\n"
    start = doc.find(head)
    if start < 0:
        return doc
    body = start + len(head)
    match = re.compile(r"\n\n    [A-Z][\w ]*\n    -{3,}\n|\n\n    [^ \n]").search(doc, body)
    end = len(doc.rstrip()) if match is None else match.start()
    return f"{doc[:end]}\n{_LEDGER_PARAMETERS.rstrip()}{doc[end:]}"


_INIT_PARAMETERS: dict[type, Mapping[str, inspect.Parameter]] = {}


def _init_parameters(cls: type[LearnerBase]) -> Mapping[str, inspect.Parameter]:
    """The constructor's parameters of a learner class, looked up once per
    class: ``simulate`` labels its results with ``repr(learner)``, and
    building a signature costs more than a short simulation."""
    params = _INIT_PARAMETERS.get(cls)
    if params is None:
        params = _INIT_PARAMETERS[cls] = inspect.signature(cls).parameters
    return params


class OnlineLearner(BoundOnlineCall, LearnerBase):
    """The online protocol of the contextual linear learners.

    ``i = learner.select(D)`` (D of shape (k, d)) returns the row to play;
    ``learner.select_many(Ds)`` (shape (n, k, d)) makes n selections in
    one call (in Rust, the GIL released), equal bit for bit to n calls of
    ``select``. The reward of a played row x is recorded with
    ``learner.update(x, reward)`` at any time and in any order (delayed,
    out of order, or logged data that was never selected), or many at once
    with ``learner.update_many(X, rewards)``, equal bit for bit to the loop
    of ``update(x, reward)``. ``learner.update(reward)`` is for strict
    alternation: it records the reward of the one outstanding selection,
    and raises :class:`dpbandits.errors.StateError` naming the outstanding
    rows when there is none or more than one (:attr:`outstanding`).

    Delayed feedback and privacy: the protected unit is one user's (x,
    reward). Each recorded pair enters the private statistics once, in
    arrival order (the release counts recorded rewards, not selections);
    decisions read only released values. The order in which rewards enter
    depends only on the rows played and on arrival times (assumed
    independent of the reward values), so delay changes which release a
    decision reads, never the guarantee. A selection made before a reward
    arrives simply reads an older release (each outstanding reward adds
    at most a bounded term to the regret, Joulani, Gyorgy & Szepesvari,
    ICML 2013).

    Threads: ``select`` and ``update`` are bound to the engine (see
    :mod:`dpbandits.learners.online_call`); the learner's lock is taken once
    per call, in Rust. Hold ``learner.lock`` across a ``select`` /
    ``update(reward)`` pair from several threads, or use
    ``update(x, reward)``.
    """

    d: int

    def _new_call(self, engine: Any, old: Any) -> Any:
        queue = old.queue if old is not None else _core.RowQueue(self.d)
        return _core.OnlineCall(engine, self._checked_select, self._checked_update, queue=queue)

    def _rows(self) -> Any:
        """The outstanding rows (a ``dpbandits._core.RowQueue``, the
        interface of :class:`~dpbandits.learners.outstanding.OutstandingRows`)."""
        return self._online().queue

    @property
    def _pending(self) -> NDArray[np.float64] | None:  # type: ignore[override]
        """The most recent outstanding row (None: none outstanding)."""
        queue = self._rows()
        return queue.rows()[-1] if len(queue) else None

    @_pending.setter
    def _pending(self, row: ArrayLike | None) -> None:
        queue = self._rows()
        queue.clear()
        if row is not None:
            queue.push(np.asarray(row, dtype=np.float64))

    @property
    def outstanding(self) -> NDArray[np.float64]:
        """The feature rows selected and not yet updated, oldest first,
        shape (m, d) (a copy)."""
        with self.lock:
            return self._rows().rows()

    def select(self, decision_set: ArrayLike) -> int:
        """Index (row of ``decision_set``, shape (k, d)) of the action to play."""
        return int(self._online().select(decision_set))

    def _checked_select(self, decision_set: ArrayLike) -> int:
        # A float64 ndarray is passed to the engine by the bound call, which
        # the engine checks; anything else is converted first.
        actions = engine_decision_set(decision_set)
        with self.lock:
            index: int = self._engine.select(actions)
            # A copy: the caller may reuse its array before update().
            self._rows().push(np.ascontiguousarray(actions[index]))
        return index

    def select_many(self, decision_sets: ArrayLike) -> NDArray[np.int64]:
        """The selections for n decision sets (shape (n, k, d)), as n calls
        of :meth:`select` would make them (bit for bit), in one call to the
        engine with the GIL released. Every selection is outstanding until
        its update."""
        sets = decision_sets if type(decision_sets) is np.ndarray and decision_sets.dtype == _FLOAT64 \
            else float_array("decision_sets", decision_sets, finite=False)
        with self.lock:
            chosen, error = self._engine.select_many(sets)
            if len(chosen):
                self._rows().push_many(sets[np.arange(len(chosen)), chosen])
        if error is not None:
            raise error
        return chosen  # type: ignore[no-any-return]

    def update(self, *args: ArrayLike | float) -> None:
        """``update(x, reward)``: the reward of playing the row ``x``, at any
        time (it settles the oldest outstanding selection of that row, if
        any). ``update(reward)``: the reward of the one outstanding
        selection (StateError when none or several are outstanding)."""
        self._online().update(*args)

    def _checked_update(self, *args: ArrayLike | float) -> None:
        with self.lock:
            self._update(self._rows(), *args)

    def _update(self, queue: Any, *args: ArrayLike | float) -> None:
        if len(args) == 1:
            x, reward = only_row(queue, "reward"), args[0]
        elif len(args) == 2:
            x = float_array("x", args[0], ndim=1, finite=False)
            reward = args[1]
        else:
            raise TypeError("update takes (reward) or (x, reward)")
        # A Python float or a NumPy float64 (an entry of a reward array; a
        # float subclass), the common cases, is taken as is; anything else
        # must be one real number (a string, None, a bool or an array is refused).
        r = reward if type(reward) in _FLOATS else reward_scalar("reward", reward)
        # The engine is the one check of (x, r): the length of x, then the
        # bounds of the privacy proof with finiteness ("invalid argument
        # `reward`: must be finite", "`x`: contains NaN or infinite
        # entries"), before anything is recorded; the simulation loop relies
        # on the same check.
        if self._engine.observe(x, r):
            self._warn_clipped_pair(x, r, 4)
        if len(args) == 1:
            queue.pop_first()
        else:
            queue.settle(x)

    def _warn_first_clip(self, reward: float, x: ArrayLike, stacklevel: int = 2) -> None:
        """The warning of the first clipped (x, reward) pair (``stacklevel``
        1: the caller; the online call in Rust calls this too)."""
        self._warn_clipped_pair(np.asarray(x, dtype=np.float64), reward, stacklevel + 2)

    def _declared_bounds(self) -> tuple[float, float]:
        """(L, B) the engine enforces: ||x|| <= L, |reward| <= B."""
        params = self._engine.noise_parameters()
        bounds = params.get("bounds") or {"l": params["l"], "b_tilde": params["b"]}
        return float(bounds["l"]), float(bounds["b_tilde"])

    def _warn_clipped_pair(self, x: NDArray[np.float64], reward: Any, stacklevel: int) -> None:
        """The warning of the first clipped (x, reward) pair."""
        L, B = self._declared_bounds()
        norm = float(np.linalg.norm(np.asarray(x, dtype=np.float64)))
        what = f"reward {reward}" if abs(reward) > B else f"x with ||x|| = {norm}"
        shown_b = "inf" if B >= 1e308 else B
        self._warn_clipped(what, f"bounds ||x|| <= L = {L}, |reward| <= B = {shown_b}", stacklevel)

    def update_many(self, X: ArrayLike, rewards: ArrayLike) -> None:
        """The rewards of the played rows ``X`` (shape (n, d)), recorded in
        order: equal bit for bit to ``update(X[i], rewards[i])`` for i = 0..n-1,
        in one call to the engine with the GIL released. On a refused row
        (bounds, horizon) the rows before it are recorded, as the loop would."""
        xs = float_array("X", X, ndim=2, finite=False)
        ys = float_array("rewards", rewards, ndim=1, finite=False)
        with self.lock:
            fresh = self._engine.clipped_rewards == 0
            done, error = self._engine.observe_many(xs, ys)
            self._rows().settle_many(xs[:done])
            if fresh and self._engine.clipped_rewards > 0:
                self._warn_clipped_batch(xs[:done], ys[:done])
        if error is not None:
            raise error

    def _warn_clipped_batch(self, xs: NDArray[np.float64], ys: NDArray[np.float64]) -> None:
        """The warning of a batch's first clipped (x, reward) pair."""
        L, B = self._declared_bounds()
        outside = (np.abs(ys) > B) | (np.linalg.norm(xs, axis=1) > L * (1.0 + 1e-12))
        i = int(np.argmax(outside))
        self._warn_clipped_pair(xs[i], float(ys[i]), 4)

    def _checkpoint_extra(self) -> dict[str, Any]:
        """The outstanding rows (oldest first) with the base's round state."""
        extra = super()._checkpoint_extra()
        extra["outstanding"] = self._rows().rows()
        return extra

    def _restore_extra(self, extra: Mapping[str, Any]) -> None:
        super()._restore_extra(extra)
        if "outstanding" in extra:
            rows = np.asarray(extra["outstanding"], dtype=np.float64).reshape(-1, self.d)
            queue = self._rows()
            queue.clear()
            queue.push_many(rows)

    @property
    def policy_version(self) -> int:
        """Increments when a new policy is available: every recorded reward
        makes a new release (the tree's or counter's next prefix sum)."""
        return int(self._engine.t)

    def policy(self) -> Any:
        """A read-only, picklable policy built only from released values
        (:mod:`dpbandits.serving_linear`): it selects as this learner would
        now, and serving it costs no privacy. Its ``version`` is
        :attr:`policy_version`."""
        from dpbandits.serving_linear import LinearUCBPolicy

        with self.lock:
            return LinearUCBPolicy(self._engine.policy(), self.policy_version)

    @property
    def t(self) -> int:
        """Rounds recorded so far."""
        return int(self._engine.t)


class EngineMethods(_core.EngineBase, LearnerBase):
    """A learner whose ``select`` and ``update`` are its engine's own
    methods (the K-armed and fixed-budget learners): the class's documented
    methods give way to native method descriptors of the class
    (``dpbandits._core.learner_method``, "engine_select" and
    "engine_update"), which call the engine set on the learner's native
    base (``dpbandits._core.EngineBase``) in one Rust call, so validation,
    the lock and the protocol cost one Rust call and no bound method is
    stored in the instance. The engine holds the lock."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Every class and subclass gets descriptors of its own type: the
        # interpreter's specialised call of a method descriptor needs
        # `self` of exactly that type.
        for name in ("select", "update"):
            setattr(cls, name, _core.learner_method(cls, "engine_" + name))

    @property  # type: ignore[override]
    def _engine(self) -> Any:
        return self.__dict__["_armed"]

    @_engine.setter
    def _engine(self, engine: Any) -> None:
        d = self.__dict__
        d["_armed"] = engine
        self._armed_engine = engine
        self._bind(engine)

    def _bind(self, engine: Any) -> None:
        """What a new engine needs from its learner beyond the binding (nothing here)."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        # Bound methods of the engine, stored by earlier versions: the
        # class's descriptors answer now.
        state.pop("select", None)
        state.pop("update", None)
        super().__setstate__(state)
        self._engine = self.__dict__["_armed"]

    @property
    def lock(self) -> _core.EngineLock:  # type: ignore[override]
        """This learner's reentrant lock, held by every engine call (``select``,
        ``update``, the batch forms, ``save``); as ``threading.RLock``."""
        lock: _core.EngineLock = self._engine.lock
        return lock
