"""``dpbandits reproduce private-mab-frontier --quick`` runs in the test
suite and writes its figure, table and paper-vs-measured summary."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from dpbandits import cli
from dpbandits.experiments import experiments

NAME = "private-mab-frontier"


def test_frontier_quick_run_writes_figure_and_table(tmp_path: Path) -> None:
    assert NAME in experiments()
    assert cli.main(["reproduce", NAME, "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    folder = tmp_path / NAME
    png = folder / f"{NAME}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    with (folder / f"{NAME}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    learners = {r["learner"] for r in rows}
    assert {"DP-KLUCB adaptive", "DP-KLUCB a=1.5", "DP-IMED a=1.1", "AdaP-KLUCB", "AdaC-UCB", "DP-SE", "DPTS a=2",
            "KL-UCB", "PrivateUCB tight", "UCB1", "TS"} <= learners
    assert {"mean", "se", "median", "frac_above_2pct_T", "lb_azize2025_thm1"} <= set(rows[0])
    data = json.loads((folder / f"{NAME}.json").read_text())
    assert data["meta"]["quick"] is True and data["comparison"]
