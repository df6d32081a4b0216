"""The papers' experiments as registered, runnable configurations.

``dpbandits reproduce <name>`` (or :func:`reproduce`) runs one end to end:
it builds the experiment's grid, runs it with :func:`dpbandits.sweep`
(resumable: cells are kept under ``<out>/<name>/cells/``), and writes a PNG
figure, the numbers as CSV and JSON, and a markdown summary that places
the measured numbers beside the paper's statements.

Registering an experiment
-------------------------
One module per paper in this package (e.g. ``experiments/mishra_thakurta.py``);
every module here is imported when the registry is first read, so adding
the file is all it takes. In it::

    from dpbandits.experiments import RunOptions, register
    from dpbandits.experiments.report import Report

    @register("mishra-thakurta-fig1", paper="Mishra & Thakurta 2015, Fig. 1",
              title="private UCB regret vs epsilon", quick_seconds=10)
    def fig1(opts: RunOptions) -> Report:
        horizon = 10_000 if opts.quick else 1_000_000
        grid = {...}                      # configurations for dpbandits.sweep
        report = Report(opts, "mishra-thakurta-fig1")   # starts the clock
        res = opts.sweep("mishra-thakurta-fig1", grid, default_seeds=4 if opts.quick else 20)
        ...           # report.add_row(...), report.figure = draw, report.paper_vs_measured(...)
        return report

The function receives :class:`RunOptions` (``quick``, ``out``, ``backend``,
``seeds``, ``n_jobs``, ``progress``) and returns the
:class:`~dpbandits.experiments.report.Report` whose ``write()`` the caller
invokes (files: ``<name>.png``, ``<name>.csv``, ``<name>.json``,
``<name>.md``). ``--quick`` must finish in well under a minute.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpbandits.experiments.report import Report
    from dpbandits.sweeps import SweepResult

__all__ = ["Experiment", "RunOptions", "experiments", "get", "register", "reproduce"]


@dataclass(frozen=True)
class RunOptions:
    """How to run an experiment (what ``dpbandits reproduce`` parses)."""

    quick: bool = False
    out: Path = Path("results")
    backend: str = "processes"
    seeds: int | None = None
    n_jobs: int | None = None
    progress: bool = True
    client: Any = field(default=None, repr=False)
    #: ``time.perf_counter()`` when the run started; the report's wall time
    #: counts from here (None: from the report's creation).
    started: float | None = field(default=None, repr=False)

    def seed_count(self, default: int) -> int:
        """``--seeds`` if given, else the experiment's ``default``."""
        return default if self.seeds is None else int(self.seeds)

    def sweep(self, name: str, grid: Any, default_seeds: int) -> SweepResult:
        """Runs ``grid`` over seeds 0..N-1 with this run's backend; cells are
        kept in ``<out>/<name>/cells`` so a rerun resumes."""
        from dpbandits.sweeps import sweep

        return sweep(grid, self.seed_count(default_seeds), backend=self.backend,
                     results_dir=Path(self.out) / name, n_jobs=self.n_jobs, progress=self.progress,
                     client=self.client)


@dataclass(frozen=True)
class Experiment:
    """A registered experiment."""

    name: str
    title: str
    paper: str
    run: Callable[[RunOptions], Report]
    quick_seconds: float


_REGISTRY: dict[str, Experiment] = {}
_LOADED = False


def register(name: str, *, title: str, paper: str, quick_seconds: float = 30.0
             ) -> Callable[[Callable[[RunOptions], Report]], Callable[[RunOptions], Report]]:
    """Decorator: registers ``fn(opts) -> Report`` as experiment ``name``
    (lower-case words joined by hyphens, unique)."""
    if not name or name != name.lower() or " " in name:
        raise ValueError(f"invalid argument `name`: lower-case words joined by hyphens, got {name!r}")

    def add(fn: Callable[[RunOptions], Report]) -> Callable[[RunOptions], Report]:
        if name in _REGISTRY and _REGISTRY[name].run is not fn:
            raise ValueError(f"invalid argument `name`: experiment {name!r} is already registered")
        _REGISTRY[name] = Experiment(name, title, paper, fn, quick_seconds)
        return fn

    return add


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_") and mod.name != "report":
            importlib.import_module(f"{__name__}.{mod.name}")
    _LOADED = True


def experiments() -> Mapping[str, Experiment]:
    """Every registered experiment, by name (sorted)."""
    _load()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Experiment:
    """The experiment called ``name``; ValueError listing the valid names."""
    found = experiments()
    if name not in found:
        raise ValueError(f"invalid argument `name`: unknown experiment {name!r}; registered: {', '.join(found)}")
    return found[name]


def reproduce(name: str, quick: bool = False, out: str | Path = "results", backend: str = "processes",
              seeds: int | None = None, n_jobs: int | None = None, progress: bool = True,
              client: Any = None) -> Sequence[Path]:
    """Runs experiment ``name`` and writes its files under ``<out>/<name>/``;
    returns the paths written."""
    import time

    from dpbandits.sweeps import _check_backend

    started = time.perf_counter()
    exp = get(name)
    _check_backend(backend)
    if seeds is not None:
        from dpbandits._validation import positive_int

        seeds = positive_int("seeds", seeds)
    opts = RunOptions(quick=quick, out=Path(out), backend=backend, seeds=seeds, n_jobs=n_jobs, progress=progress,
                      client=client, started=started)
    return exp.run(opts).write()
