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
    # The summary states the bound's asymptotic nature and its rule can disagree.
    bound_rows = [c for c in data["comparison"] if "lower bound" in c["claim"]]
    assert bound_rows and all("asymptotic" in c["paper"] for c in bound_rows)
    assert {c["verdict"] for c in bound_rows} <= {"agrees", "differs",
                                                   "inconclusive (below the asymptotic bound at finite T)"}


def test_frontier_rule_can_disagree() -> None:
    from dpbandits.experiments.private_mab_frontier import RATIO_LIMIT, frontier_verdict

    assert frontier_verdict(100.0, 100.0) == "agrees"
    assert frontier_verdict(RATIO_LIMIT * 100.0, 100.0) == "agrees"
    assert frontier_verdict(RATIO_LIMIT * 100.0 + 1.0, 100.0) == "differs"
    # 0.86x the bound (regret below an asymptotic bound at finite T) is not "agrees".
    assert frontier_verdict(86.0, 100.0).startswith("inconclusive")
