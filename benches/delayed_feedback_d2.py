"""Regret of ``dp.JointDPLinUCB`` on Shariff & Sheffet's App. D.2
environment when every reward arrives late: the reward of round t is
delivered at round t + tau_t, tau_t uniform on {0, ..., D}, independently
of everything else (so the arrival order depends only on the delays, never
on the reward values: the privacy argument of the online protocol holds
as is, each reward entering the tree once, in arrival order).

Each round the learner selects from the current decision set (reading the
release of the rewards that have arrived), then receives the rewards due
that round with ``update_many`` (rows and rewards of the plays they
belong to, in arrival order; ties in arrival time in play order). Rewards
still in flight after the last round are not delivered (they would not
change the decisions). The pseudo-regret sum_t max_a <x_a, theta*> -
<x_{a_t}, theta*> is reported per delay D, with its standard error over
seeds, and its excess over the undelayed run.

Environment: d = 5, K = 25, gap 0.1 (App. D.2), +-1 rewards; learner:
epsilon = 1, delta = 0.1, Gaussian tree noise (the D.2 "Gaussian" learner).

Run from the repository root:

    nice -n 10 python3 benches/delayed_feedback_d2.py                       # T = 100,000, 3 seeds
    nice -n 10 python3 benches/delayed_feedback_d2.py --horizon 1000000 --seeds 5
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections import defaultdict

import numpy as np

import dpbandits as dp


def run(horizon: int, delay: int, seed: int, gap: float) -> float:
    env = dp.ShariffSheffetEnv(d=5, k=25, gap=gap, seed=seed)
    learner = dp.JointDPLinUCB(5, horizon, 1.0, 0.1, seed=seed)
    delays = np.random.default_rng([seed, delay, 7]).integers(0, delay + 1, size=horizon)
    due: dict[int, list[tuple[np.ndarray, float]]] = defaultdict(list)
    regret = 0.0
    for t in range(1, horizon + 1):
        actions = env.decision_set(t)
        i = learner.select(actions)
        means = env.mean_rewards(t)
        regret += float(means.max() - means[i])
        due[t + int(delays[t - 1])].append((actions[i], env.reward(t, i)))
        arrived = due.pop(t, None)
        if arrived:
            learner.update_many(np.array([x for x, _ in arrived]), np.array([y for _, y in arrived]))
    return regret


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--delays", type=int, nargs="+", default=[0, 100, 1000, 10_000])
    ap.add_argument("--gap", type=float, default=0.1)
    args = ap.parse_args()
    rows = []
    base = None
    for delay in args.delays:
        t0 = time.perf_counter()
        regrets = [run(args.horizon, delay, seed, args.gap) for seed in range(args.seeds)]
        mean = statistics.fmean(regrets)
        se = statistics.stdev(regrets) / math.sqrt(len(regrets)) if len(regrets) > 1 else float("nan")
        base = mean if base is None else base
        rows.append((delay, mean, se, mean - base, time.perf_counter() - t0))
    print(f"JointDPLinUCB (Gaussian, eps=1, delta=0.1) on ShariffSheffetEnv(d=5, k=25, gap={args.gap}), "
          f"T={args.horizon:,}, {args.seeds} seeds; delays uniform on 0..D")
    print("| D | regret (mean) | s.e. | excess over D = 0 | excess / D |")
    print("|---|---|---|---|---|")
    for delay, mean, se, excess, _ in rows:
        per = f"{excess / delay:.2f}" if delay else "-"
        print(f"| {delay:,} | {mean:,.0f} | {se:,.0f} | {excess:+,.0f} | {per} |")


if __name__ == "__main__":
    main()
