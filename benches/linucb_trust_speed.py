"""Rounds per second of ``simulate`` at d = 5, K = 25 (D.2's environment,
gap 0.1) for the local and shuffle LinUCB learners (target:
>= 1 M rounds/s), beside non-private LinUCB and JDP-LinUCB; one seed per
run, median of ``--runs`` runs. Side by side: a NumPy loop of the local
learner's per-round work (score K actions with theta and the Cholesky
factor of V, a Gaussian report of (upper(x x^T), y x) added to the released
sum, V and theta refreshed from the released sum), the loop a user would
write; its rounds/s over ``--numpy-rounds`` rounds and the ratio.

Beside the wall-clock rate, the rate per second of the process's CPU time:
on a shared machine a run waits for a core, which the wall clock counts
and the CPU time does not. ``--only`` keeps the learners whose name holds
one of the given words.

    nice -n 10 python3 benches/linucb_trust_speed.py --horizon 1000000 --runs 3
    python3 benches/linucb_trust_speed.py --runs 7 --numpy-rounds 0 --only Local Shuffle
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
    parser.add_argument("--numpy-rounds", type=int, default=20_000, help="0: no NumPy loop")
    parser.add_argument("--only", nargs="*", default=None, help="words of the learner names to keep")
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
        "LocalLinUCB noise off": LocalLinUCB(5, n, epsilon=None),
    }
    if args.only:
        learners = {k: v for k, v in learners.items() if any(w in k for w in args.only)}
    numpy_rate = None
    if args.numpy_rounds > 0:
        numpy_rate = statistics.median(numpy_local_linucb(args.numpy_rounds, seed=r) for r in range(args.runs))
        print(f"{'NumPy loop, local learner':30s} median {numpy_rate / 1e6:.4f} M rounds/s over {args.runs} runs "
              f"of {args.numpy_rounds:,}")
    for learner in learners.values():
        dp.simulate(learner, env, horizon=1000, seeds=[0])  # sampler tables built before timing
    # Runs interleaved across learners, so that a change of load hits all alike.
    rates: dict[str, list[float]] = {k: [] for k in learners}
    cpu_rates: dict[str, list[float]] = {k: [] for k in learners}
    for run in range(args.runs):
        for name, learner in learners.items():
            start, cpu = time.perf_counter(), time.process_time()
            dp.simulate(learner, env, horizon=n, seeds=[run])
            rates[name].append(n / (time.perf_counter() - start))
            cpu_rates[name].append(n / (time.process_time() - cpu))
    for name in learners:
        r, c = rates[name], cpu_rates[name]
        ratio = "" if numpy_rate is None else f"; {statistics.median(r) / numpy_rate:.0f}x the NumPy loop"
        print(f"{name:30s} median {statistics.median(r) / 1e6:.3f} M rounds/s "
              f"(min {min(r) / 1e6:.3f}, max {max(r) / 1e6:.3f}), per CPU second {statistics.median(c) / 1e6:.3f} M "
              f"over {args.runs} runs of {n:,}{ratio}")


if __name__ == "__main__":
    main()
