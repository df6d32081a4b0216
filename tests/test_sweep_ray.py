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
