"""sweep(): (configuration, seed) cells through joblib, resumable (``dpbandits.sweeps``).

Claims checked:

- a cell's numbers are exactly those of a direct simulate()/simulate_many()
  call with that seed, whether the learner is given as an object or as a
  (class, kwargs) pair;
- the dask backend (a LocalCluster in this process, or a client passed in)
  returns the same numbers as local processes;
- a sweep killed with SIGKILL part-way (in a subprocess) and rerun completes
  with every cell exactly once and the numbers of an uninterrupted run; a
  rerun skips finished cells;
- a truncated or edited cell file is detected (CorruptCellError), never
  used; ``on_corrupt="recompute"`` runs that cell again;
- bad inputs (unknown backend, empty grid, duplicate seeds, malformed
  configurations) raise clear errors.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.envs import ShariffSheffetEnv
from dpbandits.learners.linucb import JointDPLinUCB, LinUCB
from dpbandits.sweeps import CorruptCellError, cell_key, load_sweep, sweep

TESTS = Path(__file__).resolve().parent


def small_grid(horizon: int = 1_500) -> dict[str, dict]:
    return {
        "pair": {
            "learners": {"lin": LinUCB(5, horizon), "gauss": (JointDPLinUCB, {"d": 5, "horizon": horizon,
                                                                              "epsilon": 1.0, "delta": 0.1})},
            "env": ShariffSheffetEnv(5, gap=0.1),
            "meta": {"gap": 0.1},
        },
        "single": {"learner": (LinUCB, {"d": 4, "horizon": horizon}), "env": (ShariffSheffetEnv, {"d": 4, "gap": 0.0}),
                   "record_every": 100, "meta": {"gap": 0.0}},
    }


def kill_grid() -> dict[str, dict]:
    """Ten cells of roughly 0.2-0.5 s each (d = 8, K = 64)."""
    return {f"g{g}": {"learner": (LinUCB, {"d": 8, "horizon": 8_000}),
                      "env": (ShariffSheffetEnv, {"d": 8, "gap": g}), "meta": {"gap": g}}
            for g in (0.0, 0.05, 0.1, 0.15, 0.2)}


def test_cells_equal_direct_simulate(tmp_path: Path) -> None:
    res = sweep(small_grid(), seeds=[3, 7], results_dir=tmp_path, n_jobs=2, progress=False)
    got = res.results()
    assert set(got) == {("pair", "lin"), ("pair", "gauss"), ("single", "learner")}
    direct = dp.simulate_many({"lin": LinUCB(5, 1_500), "gauss": JointDPLinUCB(5, 1_500, 1.0, 0.1)},
                              ShariffSheffetEnv(5, gap=0.1), seeds=[3, 7])
    for label in ("lin", "gauss"):
        np.testing.assert_array_equal(got[("pair", label)].regret, direct[label].regret)
        np.testing.assert_array_equal(got[("pair", label)].record_at, direct[label].record_at)
        assert got[("pair", label)].guarantee == direct[label].guarantee
    alone = dp.simulate(LinUCB(4, 1_500), ShariffSheffetEnv(4, gap=0.0), seeds=[3, 7], record_every=100)
    np.testing.assert_array_equal(got[("single", "learner")].regret, alone.regret)
    assert got[("single", "learner")].seeds.tolist() == [3, 7]
    frame = res.to_frame()
    assert set(frame["config"]) == {"pair", "single"} and set(frame["gap"]) == {0.0, 0.1}
    assert len(frame) == sum(r.regret.size for r in got.values())
    # the directory holds one file per cell and an index naming each
    index = json.loads((tmp_path / "index.json").read_text())["cells"]
    assert len(index) == 4 == len(list((tmp_path / "cells").glob("*.json")))
    assert sorted((v["label"], v["seed"]) for v in index.values()) == [("pair", 3), ("pair", 7),
                                                                         ("single", 3), ("single", 7)]
    reloaded = load_sweep(tmp_path).results()
    np.testing.assert_array_equal(reloaded[("pair", "gauss")].regret, got[("pair", "gauss")].regret)


def test_rerun_skips_finished_cells(tmp_path: Path) -> None:
    grid = small_grid(800)
    first = sweep(grid, seeds=2, results_dir=tmp_path, n_jobs=1, progress=False)
    mtimes = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "cells").glob("*.json")}
    # A finished cell comes back from disk unchanged (its recorded wall time too).
    again = sweep(grid, seeds=2, results_dir=tmp_path, n_jobs=1, progress=False)
    assert [c["wall_seconds"] for c in again.cells] == [c["wall_seconds"] for c in first.cells]
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "cells").glob("*.json")} == mtimes
    # one more seed runs only the new cells
    more = sweep(grid, seeds=3, results_dir=tmp_path, n_jobs=1, progress=False)
    assert len(more.cells) == 6 and len(list((tmp_path / "cells").glob("*.json"))) == 6
    assert [c["wall_seconds"] for c in more.cells if c["seed"] < 2] == [c["wall_seconds"] for c in first.cells]


def test_dask_backend_matches_processes() -> None:
    grid = small_grid(1_000)
    local = sweep(grid, seeds=[0, 5], backend="processes", n_jobs=2, progress=False).results()
    on_dask = sweep(grid, seeds=[0, 5], backend="dask", n_jobs=2, progress=False).results()
    assert set(local) == set(on_dask)
    for key in local:
        np.testing.assert_array_equal(on_dask[key].regret, local[key].regret)
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        given = sweep(grid, seeds=[0, 5], backend="dask", client=client, progress=False).results()
    for key in local:
        np.testing.assert_array_equal(given[key].regret, local[key].regret)


def test_sweep_killed_midway_resumes_without_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "run"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        from test_sweep import kill_grid
        from dpbandits.sweeps import sweep
        sweep(kill_grid(), seeds=2, results_dir={str(out)!r}, n_jobs=1, progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cells = out / "cells"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if cells.is_dir() and len(list(cells.glob("*.json"))) >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the sweep ended before it could be killed: {proc.stderr.read()!r}"
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker processes
    finally:
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
    written = len(list(cells.glob("*.json")))
    assert 2 <= written < 10, "the kill must land in the middle of the sweep"

    res = sweep(kill_grid(), seeds=2, results_dir=out, n_jobs=2, progress=False)
    files = list(cells.glob("*.json"))
    keys = [c["label"] + f"/{c['seed']}" for c in res.cells]
    assert len(files) == 10 and len(keys) == 10 and len(set(keys)) == 10
    index = json.loads((out / "index.json").read_text())["cells"]
    assert len(index) == 10 and {p.stem for p in files} == set(index)
    fresh = sweep(kill_grid(), seeds=2, n_jobs=2, progress=False).results()
    resumed = res.results()
    for key, r in fresh.items():
        np.testing.assert_array_equal(resumed[key].regret, r.regret)


def test_corrupt_cell_is_detected(tmp_path: Path) -> None:
    grid = small_grid(600)
    good = sweep(grid, seeds=1, results_dir=tmp_path, n_jobs=1, progress=False).results()
    files = sorted((tmp_path / "cells").glob("*.json"))
    text = files[0].read_text()
    files[0].write_text(text[: len(text) // 2])  # truncated
    with pytest.raises(CorruptCellError, match=files[0].name):
        sweep(grid, seeds=1, results_dir=tmp_path, progress=False)
    with pytest.raises(CorruptCellError, match="unreadable"):
        load_sweep(tmp_path)
    # valid JSON with an edited number fails the checksum
    body = json.loads(text)
    first = next(iter(body["payload"]["results"].values()))
    first["regret"][0][-1] += 1.0
    files[0].write_text(json.dumps(body))
    with pytest.raises(CorruptCellError, match="checksum"):
        sweep(grid, seeds=1, results_dir=tmp_path, progress=False)
    again = sweep(grid, seeds=1, results_dir=tmp_path, progress=False, on_corrupt="recompute", n_jobs=1).results()
    for key, r in good.items():
        np.testing.assert_array_equal(again[key].regret, r.regret)
    assert len(list((tmp_path / "cells").glob("*.corrupt-*"))) == 1


def test_cell_key_is_stable_and_distinguishes_cells() -> None:
    grid = small_grid()
    k = cell_key(grid["pair"], 3)
    assert k == cell_key(small_grid()["pair"], 3)  # rebuilt objects, same key
    assert k != cell_key(grid["pair"], 4)
    assert k != cell_key({**grid["pair"], "meta": {"gap": 0.2}}, 3)
    other = {**grid["pair"], "learners": {"lin": LinUCB(5, 1_500, regularizer=2.0)}}
    assert cell_key(other, 3) != cell_key({**grid["pair"], "learners": {"lin": LinUCB(5, 1_500)}}, 3)
    # a learner object and its (class, kwargs) pair are the same configuration
    obj = {"learner": LinUCB(4, 100), "env": ShariffSheffetEnv(4)}
    pair = {"learner": (LinUCB, LinUCB(4, 100).config), "env": ShariffSheffetEnv(4)}
    assert cell_key(obj, 0) == cell_key(pair, 0)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(TESTS)!r})
        from test_sweep import small_grid
        from dpbandits.sweeps import cell_key
        print(cell_key(small_grid()["pair"], 3))
    """)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == k  # the same in another process


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"backend": "threads"}, ValueError, "backend.*'processes', 'dask', 'ray'"),
        ({"grid": []}, ValueError, "grid.*empty"),
        ({"grid": {}}, ValueError, "grid.*empty"),
        ({"seeds": [1, 2, 1]}, ValueError, r"seeds.*distinct.*\[1\]"),
        ({"seeds": []}, ValueError, "seeds"),
        ({"seeds": 0}, ValueError, "seeds"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"client": object()}, ValueError, "client.*dask"),
        ({"on_corrupt": "ignore"}, ValueError, "on_corrupt"),
        ({"grid": [{"env": ShariffSheffetEnv(4)}]}, ValueError, "exactly one of `learner` and `learners`"),
        ({"grid": [{"learner": LinUCB(4, 10)}]}, ValueError, "needs an `env`"),
        ({"grid": [{"learner": LinUCB(4, 10), "env": ShariffSheffetEnv(4), "horizn": 5}]}, ValueError,
         "unknown keys"),
        ({"grid": [{"learner": LinUCB(4, 10), "env": ShariffSheffetEnv(4)}] * 2}, ValueError, "identical"),
        ({"grid": ["not a config"]}, TypeError, "must be a mapping"),
        ({"grid": 5}, TypeError, "grid"),
    ],
)
def test_bad_inputs_raise_clear_errors(kwargs: dict, error: type, match: str) -> None:
    args = {"grid": [{"learner": LinUCB(4, 10), "env": ShariffSheffetEnv(4)}], "seeds": 1, "progress": False,
            **kwargs}
    with pytest.raises(error, match=match):
        sweep(**args)


def test_errors_in_a_cell_propagate() -> None:
    grid = [{"learner": LinUCB(4, 10), "env": ShariffSheffetEnv(4), "horizon": 20}]
    with pytest.raises(ValueError, match="horizon"):
        sweep(grid, seeds=1, n_jobs=1, progress=False)


def test_progress_counts_every_learner_round(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[int] = []
    dp.simulate_many({"a": LinUCB(4, 20_000), "b": LinUCB(4, 20_000, regularizer=2.0)}, ShariffSheffetEnv(4),
                     seeds=[0, 1], progress=seen.append)
    assert seen[-1] == 2 * 2 * 20_000 and seen == sorted(seen)
    sweep(small_grid(3_000), seeds=2, n_jobs=2, progress=True)
    err = capsys.readouterr().err
    # 2 seeds x (2 learners x 3,000 + 1 learner x 3,000) learner-rounds
    assert "18.0k/18.0k" in err and "cells 4/4" in err
