"""Rounds per second of ``simulate`` at d = 5, K = 25 (D.2's environment,
gap 0.1) for the local and shuffle LinUCB learners (issue 23 target:
>= 1 M rounds/s), beside non-private LinUCB and JDP-LinUCB; one seed per
run, median of ``--runs`` runs. Side by side: a NumPy loop of the local
learner's per-round work (score K actions with theta and the Cholesky
factor of V, a Gaussian report of (upper(x x^T), y x) added to the released
sum, V and theta refreshed from the released sum), the loop a user would
write; its rounds/s over ``--numpy-rounds`` rounds and the ratio.

    nice -n 10 python3 benches/linucb_trust_speed.py --horizon 1000000 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dpbandits as dp
from dpbandits.learners import JointDPLinUCB, LinUCB, LocalLinUCB, ShuffleLinUCB


def numpy_local_linucb(rounds: int, d: int = 5, k: int = 25, sigma: float = 10.0, seed: int = 0) -> float:
    """Rounds/s of a NumPy loop doing the local learner's per-round work."""
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(d)
    theta_star = rng.standard_normal(d)
    theta_star /= np.linalg.norm(theta_star)
    gram = np.zeros((d, d))
    xy = np.zeros(d)
    start = time.perf_counter()
    for t in range(1, rounds + 1):
        v = gram + (1.0 + 3.0 * sigma * np.sqrt(t * d)) * np.eye(d)  # shift over the noise, as the learner
        chol = np.linalg.cholesky(v)
        theta = np.linalg.solve(v, xy)
        actions = rng.standard_normal((k, d))
        actions /= np.linalg.norm(actions, axis=1, keepdims=True)
        widths = np.linalg.norm(np.linalg.solve(chol, actions.T), axis=0)
        i = int(np.argmax(actions @ theta + 2.0 * widths))
        x = actions[i]
        y = float(x @ theta_star + rng.standard_normal())
        report = np.outer(x, x)[iu] + sigma * rng.standard_normal(len(iu[0]))
        released = np.zeros((d, d))
        released[iu] = report
        gram += released + np.triu(released, 1).T
        xy += y * x + sigma * rng.standard_normal(d)
    return rounds / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--numpy-rounds", type=int, default=20_000)
    args = parser.parse_args()
    n = args.horizon
    env = dp.ShariffSheffetEnv(5, 25, gap=0.1)
    learners = {
        "LinUCB (non-private)": LinUCB(5, n),
        "JointDPLinUCB tight": JointDPLinUCB(5, n, 1.0, 0.1, calibration="tight"),
        "ShuffleLinUCB vector-sum": ShuffleLinUCB(5, n, 1.0, 0.1),
        "ShuffleLinUCB amplification": ShuffleLinUCB(5, n, 1.0, 0.1, protocol="amplification"),
        "LocalLinUCB lattice": LocalLinUCB(5, n, 1.0, 0.1),
        "LocalLinUCB float": LocalLinUCB(5, n, 1.0, 0.1, sampler="float"),
        "LocalLinUCB noise off": LocalLinUCB(5, n),
    }
    numpy_rate = statistics.median(numpy_local_linucb(args.numpy_rounds, seed=r) for r in range(args.runs))
    print(f"{'NumPy loop, local learner':30s} median {numpy_rate / 1e6:.4f} M rounds/s over {args.runs} runs "
          f"of {args.numpy_rounds:,}")
    for name, learner in learners.items():
        rates = []
        for run in range(args.runs):
            start = time.perf_counter()
            dp.simulate(learner, env, horizon=n, seeds=[run])
            rates.append(n / (time.perf_counter() - start))
        print(f"{name:30s} median {statistics.median(rates) / 1e6:.3f} M rounds/s "
              f"(min {min(rates) / 1e6:.3f}, max {max(rates) / 1e6:.3f}) over {args.runs} runs of {n:,}; "
              f"{statistics.median(rates) / numpy_rate:.0f}x the NumPy loop")


if __name__ == "__main__":
    main()
