"""The ``dpbandits`` command (``dpbandits.cli``) and the regret figure.

Claims checked:

- every bad option is an argparse usage error: exit code 2 and a one-line
  message naming the option (and, for learner names, listing the valid
  ones), before anything is computed;
- ``--help`` documents every option with its default, ``--version`` prints
  the package version;
- a run prints a table whose header states the horizon and the seeds, short
  guarantees (model, epsilon, delta), the calibration note; ``--verbose``
  adds each guarantee's derivation;
- ``--out`` receives a CSV and a JSON of every curve whose numbers are the
  simulation's at log-spaced record points from the first round on, and
  the PNG, whose axes are logarithmic and whose legend explains the line
  (median) and the band (quantiles);
- without matplotlib the run says so before computing and still writes the
  numbers.
"""

from __future__ import annotations

import builtins
import csv
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import cli

SMALL = ["run", "--horizon", "400", "--seeds", "2", "--d", "3", "--quiet"]


def run_cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dpbandits", *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(("args", "option", "says"), [
    (["--horizon", "0"], "--horizon", "must be >= 1"),
    (["--horizon", "ten"], "--horizon", "expected a positive integer"),
    (["--seeds", "0"], "--seeds", "must be >= 1"),
    (["--epsilon", "-1"], "--epsilon", "must be finite and > 0"),
    (["--epsilon", "nan"], "--epsilon", "must be finite and > 0"),
    (["--delta", "1"], "--delta", "must lie in (0, 1)"),
    (["--delta", "0"], "--delta", "must be finite and > 0"),
    (["--d", "1"], "--d", "must be >= 2"),
    (["--gap", "2"], "--gap", "must lie in [0, 1.5)"),
    (["--learners", "gaussian,gausian"], "--learners", "unknown learner(s) 'gausian'; valid names: nonprivate"),
    (["--learners", ","], "--learners", "(none given)"),
])
def test_bad_options_are_usage_errors(args: list[str], option: str, says: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    # argparse: the usage line(s), then exactly one error line.
    assert err[-1].startswith("dpbandits run: error: argument ")
    assert option in err[-1] and says in err[-1]
    assert "Traceback" not in "\n".join(err)


def test_a_bad_option_from_the_shell_exits_2_without_traceback() -> None:
    proc = run_cli(["run", "--horizon", "0"])
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "dpbandits run: error: argument --horizon: must be >= 1, got 0"


def test_help_lists_every_option_with_defaults_and_the_learner_names(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for option in ("--horizon", "--seeds", "--d", "--k", "--gap", "--epsilon", "--delta", "--learners",
                   "--out", "--no-plot", "--verbose", "--quiet"):
        assert option in out
    assert "(default: 2000000)" in out and "(default: 0.1)" in out and "(default: results)" in out
    for name in cli.LEARNERS:
        assert name in out


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["reproduce", "--help"]])
def test_help_reads_clean(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 0
    out = capsys.readouterr().out
    # No reStructuredText markup, no empty or doubled defaults, and no
    # default value broken across lines.
    assert "``" not in out and ":func:" not in out and ":class:" not in out
    assert "(default: None)" not in out and "(default: False)" not in out
    text = " ".join(out.split())
    assert not re.search(r"\(default:[^()]*\)\s*\(default:", text)
    # A long default (a list) would be broken mid-word by the line wrapper.
    assert all(len(d) <= 30 for d in re.findall(r"\(default: ([^)]*)\)", text)), text
    for line in out.splitlines():
        assert len(line) <= 80, line


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"dpbandits {dp.__version__}"


def test_a_run_prints_the_table_and_writes_the_numbers(tmp_path: Path, capsys) -> None:
    out_dir = tmp_path / "out"
    code = cli.main([*SMALL, "--learners", "nonprivate,gaussiantight", "--out", str(out_dir), "--no-plot"])
    assert code == 0
    out = capsys.readouterr().out
    assert "horizon 400, 2 seeds" in out
    assert "NonPrivate" in out and "GaussianTight" in out
    row = next(line for line in out.splitlines() if line.startswith("GaussianTight"))
    assert row.split()[-4:] == ["joint", "1", "0.1", "tight"]
    assert "calibration: 'paper'" in out and "rounds/s" in out
    assert "derivation" not in out  # the long form is for --verbose
    assert not (out_dir / "d2_regret.png").exists()

    # The CSV and JSON hold exactly what simulate_many computes for these
    # seeds, at log-spaced record points from the first round on.
    again = dp.simulate_many(
        {"GaussianTight": dp.JointDPLinUCB(3, 400, 1.0, 0.1, calibration="tight")},
        dp.ShariffSheffetEnv(3, gap=0.1), seeds=2, record_every=1,
    )["GaussianTight"]
    again = again.at(cli.log_spaced(again.record_at))
    assert again.record_at[0] == 1 and again.record_at[-1] == 400
    with (out_dir / "d2_regret.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["learner"] == "GaussianTight"]
    got = np.array([float(r["regret"]) for r in rows]).reshape(again.regret.shape)
    np.testing.assert_array_equal(got, again.regret)
    doc = json.loads((out_dir / "d2_regret.json").read_text())
    assert doc["meta"]["horizon"] == 400 and doc["meta"]["seeds"] == 2
    assert doc["results"]["GaussianTight"]["guarantee"]["calibration"] == "tight"
    np.testing.assert_array_equal(np.asarray(doc["results"]["GaussianTight"]["regret"]), again.regret)
    np.testing.assert_array_equal(np.asarray(doc["results"]["GaussianTight"]["record_at"]), again.record_at)


def test_log_spaced_points_start_early_and_keep_the_last() -> None:
    points = cli.log_spaced(np.arange(100, 2_000_001, 100))
    assert points[0] == 100 and points[-1] == 2_000_000
    assert len(points) <= cli.LOG_POINTS + 1
    # Log-spaced: no gap wider than a factor 2 (the grid's own step at its
    # start), and the target ratio (2e4^(1/199), about 1.05) further on.
    ratios = np.asarray(points[1:]) / np.asarray(points[:-1])
    assert ratios.max() <= 2.0 and ratios[-50:].max() < 1.06


def test_main_help_is_plain_text_and_k_states_its_default_once(capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "``" not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "actions per round (default: d^2)" in out and "(default: None)" not in out


def test_verbose_prints_each_derivation(tmp_path: Path, capsys) -> None:
    cli.main([*SMALL, "--learners", "gaussian", "--out", str(tmp_path), "--no-plot", "--verbose"])
    out = capsys.readouterr().out
    assert "Shariff & Sheffet 2018, Claim 7" in out


def test_the_figure_has_a_log_axis_and_an_explained_band(tmp_path: Path, monkeypatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    saved = {}
    real_close = plt.close

    def keep(fig=None):
        saved["fig"] = fig
        return real_close(fig)

    monkeypatch.setattr(plt, "close", keep)
    assert cli.main([*SMALL, "--learners", "nonprivate,wishart", "--out", str(tmp_path)]) == 0
    png = tmp_path / "d2_regret.png"
    assert png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = saved["fig"].axes[0]
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:2] == ["NonPrivate", "Wishart"]
    assert "median" in labels[-1] and "10% to 90% quantiles over 2 seeds" in labels[-1]
    # The curves start in the first rounds, not at horizon / 200.
    first_x = min(float(np.min(line.get_xdata())) for line in ax.get_lines() if len(line.get_xdata()))
    assert first_x < 10
    assert "horizon=400" in ax.get_title() and "epsilon=1.0" in ax.get_title() and "delta=0.1" in ax.get_title()
    assert saved["fig"].dpi >= 150


def test_round_labels_are_short() -> None:
    from dpbandits.plot import round_label

    assert [round_label(v) for v in (0, 400, 250_000, 2_500_000, 50_000_000, 1.25e9)] == [
        "0",
        "400",
        "250k",
        "2.5M",
        "50M",
        "1.25B",
    ]


def test_without_matplotlib_the_run_says_so_first_and_still_writes_numbers(tmp_path: Path, monkeypatch,
                                                                            capsys) -> None:
    real_find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real_find(name, *a))
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ModuleNotFoundError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert cli.main([*SMALL, "--learners", "nonprivate", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "matplotlib is not installed" in err and "pip install 'dpbandits[plot]'" in err
    # Said before the computation started (the banner follows it).
    assert err.index("matplotlib is not installed") < err.index("Shariff & Sheffet App. D.2")
    assert (tmp_path / "d2_regret.csv").exists() and not (tmp_path / "d2_regret.png").exists()
