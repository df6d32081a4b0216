"""A privacy ledger on SQLite: every spend on a data set, composed and bounded.

:class:`Ledger` keeps, in one SQLite database file (the standard library's
:mod:`sqlite3`), the privacy budget declared for each data set and every
spend made against it: learners registered on the data set, and every
further live copy of a registered learner (a restore for use charged again,
a fork, a copy, a pickle round trip). Each spend is one transaction that
reads the data set's spends, composes them with the new one through the
library's accountant (:class:`dpbandits.privacy.PrivacyBudget`: basic
composition and the zCDP pool, Bun & Steinke 2016, Lemma 2.3; Canonne,
Kamath & Steinke 2020, Cor. 13), and either records the spend with the
data set's new totals or records nothing and raises
:class:`dpbandits.errors.PrivacyBudgetError` naming the budget and the
spend.

>>> import os, tempfile, dpbandits as dp
>>> path = os.path.join(tempfile.mkdtemp(), "privacy.db")
>>> with dp.Ledger(path) as ledger:
...     ledger.set_budget("clicks", epsilon=1.5, delta=0.0, model="central")
...     learner = dp.DPKLUCB(k=3, horizon=1000, epsilon=1.0)
...     _ = ledger.register(learner, dataset="clicks")
...     print(ledger.spent("clicks"))
...     try:
...         ledger.register(dp.DPKLUCB(k=3, horizon=1000, epsilon=1.0), dataset="clicks")
...     except dp.errors.PrivacyBudgetError as refused:
...         print("refused:", str(refused)[:60])
(1, 0)-DP
refused: cannot spend 'DPKLUCB ...

Deployment rules (see docs/guide/restarts-and-ledger.md):

- One budget per data set (:meth:`Ledger.set_budget`), declared in a trust
  model; spends whose guarantee does not imply that model are refused
  (local => shuffle => central => joint,
  :func:`dpbandits.privacy.budget.model_implies`).
- Register a learner before it sees real data: at construction
  (``dp.DPKLUCB(..., ledger=ledger, dataset=...)``, every learner class) or
  with ``ledger.register(learner, dataset=...)``; either charges its whole guarantee
  (it covers every release up to the horizon) and binds the learner to the
  ledger; its checkpoints name the ledger, so ``load`` records the restore.
- Restores: the first restore of a checkpoint id for use is free (it
  continues the saved learner, whose guarantee was charged); the second is
  refused unless ``load(..., charge=True)``, which charges the guarantee
  again. The ledger records every save of a registered learner, and a
  restore of a checkpoint whose learner saved a later round is treated as
  a second restore too. Restore from the newest checkpoint (autosave makes
  every release durable first): rounds released after the newest save are
  released again with other noise, which no ledger can see.
- Forks, ``copy.copy``, ``copy.deepcopy`` and ``pickle`` round trips of a
  registered learner are charged (the guarantee once more) when they are
  made, and refused if that exceeds the budget.
- Simulations (``simulate``, ``sweep``) run on simulated data and spend
  nothing on real data: they never touch a ledger.

Crashes and processes. The database runs in WAL mode with
``synchronous=FULL``: a committed spend survives a crash of the process
(``kill -9``) or of the machine; a spend interrupted before its commit
leaves nothing. Writers take the database's write lock first
(``BEGIN IMMEDIATE``), so spends from concurrent processes are serialized
and each one composes with all spends committed before it. WAL needs a local
file system (not NFS or SMB: SQLite's locking is not reliable there).
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpbandits.checkpoint import new_checkpoint_id
from dpbandits.errors import CheckpointError, PrivacyBudgetError
from dpbandits.privacy.budget import BudgetEntry, PrivacyBudget, Spendable, _entry, model_implies
from dpbandits.privacy.notions import ApproxDP

__all__ = ["Ledger", "LedgerSpend"]

_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS budgets(
    dataset TEXT PRIMARY KEY, model TEXT, epsilon REAL NOT NULL, delta REAL NOT NULL);
CREATE TABLE IF NOT EXISTS spends(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL REFERENCES budgets(dataset),
    kind TEXT NOT NULL, label TEXT NOT NULL, model TEXT,
    epsilon REAL, delta REAL, rho REAL,
    registration TEXT, learner_id TEXT, checkpoint_id TEXT,
    created REAL NOT NULL, pid INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS spends_dataset ON spends(dataset);
CREATE TABLE IF NOT EXISTS totals(
    dataset TEXT PRIMARY KEY REFERENCES budgets(dataset),
    spends INTEGER NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, rho REAL NOT NULL,
    composed_epsilon REAL NOT NULL, composed_delta REAL NOT NULL, accounting TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS registrations(
    registration TEXT PRIMARY KEY, dataset TEXT NOT NULL REFERENCES budgets(dataset),
    learner TEXT NOT NULL, learner_id TEXT NOT NULL, spend_id INTEGER NOT NULL REFERENCES spends(id),
    created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS restores(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    checkpoint_id TEXT NOT NULL, registration TEXT NOT NULL REFERENCES registrations(registration),
    learner_id TEXT NOT NULL, path TEXT NOT NULL, spend_id INTEGER REFERENCES spends(id),
    created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS restores_checkpoint ON restores(checkpoint_id);
CREATE TABLE IF NOT EXISTS checkpoints(
    checkpoint_id TEXT PRIMARY KEY, registration TEXT NOT NULL REFERENCES registrations(registration),
    learner_id TEXT NOT NULL, round INTEGER NOT NULL, path TEXT NOT NULL, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS checkpoints_learner ON checkpoints(learner_id, round);
"""

#: Spend kinds: a learner's registration, the live copies of a registered
#: learner, and spends recorded by hand.
KINDS = ("register", "restore", "fork", "copy", "pickle", "spend")


@dataclass(frozen=True)
class LedgerSpend:
    """One row of a ledger: a committed spend on a data set."""

    id: int
    dataset: str
    kind: str
    label: str
    model: str | None
    epsilon: float | None
    delta: float | None
    rho: float | None
    registration: str | None
    learner_id: str | None
    checkpoint_id: str | None
    created: float


class Ledger:
    """A privacy ledger in the SQLite database ``path`` (created if absent).

    One object per process or thread group; it holds one connection (used
    under a lock, so threads may share it) and pickles as its path (the copy
    opens its own connection). Use it as a context manager or call
    :meth:`close`. ``timeout``: seconds a spend waits for another process's
    transaction before it fails (sqlite3.OperationalError). ``create``:
    whether a new ledger may be made at ``path``; with False, ``path`` must
    already hold a dpbandits ledger, and any other file is refused
    (:class:`~dpbandits.errors.PrivacyBudgetError`) before anything is
    written to it (the learners open the ledger their checkpoint names this
    way).

    See the module docstring for the deployment rules.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0, create: bool = True) -> None:
        self._path = os.path.abspath(os.fspath(path))
        if not isinstance(create, bool):
            raise TypeError(f"invalid argument `create`: expected True or False, got {create!r}")
        self._create = create
        if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout < math.inf):
            raise ValueError(f"invalid argument `timeout`: seconds > 0, got {timeout!r}")
        self._timeout = float(timeout)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._connect()

    # ------------------------------------------------------------ plumbing

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        # A connection inherited through os.fork is never used (SQLite
        # forbids it): the child opens its own.
        self._pid = os.getpid()
        if not self._create:
            self._check_existing()
        conn = sqlite3.connect(self._path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"{self._path!r}: the ledger needs WAL mode, SQLite gave {mode!r}")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            with _transaction(conn):
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if row is None:
                    conn.execute("INSERT INTO meta(key, value) VALUES ('schema', ?)", (str(_SCHEMA_VERSION),))
                elif row[0] != str(_SCHEMA_VERSION):
                    raise sqlite3.DatabaseError(
                        f"{self._path!r} is a ledger of schema version {row[0]}; this dpbandits reads {_SCHEMA_VERSION}"
                    )
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _check_existing(self) -> None:
        """Refuses a path that does not hold a dpbandits ledger, reading it
        only (a checkpoint's header names the ledger; nothing is written
        to a file that is not one)."""
        refused = PrivacyBudgetError(f"{self._path!r} is not a dpbandits privacy ledger (or is missing); restore it, "
                                     "or pass the ledger the learner was registered on (load(..., ledger=...))")
        if not os.path.isfile(self._path):
            raise refused
        try:
            probe = sqlite3.connect(f"file:{self._path}?mode=ro", uri=True, timeout=self._timeout)
            try:
                row = probe.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            finally:
                probe.close()
        except sqlite3.DatabaseError:
            raise refused from None
        if row is None:
            raise refused

    @property
    def path(self) -> str:
        """The database file (absolute path)."""
        return self._path

    def close(self) -> None:
        """Closes the connection (a later call reopens it)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen, (self._path, self._timeout, self._create))

    def __repr__(self) -> str:
        return f"Ledger({self._path!r})"

    # -------------------------------------------------------------- budgets

    def set_budget(self, dataset: str, *, epsilon: float, delta: float = 0.0, model: str | None = "central") -> None:
        """Declares the budget of ``dataset``: (``epsilon``, ``delta``)-DP in
        trust ``model`` (``"central"``, ``"joint"``, ``"local"``,
        ``"shuffle"``; None: any model, the composition then holding in the
        weakest model spent). Declaring the same budget again is a no-op; a
        different one is refused (ValueError): a budget is fixed once spends
        are composed against it."""
        name = _dataset(dataset)
        reference = PrivacyBudget(epsilon, delta, model)  # validates the arguments
        with self._lock:
            conn = self._connect()
            with _transaction(conn):
                row = conn.execute("SELECT model, epsilon, delta FROM budgets WHERE dataset = ?", (name,)).fetchone()
                if row is None:
                    conn.execute("INSERT INTO budgets(dataset, model, epsilon, delta) VALUES (?, ?, ?, ?)",
                                 (name, model, reference.epsilon, reference.delta))
                    conn.execute("INSERT INTO totals VALUES (?, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 'none')", (name,))
                elif tuple(row) != (model, reference.epsilon, reference.delta):
                    raise ValueError(
                        f"invalid argument `epsilon`/`delta`/`model`: data set {name!r} already has the budget "
                        f"({row[1]:g}, {row[2]:g})-DP in model {row[0]!r}; a budget cannot change"
                    )

    def budget(self, dataset: str) -> PrivacyBudget:
        """A read-only snapshot of ``dataset``'s budget and committed spends
        (a :class:`~dpbandits.privacy.PrivacyBudget` that refuses to spend;
        spend through the ledger)."""
        with self._lock:
            conn = self._connect()
            with _transaction(conn, write=False):
                budget = self._budget(conn, _dataset(dataset))
        budget._read_only = True
        return budget

    def spent(self, dataset: str) -> ApproxDP:
        """The (epsilon, delta) composed so far on ``dataset``."""
        return self.budget(dataset).spent

    def datasets(self) -> tuple[str, ...]:
        """The data sets with a declared budget."""
        with self._lock:
            rows = self._connect().execute("SELECT dataset FROM budgets ORDER BY dataset").fetchall()
        return tuple(r[0] for r in rows)

    def spends(self, dataset: str | None = None) -> tuple[LedgerSpend, ...]:
        """The committed spends (of ``dataset``, or all), in commit order."""
        query = "SELECT id, dataset, kind, label, model, epsilon, delta, rho, registration, learner_id, " \
                "checkpoint_id, created FROM spends"
        with self._lock:
            conn = self._connect()
            if dataset is None:
                rows = conn.execute(query + " ORDER BY id").fetchall()
            else:
                rows = conn.execute(query + " WHERE dataset = ? ORDER BY id", (_dataset(dataset),)).fetchall()
        return tuple(LedgerSpend(*r) for r in rows)

    def totals(self, dataset: str) -> Mapping[str, Any]:
        """The totals row of ``dataset``, updated in each spend's transaction:
        ``spends`` (count), ``epsilon`` / ``delta`` / ``rho`` (exactly rounded
        sums of the rows' parameters), ``composed_epsilon`` /
        ``composed_delta`` / ``accounting`` (the composition after the last
        spend)."""
        with self._lock:
            row = self._connect().execute(
                "SELECT spends, epsilon, delta, rho, composed_epsilon, composed_delta, accounting FROM totals "
                "WHERE dataset = ?", (_dataset(dataset),)).fetchone()
        if row is None:
            raise KeyError(f"data set {dataset!r} has no budget in {self._path!r}")
        keys = ("spends", "epsilon", "delta", "rho", "composed_epsilon", "composed_delta", "accounting")
        return dict(zip(keys, row, strict=True))

    def restores(self, checkpoint_id: str) -> int:
        """How many times the checkpoint ``checkpoint_id`` was restored for use."""
        with self._lock:
            row = self._connect().execute("SELECT COUNT(*) FROM restores WHERE checkpoint_id = ?",
                                          (checkpoint_id,)).fetchone()
        return int(row[0])

    # --------------------------------------------------------------- spends

    def spend(self, item: Spendable, *, dataset: str, label: str) -> LedgerSpend:
        """Records a spend made outside the learners (a
        :class:`~dpbandits.privacy.Guarantee`, ``PureDP``, ``ApproxDP`` or
        ``ZCDP``) on ``dataset`` under ``label``, in one transaction;
        :class:`~dpbandits.errors.PrivacyBudgetError` (nothing recorded)
        when the composition would exceed the budget."""
        if not isinstance(label, str) or not label.strip():
            raise ValueError(f"invalid argument `label`: must be a non-empty string, got {label!r}")
        with self._lock:
            conn = self._connect()
            with _transaction(conn):
                return self._spend(conn, _dataset(dataset), item, "spend", label)

    def register(self, learner: Any, *, dataset: str, label: str | None = None) -> str:
        """Registers ``learner`` on ``dataset`` and charges its whole
        guarantee (``learner.privacy``: its model, epsilon, delta, rho; it
        covers every release up to the horizon) in one transaction; returns
        the registration id. Register before the learner sees real data.

        From then on the learner's checkpoints name this ledger, its
        restores for use are recorded here (a second restore of one
        checkpoint refused unless charged), and its forks and copies are
        charged here. Refused (PrivacyBudgetError, nothing recorded): a
        non-private learner, a guarantee whose model does not imply the
        budget's, a spend past the budget; ValueError: a learner already
        registered, or one restored as a research replay."""
        from dpbandits.learners.online import LearnerBase

        if not isinstance(learner, LearnerBase):
            raise TypeError(f"invalid argument `learner`: expected a dpbandits learner, got {type(learner).__name__}")
        name = _dataset(dataset)
        lineage = learner.lineage
        if lineage["ledger"] is not None:
            raise ValueError(f"invalid argument `learner`: already registered on {lineage['ledger']['path']!r} "
                             f"(data set {lineage['ledger']['dataset']!r})")
        if lineage["origin"] == "replay":
            raise ValueError("invalid argument `learner`: a research replay (load(..., replay=True) or "
                             "research_replay()) repeats another learner's noise and must not see real data")
        text = label if label is not None else f"{type(learner).__name__} {lineage['learner_id'][:8]}"
        registration = new_checkpoint_id()
        guarantee = learner.privacy  # type: ignore[attr-defined]  # every learner class defines it
        with learner.lock, self._lock:
            conn = self._connect()
            with _transaction(conn):
                spend = self._spend(conn, name, guarantee, "register", text, registration=registration,
                                    learner_id=lineage["learner_id"])
                conn.execute("INSERT INTO registrations VALUES (?, ?, ?, ?, ?, ?)",
                             (registration, name, type(learner).__qualname__, lineage["learner_id"], spend.id,
                              time.time()))
            learner.__dict__["_ledger"] = {"path": self._path, "dataset": name, "registration": registration}
        return registration

    # ------------------------------------------------- learners' own calls

    @classmethod
    def _shared(cls, path: str) -> Ledger:
        """This process's open ledger at ``path`` (one connection per path
        and process, for the learners' own calls)."""
        key = (os.getpid(), os.path.abspath(path))
        with _SHARED_GUARD:
            ledger = _SHARED.get(key)
            if ledger is None:
                # Never a new empty ledger in its place (its spends would
                # start from zero), never tables in another database.
                ledger = _SHARED[key] = cls(path, create=False)
        return ledger

    def _record_save(self, learner: Any, binding: Mapping[str, str], lineage: Mapping[str, Any], path: str) -> None:
        """Records a checkpoint written by a registered learner, so that a
        restore of an older checkpoint of the same learner is recognised."""
        with self._lock:
            conn = self._connect()
            with _transaction(conn):
                self._known_registration(conn, binding)
                conn.execute("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?)",
                             (lineage["checkpoint_id"], binding["registration"], lineage["learner_id"],
                              lineage["round"], os.path.abspath(path), time.time()))

    def _charge_copy(self, learner: Any, binding: Mapping[str, str], origin: str,
                     source: Mapping[str, Any] | None) -> None:
        """Charges a new live copy (fork, copy, pickle) of a registered learner."""
        parent = None if source is None else source.get("learner_id")
        with self._lock:
            conn = self._connect()
            with _transaction(conn):
                self._known_registration(conn, binding)
                self._spend(conn, binding["dataset"], learner.privacy, origin,
                            f"{origin} of {type(learner).__name__} {str(parent)[:8]}",
                            registration=binding["registration"], learner_id=learner.lineage["learner_id"])
        learner.__dict__["_ledger"] = {**binding, "path": self._path}

    def _record_restore(self, learner: Any, name: str, lineage: Mapping[str, Any], *, charge: bool) -> None:
        """Records a restore for use of the checkpoint ``name`` (lineage
        ``lineage``): the first of a checkpoint id is free, a later one is
        refused unless ``charge``, which charges the guarantee again."""
        binding = lineage.get("ledger")
        if binding is None:
            raise CheckpointError(f"{name!r} holds a learner registered on no ledger; load it without ledger= and "
                                  "register it (Ledger.register) before it sees real data")
        checkpoint_id = lineage["checkpoint_id"]
        with self._lock:
            conn = self._connect()
            with _transaction(conn):
                self._known_registration(conn, binding)
                earlier = conn.execute("SELECT COUNT(*) FROM restores WHERE checkpoint_id = ?",
                                       (checkpoint_id,)).fetchone()[0]
                newer = conn.execute("SELECT MAX(round) FROM checkpoints WHERE learner_id = ? AND round > ?",
                                     (lineage["learner_id"], lineage["round"])).fetchone()[0]
                spend_id = None
                if earlier or newer is not None:
                    why = (f"checkpoint {checkpoint_id} was already restored for use {earlier} time(s); another "
                           "restore is another live copy of the same state" if earlier else
                           f"checkpoint {checkpoint_id} holds round {lineage['round']}, but the learner that saved "
                           f"it went on and saved round {newer}: restoring the older state releases those rounds "
                           "again")
                    if not charge:
                        raise PrivacyBudgetError(
                            f"{name!r}: {why}, and its releases compose with the first's. Pass charge=True to charge "
                            f"its guarantee ({learner.privacy}) once more on data set {binding['dataset']!r}"
                        )
                    spend_id = self._spend(conn, binding["dataset"], learner.privacy, "restore",
                                           f"restore {earlier + 1} of checkpoint {checkpoint_id[:8]}",
                                           registration=binding["registration"],
                                           learner_id=learner.lineage["learner_id"],
                                           checkpoint_id=checkpoint_id).id
                conn.execute(
                    "INSERT INTO restores(checkpoint_id, registration, learner_id, path, spend_id, created) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (checkpoint_id, binding["registration"], learner.lineage["learner_id"], os.path.abspath(name),
                     spend_id, time.time()))
        learner.__dict__["_ledger"] = {**binding, "path": self._path}

    # ------------------------------------------------------------ internals

    def _known_registration(self, conn: sqlite3.Connection, binding: Mapping[str, str]) -> None:
        row = conn.execute("SELECT dataset FROM registrations WHERE registration = ?",
                           (binding["registration"],)).fetchone()
        if row is None or row[0] != binding["dataset"]:
            raise CheckpointError(
                f"the learner's registration {binding['registration']} on data set {binding['dataset']!r} is not in "
                f"the ledger {self._path!r}; pass the ledger it was registered on"
            )

    def _budget(self, conn: sqlite3.Connection, dataset: str) -> PrivacyBudget:
        row = conn.execute("SELECT model, epsilon, delta FROM budgets WHERE dataset = ?", (dataset,)).fetchone()
        if row is None:
            raise PrivacyBudgetError(f"data set {dataset!r} has no budget in the ledger {self._path!r}; declare one "
                                     "with Ledger.set_budget(dataset, epsilon=..., delta=..., model=...)")
        entries = [BudgetEntry(label, eps, delta, rho, model) for label, eps, delta, rho, model in conn.execute(
            "SELECT label, epsilon, delta, rho, model FROM spends WHERE dataset = ? ORDER BY id", (dataset,))]
        return PrivacyBudget._of_entries(row[1], row[2], row[0], entries)

    def _spend(self, conn: sqlite3.Connection, dataset: str, item: Spendable, kind: str, label: str, *,
               registration: str | None = None, learner_id: str | None = None,
               checkpoint_id: str | None = None) -> LedgerSpend:
        """Composes ``item`` with ``dataset``'s spends and records it with the
        new totals, inside the caller's write transaction."""
        budget = self._budget(conn, dataset)
        entry: BudgetEntry = _entry(item, label)
        if not model_implies(entry.model, budget.model):
            raise PrivacyBudgetError(
                f"cannot spend {label!r} ({item}) on data set {dataset!r}: a {entry.model}-DP guarantee does not "
                f"imply {budget.model} DP, the model of its ({budget.epsilon:g}, {budget.delta:g}) budget"
            )
        if not budget.can_spend(item):
            raise PrivacyBudgetError(
                f"cannot spend {label!r} ({item}) on data set {dataset!r}: the composition would exceed its "
                f"({budget.epsilon:g}, {budget.delta:g})-DP budget; spent so far {budget.spent} by "
                f"{budget.accounting} accounting over {len(budget.entries)} spend(s) in {self._path!r}"
            )
        budget._entries.append(entry)
        now = time.time()
        cursor = conn.execute(
            "INSERT INTO spends(dataset, kind, label, model, epsilon, delta, rho, registration, learner_id, "
            "checkpoint_id, created, pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (dataset, kind, label, entry.model, entry.epsilon, entry.delta, entry.rho, registration, learner_id,
             checkpoint_id, now, os.getpid()))
        entries = budget.entries
        composed = budget.spent
        conn.execute(
            "UPDATE totals SET spends = ?, epsilon = ?, delta = ?, rho = ?, composed_epsilon = ?, "
            "composed_delta = ?, accounting = ? WHERE dataset = ?",
            (len(entries), math.fsum(e.epsilon or 0.0 for e in entries), math.fsum(e.delta or 0.0 for e in entries),
             math.fsum(e.rho or 0.0 for e in entries), composed.epsilon, composed.delta, budget.accounting, dataset))
        spend_id = cursor.lastrowid
        assert spend_id is not None
        return LedgerSpend(spend_id, dataset, kind, label, entry.model, entry.epsilon, entry.delta, entry.rho,
                           registration, learner_id, checkpoint_id, now)


def _reopen(path: str, timeout: float, create: bool) -> Ledger:
    return Ledger(path, timeout=timeout, create=create)


_SHARED: dict[tuple[int, str], Ledger] = {}
_SHARED_GUARD = threading.Lock()


class _transaction:
    """``BEGIN IMMEDIATE`` (the write lock first: concurrent spends are
    serialized, none composes against a stale read) ... ``COMMIT``, or
    ``ROLLBACK`` on any exception; ``write=False``: a read transaction
    (one consistent snapshot)."""

    def __init__(self, conn: sqlite3.Connection, *, write: bool = True) -> None:
        self._conn = conn
        self._write = write

    def __enter__(self) -> sqlite3.Connection:
        self._conn.execute("BEGIN IMMEDIATE" if self._write else "BEGIN")
        return self._conn

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            self._conn.execute("COMMIT")
        else:
            self._conn.execute("ROLLBACK")


def _dataset(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"invalid argument `dataset`: a non-empty string naming the data set, got {name!r}")
    return name
