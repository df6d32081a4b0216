"""A sweep on a dask.distributed cluster.

``dpbandits.sweep`` runs every (configuration, seed) cell of a grid; with
``backend="dask"`` the cells are tasks on a dask cluster (here a
``LocalCluster`` with two single-threaded worker processes; pass
``client=Client("scheduler-address")`` for a real cluster). Each finished
cell is written atomically to ``results_dir``, and a rerun skips finished
cells, so an interrupted sweep loses only the cells in flight. The grid:
private UCB (Mishra & Thakurta 2015) against UCB1 on a 5-armed Bernoulli
bandit at three values of epsilon.

    python examples/sweep_dask.py [horizon]    # default 100000; needs pip install "dpbandits[dask]"
"""

from __future__ import annotations

import os
import sys
import tempfile

import dpbandits as dp


def main(horizon: int) -> None:
    from dask.distributed import Client, LocalCluster

    grid = {
        f"eps{eps:g}": {
            "learners": {
                "UCB1": dp.UCB1(k=5, horizon=horizon),
                "PrivateUCB": dp.PrivateUCB(k=5, horizon=horizon, epsilon=eps, calibration="tight"),
            },
            "env": dp.BernoulliBandit([0.9, 0.8, 0.7, 0.6, 0.5]),
            "meta": {"epsilon": eps},
        }
        for eps in (0.5, 2.0, 8.0)
    }
    with tempfile.TemporaryDirectory() as results_dir, \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        res = dp.sweep(grid, seeds=2, backend="dask", client=client, results_dir=results_dir, progress=False)
        for (config, learner), r in sorted(res.results().items()):
            print(f"{config:6s} {learner:10s} regret {r.final_regret.mean():9.1f}")
        again = dp.sweep(grid, seeds=2, backend="dask", client=client, results_dir=results_dir, progress=False)
        assert again.results()[("eps2", "PrivateUCB")].final_regret.tolist() == \
            res.results()[("eps2", "PrivateUCB")].final_regret.tolist()  # read back from results_dir


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("DPBANDITS_EXAMPLE_HORIZON", 100_000)))
