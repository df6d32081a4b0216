"""sweep(): a grid of configurations times a list of seeds, resumable.

A *cell* is one configuration run with one seed. Every cell goes through
:func:`dpbandits.simulate_many` with ``seeds=[seed]``, so its numbers are
exactly those of a direct ``simulate(learner, env, horizon, seeds=[seed])``
call. Cells run in parallel through joblib:

- ``backend="processes"`` (default): local worker processes (joblib's loky);
- ``backend="dask"``: a dask.distributed cluster; pass ``client=`` to use an
  existing :class:`distributed.Client`, else a local cluster of ``n_jobs``
  single-threaded workers is started (and closed) for the sweep;
- ``backend="ray"``: ray tasks (``pip install 'dpbandits[ray]'``), each cell written as it finishes.

Configuration
-------------
A configuration is a mapping with

``learner`` *or* ``learners``
    one learner spec, or a mapping label -> learner spec (several learners
    on the same environment realization: common random numbers, and the
    environment is generated once per round for all of them). A learner spec
    is a dpbandits learner object (its class and constructor arguments are
    used) or a ``(class, kwargs)`` pair.
``env``
    an environment spec: a built-in environment object, a ``(class,
    kwargs)`` pair, or any picklable ``seed -> environment`` callable.
``horizon``, ``record_every`` (optional)
    as for :func:`dpbandits.simulate`.
``meta`` (optional)
    a mapping of plain values copied into the results (e.g. ``{"gap": 0.1}``);
    it is part of the configuration's identity.

``grid`` is a sequence of configurations, or a mapping label -> configuration.

Results directory
-----------------
With ``results_dir``, each finished cell is written at once to
``<results_dir>/cells/<key>.json`` (temporary file in the same directory,
flush, ``os.fsync``, ``os.replace``: a reader never sees half a file), where
``key`` is a stable hash of the configuration's canonical form and the seed.
The file carries a SHA-256 checksum of its payload; a cell file that fails
the check (truncated, edited) raises :class:`CorruptCellError` naming the
file (``on_corrupt="recompute"`` moves it aside and runs the cell again).
``index.json`` (rewritten atomically after each cell) lists the finished
cells; the cell files are the ground truth. A rerun with the same directory
skips finished cells, so an interrupted sweep (Ctrl-C, ``kill -9``) loses at
most the cells that were running.

The canonical form of a spec: ``(class, kwargs)`` pairs, and objects with a
``config`` mapping (learners), by class path and arguments (a learner object
and its ``(class, config)`` pair are the same configuration); other objects
by ``repr`` (built-in environments print every argument); numpy arrays by
shape, dtype and a SHA-256 of their bytes. The key does not include the
package version: delete the results directory after changing the code.

Learners travel to the workers as their class and constructor arguments,
never as their state, so seeded cells are reproducible whatever the
learner objects have recorded; a sweep runs on simulated data, spends
nothing on real data and never touches a :class:`dpbandits.Ledger`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpbandits._sizes import LEARNER_ROUND_SECONDS, check_work, format_seconds, work_limit
from dpbandits._validation import positive_int
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.sim import SimulationResult, _seeds, simulate_many
from dpbandits.worker_lifetime import die_with_parent

__all__ = ["BACKENDS", "CorruptCellError", "SweepResult", "cell_key", "load_sweep", "sweep"]

#: Backends accepted by :func:`sweep`.
BACKENDS = ("processes", "dask", "ray")
#: Version of the cell-file layout.
CELL_FORMAT = 1


class CorruptCellError(ValueError):
    """A cell file of a results directory is unreadable or fails its checksum."""


# ------------------------------------------------------------ canonical form


def _qualname(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def canonical(obj: Any) -> Any:
    """A JSON-serializable description of ``obj`` that is equal for equal
    configurations across processes and runs (see the module docstring)."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else repr(v)
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        return {"ndarray": hashlib.sha256(a.tobytes()).hexdigest(), "shape": list(a.shape), "dtype": str(a.dtype)}
    if isinstance(obj, Mapping):
        return {str(k): canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], type) and isinstance(obj[1], Mapping):
        return {"class": _qualname(obj[0]), "kwargs": canonical(obj[1])}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    if isinstance(obj, type):
        return {"callable": _qualname(obj)}
    code = getattr(obj, "__code__", None)
    if code is not None:  # a function: its name, code, defaults and closure values
        cells = [c.cell_contents for c in (getattr(obj, "__closure__", None) or ())]
        body = repr((code.co_code, code.co_consts, code.co_names))
        return {"callable": _qualname(obj), "code": hashlib.sha256(body.encode()).hexdigest(),
                "defaults": canonical(list(getattr(obj, "__defaults__", None) or ())), "closure": canonical(cells)}
    config = getattr(obj, "config", None)
    if isinstance(config, Mapping):
        return {"class": _qualname(type(obj)), "kwargs": canonical(config)}  # as its (class, kwargs) pair
    return {"class": _qualname(type(obj)), "repr": repr(obj)}


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def cell_key(config: Mapping[str, Any], seed: int) -> str:
    """Stable key of the cell (configuration, seed): 24 hex digits of a
    SHA-256 of the canonical configuration and the seed."""
    return _digest({"config": canonical(_normalise(config, "config")), "seed": int(seed)})[:24]


# ------------------------------------------------------------ configurations


def _normalise(config: Any, where: str) -> dict[str, Any]:
    """Checks a configuration; returns it with ``learners`` as a mapping."""
    if not isinstance(config, Mapping):
        raise TypeError(f"invalid argument `grid`: {where} must be a mapping (learner(s), env, ...), got "
                        f"{type(config).__name__}")
    unknown = set(config) - {"learner", "learners", "env", "horizon", "record_every", "meta"}
    if unknown:
        raise ValueError(f"invalid argument `grid`: {where} has unknown keys {sorted(unknown)} (valid: learner or "
                         "learners, env, horizon, record_every, meta)")
    if ("learner" in config) == ("learners" in config):
        raise ValueError(f"invalid argument `grid`: {where} needs exactly one of `learner` and `learners`")
    if "env" not in config:
        raise ValueError(f"invalid argument `grid`: {where} needs an `env`")
    learners = config["learners"] if "learners" in config else {"learner": config["learner"]}
    if not isinstance(learners, Mapping) or not learners:
        raise ValueError(f"invalid argument `grid`: {where}: `learners` must be a non-empty mapping label -> learner")
    out = {"learners": {str(k): v for k, v in learners.items()}, "env": config["env"]}
    for key in ("horizon", "record_every"):
        if config.get(key) is not None:
            out[key] = positive_int(key, config[key])
    meta = config.get("meta") or {}
    if not isinstance(meta, Mapping):
        raise TypeError(f"invalid argument `grid`: {where}: `meta` must be a mapping")
    out["meta"] = dict(meta)
    return out


def _labelled(grid: Any) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(grid, Mapping):
        items = [(str(k), v) for k, v in grid.items()]
    elif isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
        raise TypeError(f"invalid argument `grid`: expected a sequence or mapping of configurations, got "
                        f"{type(grid).__name__}")
    else:
        items = [(str(i), v) for i, v in enumerate(grid)]
    if not items:
        raise ValueError("invalid argument `grid`: the grid is empty; give at least one configuration")
    out = [(label, _normalise(c, f"configuration {label!r}")) for label, c in items]
    digests: dict[str, str] = {}
    for label, c in out:
        d = _digest(canonical(c))
        if d in digests:
            raise ValueError(f"invalid argument `grid`: configurations {digests[d]!r} and {label!r} are identical")
        digests[d] = label
    return out


def _build(spec: Any) -> Any:
    """An object from a spec: ``(class, kwargs)`` is instantiated, anything
    else is used as given."""
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], type) and isinstance(spec[1], Mapping):
        return spec[0](**spec[1])
    return spec


def _transport(spec: Any) -> Any:
    """A learner object as a (class, constructor arguments) pair: a fresh,
    small, picklable description (simulate re-instantiates it anyway)."""
    config = getattr(spec, "config", None)
    if not isinstance(spec, tuple) and isinstance(config, Mapping) and hasattr(spec, "_engine"):
        return (type(spec), dict(config))
    return spec


# ------------------------------------------------------------------- a cell


def run_cell(config: Mapping[str, Any], seed: int, progress: Callable[[int], None] | None = None
             ) -> dict[str, Any]:
    """Runs one cell: every learner of ``config`` on its environment with
    ``seeds=[seed]`` through :func:`dpbandits.simulate_many` (``progress``:
    called with the learner-rounds done). Returns plain values (one
    ``SimulationResult.to_dict()`` per learner label)."""
    learners = {label: _build(spec) for label, spec in config["learners"].items()}
    env = _build(config["env"])
    start = time.perf_counter()
    results = simulate_many(learners, env, horizon=config.get("horizon"), seeds=[int(seed)],
                            record_every=config.get("record_every"), progress=progress or False)
    return {
        "wall_seconds": time.perf_counter() - start,
        "results": {label: r.to_dict() for label, r in results.items()},
    }


def _run_indexed(i: int, config: Mapping[str, Any], seed: int, shared: Any = None,
                 parent: int | None = None) -> tuple[int, dict[str, Any]]:
    """A cell in a worker; ``shared`` (a multiprocessing.Manager dict, or
    None) receives the cell's learner-rounds done under key ``i``. A local
    worker process (the processes backend; ``parent``: the sweep's process
    id) exits with the sweep's process
    (:func:`dpbandits.worker_lifetime.die_with_parent`)."""
    if parent is not None and os.getpid() != parent:
        die_with_parent()
    report = None if shared is None else (lambda done: shared.__setitem__(i, int(done)))
    return i, run_cell(config, seed, report)


def _cell_rounds(config: Mapping[str, Any]) -> int:
    """Learner-rounds of one cell (its horizon x its learners), for the progress bar."""
    horizon = config.get("horizon")
    if horizon is None:
        hs = [int(spec[1].get("horizon", 0)) if isinstance(spec, tuple) else int(getattr(spec, "horizon", 0))
              for spec in config["learners"].values()]
        horizon = min(hs) if hs else 0
    return int(horizon) * len(config["learners"])


class _RoundsBar:
    """One tqdm bar over the learner-rounds of a sweep. With local worker
    processes, workers report the rounds of running cells through a
    multiprocessing.Manager dict, polled twice a second; other backends
    advance the bar when a cell finishes."""

    def __init__(self, total: int, initial: int, cells: int, finished: int, live: bool) -> None:
        import threading

        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, initial=initial, desc="sweep", unit="rounds", unit_scale=True,
                        file=sys.stderr, dynamic_ncols=True, mininterval=0.5)
        self.cells, self.finished, self.rounds_done = cells, finished, initial
        self.bar.set_postfix_str(f"cells {finished}/{cells}", refresh=False)
        self.manager = self.shared = None
        self.lock = threading.Lock()
        self.stop = threading.Event()
        if live:
            from multiprocessing.managers import SyncManager

            # The manager's server process exits with this one (kill -9 included).
            self.manager = SyncManager()
            self.manager.start(die_with_parent)
            self.shared = self.manager.dict()
            self.thread = threading.Thread(target=self._poll, daemon=True)
            self.thread.start()

    def _poll(self) -> None:
        while not self.stop.wait(0.5):
            try:
                running = sum(self.shared.values())  # type: ignore[union-attr]
            except Exception:  # the manager is shutting down
                return
            with self.lock:
                self.bar.n = self.rounds_done + running
                self.bar.refresh()

    def cell_done(self, j: int, rounds: int) -> None:
        with self.lock:
            running = 0
            if self.shared is not None:
                self.shared.pop(j, None)
                running = sum(self.shared.values())
            self.rounds_done += rounds
            self.finished += 1
            self.bar.n = self.rounds_done + running
            self.bar.set_postfix_str(f"cells {self.finished}/{self.cells}")

    def close(self) -> None:
        self.stop.set()
        if self.manager is not None:
            self.thread.join()
            self.manager.shutdown()
        self.bar.close()


# ---------------------------------------------------------------- the store


def _atomic_write(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` atomically: a temporary file in the same
    directory, flushed and fsynced, then os.replace."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where the OS allows
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


class _Store:
    """The cell files of one results directory."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.cells = self.root / "cells"
        self.cells.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.cells / f"{key}.json"

    def write(self, key: str, record: dict[str, Any]) -> None:
        payload = json.dumps(record, sort_keys=True, allow_nan=True)
        body = {"format": CELL_FORMAT, "key": key, "sha256": hashlib.sha256(payload.encode()).hexdigest(),
                "payload": record}
        _atomic_write(self.path(key), json.dumps(body, sort_keys=True, allow_nan=True))

    def read(self, path: Path) -> dict[str, Any]:
        """A cell's record; CorruptCellError if the file is damaged."""
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            record = body["payload"]
            ok = (body.get("format") == CELL_FORMAT and body.get("key") == path.stem
                  and hashlib.sha256(json.dumps(record, sort_keys=True, allow_nan=True).encode()).hexdigest()
                  == body.get("sha256"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorruptCellError(f"cell file {path} is unreadable ({type(exc).__name__}: {exc}); delete it or "
                                   "rerun with on_corrupt='recompute'") from None
        if not ok:
            raise CorruptCellError(f"cell file {path} fails its checksum or key check; delete it or rerun with "
                                   "on_corrupt='recompute'")
        return record  # type: ignore[no-any-return]

    def finished(self, on_corrupt: str) -> dict[str, dict[str, Any]]:
        out = {}
        for path in sorted(self.cells.glob("*.json")):
            try:
                out[path.stem] = self.read(path)
            except CorruptCellError:
                if on_corrupt != "recompute":
                    raise
                aside = path.with_name(path.name + f".corrupt-{int(time.time())}")
                os.replace(path, aside)
                print(f"dpbandits.sweep: moved corrupt cell file aside to {aside}; the cell runs again",
                      file=sys.stderr)
        return out

    def write_index(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        index = {key: {"label": r["label"], "seed": r["seed"], "config_digest": r["config_digest"],
                       "file": f"cells/{key}.json"} for key, r in sorted(records.items())}
        _atomic_write(self.root / "index.json", json.dumps({"format": CELL_FORMAT, "cells": index}, indent=1))


# ---------------------------------------------------------------- backends


@contextlib.contextmanager
def _backend(backend: str, n_jobs: int | None, client: Any) -> Iterator[dict[str, Any]]:
    """joblib.Parallel keyword arguments for ``backend`` (setting up and
    tearing down what it needs)."""
    import joblib

    if backend == "processes":
        yield {"backend": "loky", "n_jobs": n_jobs or os.cpu_count() or 1}
    elif backend == "dask":
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ImportError("backend='dask' needs dask.distributed: pip install 'dpbandits[dask]'") from None
        own = None
        if client is None:
            workers = n_jobs or os.cpu_count() or 1
            # Threads in this process (the Rust loop releases the GIL); no network.
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=False,
                                   dashboard_address=None)
            own = client = Client(cluster)
        try:
            with joblib.parallel_config(backend="dask", client=client, wait_for_workers_timeout=60):
                yield {"n_jobs": -1}
        finally:
            if own is not None:
                own.close()
                own.cluster.close()  # type: ignore[attr-defined]
    else:  # pragma: no cover - checked by sweep()
        raise AssertionError(backend)


def _ray_completed(todo: list[Any], wire: list[Any], n_jobs: int | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Runs the cells as ray tasks and yields (j, output) as each finishes.

    ray's joblib backend cannot return results as they complete (joblib's
    ``generator_unordered``), which the sweep needs to write each cell the
    moment it is done; ray's own task API can. Uses the running ray
    instance, or starts a local one with ``n_jobs`` CPUs (shut down after).
    At most ``n_jobs`` (default: ray's CPU count) cells are in flight, so
    an interruption loses at most those."""
    try:
        import ray
    except ImportError:
        raise ImportError("backend='ray' needs ray: pip install 'dpbandits[ray]'") from None
    own = not ray.is_initialized()
    if own:
        ray.init(num_cpus=n_jobs, include_dashboard=False, log_to_driver=False)
    try:
        limit = n_jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        task = ray.remote(num_cpus=1)(_run_indexed)
        pending: dict[Any, int] = {}
        queue = iter(enumerate(todo))
        while True:
            for j, (_, _, i, s, _) in queue:
                pending[task.remote(j, wire[i], s)] = j
                if len(pending) >= limit:
                    break
            if not pending:
                return
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                pending.pop(ref)
                yield ray.get(ref)
    finally:
        if own:
            ray.shutdown()


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class SweepResult:
    """Finished cells of a sweep, gathered per configuration and learner.

    ``cells`` holds one record per (configuration, seed) with the label,
    seed, ``meta`` and each learner's ``SimulationResult.to_dict()``.
    """

    labels: tuple[str, ...]
    cells: tuple[dict[str, Any], ...]
    results_dir: Path | None = None

    def results(self) -> dict[tuple[str, str], SimulationResult]:
        """(configuration label, learner label) -> a SimulationResult whose
        rows are the seeds of the sweep (sorted)."""
        groups: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
        for cell in self.cells:
            for learner, res in cell["results"].items():
                groups.setdefault((cell["label"], learner), []).append((cell["seed"], res))
        order = {label: i for i, label in enumerate(self.labels)}
        out = {}
        for key in sorted(groups, key=lambda k: (order.get(k[0], len(order)), k[0])):
            rows = sorted(groups[key], key=lambda sr: sr[0])
            first = rows[0][1]
            g = dict(first["guarantee"])
            g["epsilon"] = float(g["epsilon"])
            out[key] = SimulationResult(
                learner=first["learner"], environment=first["environment"], guarantee=Guarantee(**g),
                config=first["config"],
                seeds=np.asarray([s for s, _ in rows], dtype=np.uint64),
                record_at=np.asarray(first["record_at"], dtype=np.uint64),
                regret=np.asarray([np.asarray(r["regret"], dtype=np.float64)[0] for _, r in rows]),
                rounds=np.asarray([r["rounds"][0] for _, r in rows], dtype=np.uint64),
                seconds=np.asarray([r["seconds"][0] for _, r in rows], dtype=np.float64),
            )
        return out

    def meta(self, label: str) -> dict[str, Any]:
        """The ``meta`` mapping of configuration ``label``."""
        for cell in self.cells:
            if cell["label"] == label:
                return dict(cell["meta"])
        raise KeyError(label)

    def to_frame(self) -> Any:
        """A long-format ``pandas.DataFrame``: one row per configuration,
        learner, seed and record point, with the ``meta`` values as columns;
        needs pandas."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("to_frame() needs pandas: pip install pandas") from None
        frames = []
        for (label, learner), r in self.results().items():
            f = r.to_frame()
            f["learner"] = learner
            f.insert(0, "config", label)
            for k, v in self.meta(label).items():
                f[k] = v
            frames.append(f)
        return pd.concat(frames, ignore_index=True)


def _check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"invalid argument `backend`: must be one of {', '.join(map(repr, BACKENDS))}, "
                         f"got {backend!r}")
    return backend


#: A lower bound on the bytes one (configuration, seed) cell costs before it
#: runs (its key, label and digest strings and the tuple holding them).
_CELL_BYTES = 256


def _seed_list(seeds: int | Sequence[int], n_configs: int = 1) -> list[int]:
    """The seeds; a count is checked against memory (a cell per
    configuration and seed) before any list is made."""
    return _seeds(seeds, _CELL_BYTES * n_configs)


def _check_sweep_work(configs: Sequence[tuple[str, Mapping[str, Any]]], replicates: int) -> None:
    """ValueError, before any worker starts, when the grid's learner-rounds
    (every configuration's horizon x learners, times the seeds) take longer
    than :func:`dpbandits._sizes.work_limit` at
    :data:`dpbandits._sizes.LEARNER_ROUND_SECONDS` each: names ``seeds``
    when one seed's cells fit, else ``grid``."""
    per_seed = sum(_cell_rounds(c) for _, c in configs)
    limit, source = work_limit()
    seconds = per_seed * replicates * LEARNER_ROUND_SECONDS
    what = (f"{len(configs)} configuration(s) of {per_seed} learner-rounds per seed x {replicates} seed(s) "
            f"(each learner-round at least {LEARNER_ROUND_SECONDS * 1e9:.0f} ns on one core)")
    if per_seed * LEARNER_ROUND_SECONDS <= limit:
        check_work("seeds", replicates, seconds, what, int(limit / (per_seed * LEARNER_ROUND_SECONDS)))
    else:
        raise ValueError(
            f"invalid argument `grid`: {what}, at least {format_seconds(seconds)} of work; at most "
            f"{format_seconds(limit)} is accepted ({source}); one seed of the grid's configurations may hold "
            f"at most {int(limit / LEARNER_ROUND_SECONDS)} learner-rounds"
        )


def sweep(
    grid: Sequence[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]],
    seeds: int | Sequence[int],
    backend: str = "processes",
    results_dir: str | os.PathLike[str] | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
    client: Any = None,
    on_corrupt: str = "raise",
) -> SweepResult:
    """Runs every (configuration, seed) cell of ``grid`` x ``seeds``.

    Parameters
    ----------
    grid:
        Configurations (see the module docstring), as a sequence (labels
        "0", "1", ...) or a mapping label -> configuration.
    seeds:
        A count (seeds 0..count-1) or a list of distinct seeds; every
        configuration runs with every seed.
    backend:
        ``"processes"`` (local processes, default), ``"dask"`` or ``"ray"``.
    results_dir:
        Folder of finished cells; a rerun skips them (module docstring).
        None keeps results in memory only.
    n_jobs:
        Parallel workers (default: the number of CPUs; for ``"dask"`` with
        a ``client``, the client's workers).
    progress:
        A progress bar over cells on stderr.
    client:
        An existing dask.distributed Client (``backend="dask"`` only).
    on_corrupt:
        ``"raise"`` (default): a damaged cell file raises
        :class:`CorruptCellError`; ``"recompute"``: it is moved aside and
        the cell runs again.

    Examples
    --------
    >>> import dpbandits as dp
    >>> grid = {f"eps{e}": {"learners": {"ucb": dp.PrivateUCB(k=3, horizon=500, epsilon=e)},
    ...                     "env": dp.BernoulliBandit([0.9, 0.5, 0.4]), "meta": {"epsilon": e}}
    ...         for e in (0.5, 2.0)}
    >>> res = dp.sweep(grid, seeds=2, n_jobs=1, progress=False)
    >>> sorted(res.results())
    [('eps0.5', 'ucb'), ('eps2.0', 'ucb')]
    >>> res.results()[("eps2.0", "ucb")].final_regret.shape
    (2,)
    """
    _check_backend(backend)
    try:
        import joblib
    except ImportError:
        raise ImportError("sweep() needs joblib: pip install 'dpbandits[sweep]'") from None
    if client is not None and backend != "dask":
        raise ValueError(f"invalid argument `client`: only used with backend='dask', got backend={backend!r}")
    if on_corrupt not in ("raise", "recompute"):
        raise ValueError(f"invalid argument `on_corrupt`: must be 'raise' or 'recompute', got {on_corrupt!r}")
    if n_jobs is not None:
        n_jobs = positive_int("n_jobs", n_jobs)
    configs = _labelled(grid)
    seed_list = _seed_list(seeds, len(configs))
    _check_sweep_work(configs, len(seed_list))
    wire = [{**c, "learners": {k: _transport(v) for k, v in c["learners"].items()}} for _, c in configs]

    cells = []  # (key, label, config index, seed)
    for i, (label, c) in enumerate(configs):
        digest = _digest(canonical(c))
        for s in seed_list:
            cells.append((_digest({"config": canonical(c), "seed": s})[:24], label, i, s, digest))

    store = _Store(results_dir) if results_dir is not None else None
    done: dict[str, dict[str, Any]] = store.finished(on_corrupt) if store is not None else {}
    todo = [cell for cell in cells if cell[0] not in done]

    if todo:
        bar = None
        if progress:
            rounds = [_cell_rounds(c) for _, c in configs]
            bar = _RoundsBar(total=sum(rounds[c[2]] for c in cells),
                             initial=sum(rounds[c[2]] for c in cells if c[0] in done),
                             cells=len(cells), finished=len(cells) - len(todo), live=backend == "processes")
        shared = None if bar is None else bar.shared
        try:
            import joblib

            with contextlib.ExitStack() as stack:
                if backend == "ray":
                    finished = _ray_completed(todo, wire, n_jobs)
                else:
                    kwargs = stack.enter_context(_backend(backend, n_jobs, client))
                    parallel = joblib.Parallel(return_as="generator_unordered", batch_size=1, **kwargs)
                    parent = os.getpid() if backend == "processes" else None
                    finished = parallel(joblib.delayed(_run_indexed)(j, wire[i], s, shared, parent)
                                        for j, (_, _, i, s, _) in enumerate(todo))
                for j, out in finished:
                    key, label, i, s, digest = todo[j]
                    record = {"label": label, "seed": s, "config_digest": digest, "meta": configs[i][1]["meta"],
                              "wall_seconds": out["wall_seconds"], "results": out["results"]}
                    done[key] = json.loads(json.dumps(record, allow_nan=True))  # the form read back from disk
                    if store is not None:
                        store.write(key, record)
                        store.write_index({k: done[k] for k in done})
                    if bar is not None:
                        bar.cell_done(j, rounds[i])
        finally:
            if bar is not None:
                bar.close()
    elif store is not None:
        store.write_index(done)

    wanted = {cell[0] for cell in cells}
    ordered = tuple(done[cell[0]] for cell in cells if cell[0] in wanted)
    return SweepResult(labels=tuple(label for label, _ in configs), cells=ordered,
                       results_dir=None if store is None else store.root)


def load_sweep(results_dir: str | os.PathLike[str]) -> SweepResult:
    """Every finished cell of a results directory (CorruptCellError on a
    damaged file)."""
    root = Path(results_dir)
    if not (root / "cells").is_dir():
        raise FileNotFoundError(f"invalid argument `results_dir`: {root} holds no sweep (no cells/ folder)")
    records = _Store(root).finished("raise")
    cells = tuple(sorted(records.values(), key=lambda r: (r["label"], r["seed"])))
    labels = tuple(dict.fromkeys(r["label"] for r in cells))
    return SweepResult(labels=labels, cells=cells, results_dir=root)
