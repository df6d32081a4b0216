"""``dpbandits reproduce private-bai --quick`` runs in the test suite and
writes its figure, table and paper-vs-measured summary."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from dpbandits import cli
from dpbandits.experiments import experiments
from dpbandits.experiments.private_bai import binomial_upper_tail

NAME = "private-bai"


def test_private_bai_quick_run_writes_figure_and_table(tmp_path: Path) -> None:
    assert NAME in experiments()
    assert cli.main(["reproduce", NAME, "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    folder = tmp_path / NAME
    png = folder / f"{NAME}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (folder / f"{NAME}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["learner"] for r in rows} == {"DPTopTwo", "TopTwo (non-private)"}
    assert {float(r["epsilon"]) for r in rows} == {0.01, 0.1, 1.0, 10.0}
    assert {"mean_tau", "lb_2025", "ratio_2025", "error_rate", "p_value"} <= set(rows[0])
    for r in rows:
        assert float(r["stopped"]) == 1.0
        if r["learner"] == "DPTopTwo":
            assert float(r["ratio_2025"]) > 1.0  # no private learner beats the private lower bound
        else:
            assert float(r["mean_tau"]) > float(r["nonprivate_lb"])
    data = json.loads((folder / f"{NAME}.json").read_text())
    assert data["meta"]["quick"] is True and data["comparison"]


def test_binomial_tail_by_hand() -> None:
    # P(Bin(3, 1/2) >= 2) = 4/8
    assert abs(binomial_upper_tail(2, 3, 0.5) - 0.5) < 1e-12
    assert binomial_upper_tail(0, 10, 0.1) == 1.0
