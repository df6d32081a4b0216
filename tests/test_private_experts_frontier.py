"""``dpbandits reproduce private-experts-frontier --quick`` runs in the test
suite and writes its figure, table and paper-vs-measured summary."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from dpbandits import cli
from dpbandits.experiments import experiments

NAME = "private-experts-frontier"


def test_private_experts_frontier_quick_run(tmp_path: Path) -> None:
    assert NAME in experiments()
    assert cli.main(["reproduce", NAME, "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    folder = tmp_path / NAME
    png = folder / f"{NAME}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    with (folder / f"{NAME}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["algorithm"] for r in rows} >= {"PrivateStochasticExperts", "LazyPrivateExperts", "PrivateFTRL",
                                              "PrivateFTPL", "BatchedPrivateEXP3", "EXP2"}
    assert {r["d"] for r in rows} >= {"16", "1024"}
    assert {"afkt_rate", "lazy_rate", "agarwal_singh_rate"} <= set(rows[0])
    data = json.loads((folder / f"{NAME}.json").read_text())
    assert data["meta"]["quick"] is True and data["comparison"]
    md = (folder / f"{NAME}.md").read_text()
    assert "## Paper vs measured" in md and "--quick" in md
