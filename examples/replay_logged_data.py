"""Replay of a logged data set.

A logged classification data set (features and the true label of each
record) becomes a contextual bandit: each record is a round, the classes
are the arms, and the reward is 1 for the right class (supervised-to-bandit
replay, :class:`dpbandits.envs.ReplayEnv`). Here the log is a CSV file
(features, then the label in the last column); without a path the script
writes one from scikit-learn's bundled wine data (no download) and replays
that. Non-private LinUCB and jointly private LinUCB (tight calibration) run
on the same random orders of the records, entirely in Rust.

    python examples/replay_logged_data.py [horizon] [path.csv]   # default 1780 rounds (10 passes)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

import dpbandits as dp
from dpbandits.envs.replay import ReplayEnv, prepare_features


def write_example_log(path: Path) -> None:
    from sklearn.datasets import load_wine

    data = load_wine()
    np.savetxt(path, np.column_stack([data.data, data.target]), delimiter=",", fmt="%.6g")


def main(horizon: int, path: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if path is None:
            path = Path(tmp) / "wine_log.csv"
            write_example_log(path)
        log = np.loadtxt(path, delimiter=",", ndmin=2)
    features = prepare_features(log[:, :-1], components=6)  # standardize, 6 principal components, norm <= 1
    labels = log[:, -1].astype(np.int64)
    env = ReplayEnv(features, labels, name=path.stem)
    print(f"{env.n} logged records, {env.k} classes, d = {env.d}")
    learners = {
        "LinUCB": dp.LinUCB(env.d, horizon),
        "JDP-LinUCB eps=2": dp.JointDPLinUCB(env.d, horizon, epsilon=2.0, delta=0.1, calibration="tight"),
    }
    results = dp.simulate_many(learners, env, horizon=horizon, seeds=2)
    for name, res in results.items():
        print(f"{name}: error rate {res.final_regret.mean() / horizon:.3f} ({res.guarantee})")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("DPBANDITS_EXAMPLE_HORIZON", 1780))
    main(n, Path(sys.argv[2]) if len(sys.argv) > 2 else None)
