"""sweep(backend="ray"): the same numbers as local processes.

Runs only where ray is installed (``pip install 'dpbandits[ray]'``); it is
not part of the ``test`` extra.
"""

from __future__ import annotations

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from dpbandits.envs import ShariffSheffetEnv  # noqa: E402
from dpbandits.learners.linucb import JointDPLinUCB, LinUCB  # noqa: E402
from dpbandits.sweeps import sweep  # noqa: E402


def test_ray_backend_matches_processes() -> None:
    grid = {"pair": {"learners": {"lin": LinUCB(5, 800),
                                  "gauss": (JointDPLinUCB, {"d": 5, "horizon": 800, "epsilon": 1.0, "delta": 0.1})},
                     "env": ShariffSheffetEnv(5, gap=0.1)}}
    local = sweep(grid, seeds=[0, 3], n_jobs=2, progress=False).results()
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        on_ray = sweep(grid, seeds=[0, 3], backend="ray", n_jobs=2, progress=False).results()
    finally:
        ray.shutdown()
    for key, r in local.items():
        np.testing.assert_array_equal(on_ray[key].regret, r.regret)


def test_ray_backend_starts_its_own_instance_and_a_rerun_skips_finished_cells(tmp_path) -> None:
    grid = {"lin": {"learner": LinUCB(5, 300), "env": ShariffSheffetEnv(5, gap=0.1)}}
    first = sweep(grid, seeds=[1, 2, 3], backend="ray", n_jobs=2, results_dir=tmp_path, progress=False)
    assert not ray.is_initialized()  # the sweep shut down the instance it started
    cells = sorted(p.name for p in (tmp_path / "cells").iterdir())
    assert len(cells) == 3
    again = sweep(grid, seeds=[1, 2, 3], backend="ray", n_jobs=2, results_dir=tmp_path, progress=False)
    assert not ray.is_initialized()  # nothing to run: ray was never started
    assert sorted(p.name for p in (tmp_path / "cells").iterdir()) == cells
    np.testing.assert_array_equal(again.results()[("lin", "learner")].regret,
                                  first.results()[("lin", "learner")].regret)
