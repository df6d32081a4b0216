"""Registered experiments and ``dpbandits reproduce`` (``dpbandits.experiments``).

Claims checked:

- every registered experiment runs end to end with --quick and writes a
  non-empty PNG, a CSV with its rows, a JSON with the same rows and a
  markdown summary with the paper-vs-measured table;
- a rerun resumes from the cells on disk and writes the same numbers;
- ``reproduce --list`` lists the experiments; unknown names, a missing
  name and unknown backends are usage errors;
- registering is one decorator, and names must be unique.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from dpbandits import cli
from dpbandits.experiments import _REGISTRY, RunOptions, experiments, get, register
from dpbandits.experiments.report import Report, fit_loglog

NAMES = ("real-data", "shariff-sheffet-d1", "shariff-sheffet-d2", "shariff-sheffet-d3", "hanna-fig2a", "hanna-fig2b",
         "mishra-thakurta-ucb", "agarwal-singh-experts", "linear-trust-models", "linear-privacy-cost")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_registry_lists_the_experiments(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(NAMES) <= set(experiments())
    assert cli.main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name in NAMES:
        assert name in out
    assert "App. D.2" in out


@pytest.mark.parametrize("name", NAMES)
def test_quick_run_end_to_end(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["reproduce", name, "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    folder = tmp_path / name
    png = folder / f"{name}.png"
    assert png.read_bytes()[:8] == PNG_SIGNATURE and png.stat().st_size > 20_000
    with (folder / f"{name}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    data = json.loads((folder / f"{name}.json").read_text())
    assert rows and len(rows) == len(data["rows"])
    assert data["meta"]["quick"] is True and data["meta"]["experiment"] == name
    assert data["comparison"], "the summary must place measured numbers beside the paper's claims"
    md = (folder / f"{name}.md").read_text()
    assert "## Paper vs measured" in md and f"{name}.png" in md and "--quick" in md
    assert any(p.suffix == ".json" for p in (folder / "cells").iterdir())
    assert f"wrote {png}" in capsys.readouterr().out


def test_rerun_resumes_with_identical_numbers(tmp_path: Path) -> None:
    args = ["reproduce", "shariff-sheffet-d3", "--quick", "--seeds", "1", "--out", str(tmp_path), "--quiet"]
    assert cli.main(args) == 0
    folder = tmp_path / "shariff-sheffet-d3"
    first = json.loads((folder / "shariff-sheffet-d3.json").read_text())["rows"]
    cells = {p.name: p.stat().st_mtime_ns for p in (folder / "cells").glob("*.json")}
    assert cli.main(args) == 0
    assert json.loads((folder / "shariff-sheffet-d3.json").read_text())["rows"] == first
    assert {p.name: p.stat().st_mtime_ns for p in (folder / "cells").glob("*.json")} == cells


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["reproduce", "no-such-experiment"], "unknown experiment 'no-such-experiment'; registered: "),
        (["reproduce"], "give an experiment name or --list"),
        (["reproduce", "shariff-sheffet-d2", "--backend", "mpi"], "invalid choice: 'mpi'"),
        (["reproduce", "shariff-sheffet-d2", "--seeds", "0"], "must be >= 1"),
    ],
)
def test_usage_errors(argv: list[str], match: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert match in capsys.readouterr().err


def test_get_unknown_experiment_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="shariff-sheffet-d1"):
        get("nope")


def test_register_one_decorator_unique_names(tmp_path: Path) -> None:
    try:
        @register("toy-experiment", title="toy", paper="none", quick_seconds=1)
        def toy(opts: RunOptions) -> Report:
            report = Report(opts, "toy-experiment")
            report.add_row(x=1, y=2.5)
            report.compare("claim", "paper says", "we measured", "agrees")
            return report

        assert get("toy-experiment").run is toy
        written = toy(RunOptions(quick=True, out=tmp_path, progress=False)).write()
        assert [p.suffix for p in written] == [".csv", ".json", ".md"]  # no figure was set
        # The wall time counts from the run's start (opts.started), not from the report's creation.
        import time

        early = RunOptions(quick=True, out=tmp_path / "early", progress=False, started=time.perf_counter() - 100.0)
        toy(early).write()
        meta = json.loads((tmp_path / "early" / "toy-experiment" / "toy-experiment.json").read_text())["meta"]
        assert meta["wall_seconds"] >= 100.0
        with pytest.raises(ValueError, match="already registered"):
            register("toy-experiment", title="again", paper="none")(lambda opts: toy(opts))
        with pytest.raises(ValueError, match="lower-case"):
            register("Bad Name", title="x", paper="y")
    finally:
        _REGISTRY.pop("toy-experiment", None)


def test_fit_loglog_recovers_a_power_law() -> None:
    f = fit_loglog([4, 8, 16, 32], [3 * d**2 for d in (4, 8, 16, 32)])
    assert f["slope"] == pytest.approx(2.0) and f["slope_se"] == pytest.approx(0.0, abs=1e-9)
