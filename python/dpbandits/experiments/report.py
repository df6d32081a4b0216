"""What an experiment writes: a figure, its numbers (CSV, JSON) and a
markdown summary that puts the measured numbers beside the paper's claims."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits import __version__
from dpbandits.experiments import RunOptions, get

__all__ = ["Report", "fit_loglog", "markdown_table", "mean_se"]


def mean_se(values: ArrayLike) -> tuple[float, float]:
    """Mean and standard error of the mean (0 for one value)."""
    a = np.asarray(values, dtype=np.float64)
    se = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else 0.0
    return float(a.mean()), se


def fit_loglog(x: ArrayLike, y: ArrayLike) -> dict[str, float]:
    """Least-squares line log y = slope log x + intercept, with the slope's
    standard error (needs >= 3 points for the error; nan otherwise)."""
    lx, ly = np.log(np.asarray(x, dtype=np.float64)), np.log(np.asarray(y, dtype=np.float64))
    if lx.size < 2:
        raise ValueError("fit_loglog needs at least two points")
    slope, intercept = np.polyfit(lx, ly, 1)
    se = math.nan
    if lx.size > 2:
        resid = ly - (slope * lx + intercept)
        se = float(math.sqrt(resid @ resid / (lx.size - 2) / ((lx - lx.mean()) @ (lx - lx.mean()))))
    return {"slope": float(slope), "intercept": float(intercept), "slope_se": se}


def _cell(v: Any) -> str:
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:.3g}" if abs(v) < 1e3 else f"{v:,.0f}"
    return str(v)


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A GitHub markdown table of ``rows`` restricted to ``columns``."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


class Report:
    """Files of one experiment run under ``<out>/<name>/``.

    Fill ``rows`` (the table: CSV and JSON), ``data`` (extra JSON),
    ``settings`` (shown in the summary and the JSON), ``figure`` (a function
    ``path -> None`` drawing the PNG with matplotlib), ``comparison`` (rows
    claim / paper / measured / verdict) and ``notes``; then ``write()``.
    The clock starts with the run (``opts.started``) or, without one, when
    the report is created, and stops when every file but the summary is
    written, so the summary's wall time covers the experiment, the figure
    and the data files.
    """

    def __init__(self, opts: RunOptions, name: str) -> None:
        self.opts = opts
        self.name = name
        self.experiment = get(name)
        self.dir = Path(opts.out) / name
        self.rows: list[dict[str, Any]] = []
        self.data: dict[str, Any] = {}
        self.settings: dict[str, Any] = {"quick": opts.quick, "backend": opts.backend}
        self.figure: Callable[[Path], None] | None = None
        self.table_columns: list[str] | None = None
        self.comparison: list[dict[str, str]] = []
        self.notes: list[str] = []
        self._start = time.perf_counter() if opts.started is None else opts.started

    def add_row(self, **row: Any) -> None:
        """One row of the results table (column name -> value)."""
        self.rows.append(row)

    def compare(self, claim: str, paper: str, measured: str, verdict: str) -> None:
        """One line of the paper-vs-measured table."""
        self.comparison.append({"claim": claim, "paper": paper, "measured": measured, "verdict": verdict})

    def command(self) -> str:
        """The ``dpbandits reproduce`` command line that reruns this report."""
        parts = ["dpbandits reproduce", self.name]
        if self.opts.quick:
            parts.append("--quick")
        if self.opts.seeds is not None:
            parts.append(f"--seeds {self.opts.seeds}")
        if self.opts.backend != "processes":
            parts.append(f"--backend {self.opts.backend}")
        return " ".join(parts)

    def write(self) -> list[Path]:
        """Writes the PNG (when matplotlib is present), CSV, JSON and
        markdown; returns their paths."""
        self.dir.mkdir(parents=True, exist_ok=True)
        written = []
        png = self.dir / f"{self.name}.png"
        if self.figure is not None:
            if importlib.util.find_spec("matplotlib") is None:
                print("note: matplotlib is not installed, no figure drawn (pip install 'dpbandits[plot]')",
                      file=sys.stderr)
            else:
                self.figure(png)
                written.append(png)
        columns = self.table_columns or list(dict.fromkeys(k for r in self.rows for k in r))
        csv_path = self.dir / f"{self.name}.csv"
        with csv_path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
        written.append(csv_path)
        wall = time.perf_counter() - self._start
        meta = {"experiment": self.name, "title": self.experiment.title, "paper": self.experiment.paper,
                "command": self.command(), "wall_seconds": wall, "version": __version__, **self.settings}
        json_path = self.dir / f"{self.name}.json"
        json_path.write_text(json.dumps({"meta": meta, "rows": self.rows, "comparison": self.comparison,
                                         "data": self.data}, indent=1, default=_json_default))
        written.append(json_path)
        md_path = self.dir / f"{self.name}.md"
        md_path.write_text(self._markdown(meta, columns, png if png in written else None))
        written.append(md_path)
        return written

    def _markdown(self, meta: dict[str, Any], columns: list[str], png: Path | None) -> str:
        lines = [f"# {self.experiment.title}", "", f"{self.experiment.paper}.", "",
                 f"Command: `{meta['command']}`  ", f"Wall time: {meta['wall_seconds']:.1f} s (dpbandits "
                 f"{__version__})", ""]
        lines += ["Settings: " + ", ".join(f"{k} = {v}" for k, v in self.settings.items()), ""]
        if png is not None:
            lines += [f"![{self.name}]({png.name})", ""]
        if self.comparison:
            lines += ["## Paper vs measured", "",
                      markdown_table(self.comparison, ["claim", "paper", "measured", "verdict"]), ""]
        lines += ["## Measured numbers", "", markdown_table(self.rows, columns), ""]
        if self.notes:
            lines += ["## Notes", ""] + [f"- {n}" for n in self.notes] + [""]
        return "\n".join(lines)


def _json_default(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, Path):
        return str(v)
    raise TypeError(f"not JSON serializable: {type(v).__name__}")
