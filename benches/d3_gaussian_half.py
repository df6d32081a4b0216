"""The Gaussian half of ``dpbandits reproduce shariff-sheffet-d3``: the same
grid, seeds and cells (a sweep cell is keyed by its configuration and seed,
so leaving out the Wishart cells changes no Gaussian cell's draws), for a
re-run of the cells whose noise changed with exact lattice noise
(the App. D.3 section of REPRODUCTION.md). Prints the final regret per
(gap, rho_min) and writes them as JSON. Resumable (cells are kept in
``--out``).

    nice -n 3 python3 benches/d3_gaussian_half.py --out results/d3g
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from dpbandits import JointDPLinUCB, ShariffSheffetEnv
from dpbandits.experiments.shariff_sheffet import DELTA, EPSILON, d3_shift
from dpbandits.sweeps import sweep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="d3-gaussian", help="results folder (cells, finals.json)")
    parser.add_argument("--horizon", type=int, default=50_000_000)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    n = args.horizon
    base = {"d": 5, "horizon": n, "epsilon": EPSILON, "delta": DELTA}
    grid = {}
    for gap in (0.0, 0.1, 0.2):
        learners = {f"rho_min={r:.4g}": (JointDPLinUCB, {**base, "noise": "gaussian",
                                                          "shift": d3_shift("gaussian", float(r), n)})
                    for r in np.geomspace(1e3, 1e7, 9)}
        grid[f"gaussian-gap{gap}"] = {"learners": learners, "env": (ShariffSheffetEnv, {"d": 5, "k": 25, "gap": gap}),
                                      "meta": {"gap": gap, "noise": "gaussian"}}
    start = time.time()
    res = sweep(grid, 2, results_dir=Path(args.out) / "shariff-sheffet-d3", n_jobs=args.n_jobs, progress=True)
    finals = {}
    for (label, learner), sim in sorted(res.results().items()):
        f = np.asarray(sim.final_regret, dtype=float)
        mean, se = float(f.mean()), float(f.std(ddof=1) / np.sqrt(f.size))
        finals[f"{label} {learner}"] = [mean, se, f.tolist()]
        print(f"{label:18s} {learner:16s} {mean:12,.0f} ({se:,.0f})")
    (Path(args.out) / "finals.json").write_text(json.dumps({"wall_s": time.time() - start, "finals": finals},
                                                           indent=1))


if __name__ == "__main__":
    main()
