"""Rounds per CPU second of every learner on its family's reference workload,
inside ``simulate`` (one replicate, one thread; learner and environment
together). CPU time of the process (``time.process_time``), not wall time:
on the shared machine the wall clock mostly measures the other users.
Feeds the speed column of docs/guide/choosing.md.

Workloads: K-armed, 10 Bernoulli arms (means 0.9 ... 0.45, as in
mishra-thakurta-ucb), T = 1e6; linear with a fixed action set, K = 10
unit actions in R^2 (hanna-fig2a), T = 1e6; contextual linear, App. D.2
(d = 5, K = 25, a fresh decision set per round), T = 1e5; online learning,
10 experts with Bernoulli losses (agarwal-singh-experts), T = 1e5, and
SCRiBLe / FTRL over the ball, N = 3, T = 1e5. All private learners at
epsilon = 1 (delta = 0.1 for the joint-DP LinUCB, 1e-6 for shuffle, 1e-5
for FTPL), default sampler (exact lattice noise where offered).

    nice -n 10 python3 benches/learner_speed.py --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

import dpbandits as dp


def workloads() -> dict[str, tuple[Any, dict[str, Any]]]:
    n_k, n_lin, n_ctx, n_ol = 1_000_000, 1_000_000, 100_000, 100_000
    means = np.linspace(0.9, 0.45, 10).tolist()
    bern = dp.BernoulliBandit(means)
    rng = np.random.default_rng(0)
    angles = rng.uniform(0, 2 * np.pi, 10)
    actions = np.column_stack([np.cos(angles), np.sin(angles)])
    lin = dp.LinearBanditEnv(actions)
    d2 = dp.ShariffSheffetEnv(d=5, gap=0.1)
    experts = dp.StochasticLosses([0.4] + [0.5] * 9)
    ball = dp.UniformLosses(center=[0.3, -0.4, 0.0], spread=0.3, geometry="ball")
    k = 10
    return {
        "UCB1": (bern, dict(learner=dp.UCB1(k, n_k))),
        "KLUCB": (bern, dict(learner=dp.KLUCB(k, n_k))),
        "ThompsonSampling": (bern, dict(learner=dp.ThompsonSampling(k, n_k))),
        "PrivateUCB (tight)": (bern, dict(learner=dp.PrivateUCB(k, n_k, 1.0, calibration="tight"))),
        "PrivateThompsonSampling (no gap estimation)": (bern, dict(learner=dp.PrivateThompsonSampling(
            k, n_k, 1.0, gap_estimation=False))),
        "DPKLUCB": (bern, dict(learner=dp.DPKLUCB(k, n_k, 1.0))),
        "DPIMED": (bern, dict(learner=dp.DPIMED(k, n_k, 1.0))),
        "AdaPUCB": (bern, dict(learner=dp.AdaPUCB(k, n_k, 1.0))),
        "AdaPKLUCB": (bern, dict(learner=dp.AdaPKLUCB(k, n_k, 1.0))),
        "AdaCUCB (rho = 0.5)": (bern, dict(learner=dp.AdaCUCB(k, n_k, 0.5))),
        "AdaCKLUCB (rho = 0.5)": (bern, dict(learner=dp.AdaCKLUCB(k, n_k, 0.5))),
        "DPSE": (bern, dict(learner=dp.DPSE(k, n_k, 1.0))),
        "DPTS": (bern, dict(learner=dp.DPTS(k, n_k, 1.0))),
        "EliminationLinearBandit (none)": (lin, dict(learner=dp.EliminationLinearBandit(actions, n_lin))),
        "EliminationLinearBandit (central)": (lin, dict(learner=dp.EliminationLinearBandit(
            actions, n_lin, privacy="central", epsilon=1.0))),
        "EliminationLinearBandit (local)": (lin, dict(learner=dp.EliminationLinearBandit(
            actions, n_lin, privacy="local", epsilon=1.0))),
        "EliminationLinearBandit (shuffle)": (lin, dict(learner=dp.EliminationLinearBandit(
            actions, n_lin, privacy="shuffle", epsilon=1.0, delta=1e-6))),
        "LinUCB": (d2, dict(learner=dp.LinUCB(5, n_ctx))),
        "JointDPLinUCB (Gaussian, paper)": (d2, dict(learner=dp.JointDPLinUCB(5, n_ctx, 1.0, 0.1))),
        "JointDPLinUCB (Gaussian, tight)": (d2, dict(learner=dp.JointDPLinUCB(5, n_ctx, 1.0, 0.1,
                                                                              calibration="tight"))),
        "JointDPLinUCB (Wishart)": (d2, dict(learner=dp.JointDPLinUCB(5, n_ctx, 1.0, 0.1, noise="wishart"))),
        "PrivateContextualUCB": (d2, dict(learner=dp.PrivateContextualUCB(5, n_ctx, 1.0))),
        "PrivateContextualThompsonSampling": (d2, dict(learner=dp.PrivateContextualThompsonSampling(5, n_ctx, 1.0))),
        "PrivateFTRL (experts)": (experts, dict(learner=dp.PrivateFTRL(10, n_ol, 1.0))),
        "PrivateFTPL (experts)": (experts, dict(learner=dp.PrivateFTPL(10, n_ol, 1.0, 1e-5))),
        "EXP2": (experts, dict(learner=dp.EXP2(10, n_ol, 1.0))),
        "PrivateFTRL (ball)": (ball, dict(learner=dp.PrivateFTRL(3, n_ol, 1.0, geometry="ball"))),
        "SCRiBLe (ball)": (ball, dict(learner=dp.SCRiBLe(3, n_ol, 1.0))),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*", help="substrings of the names to run")
    args = ap.parse_args()
    print("| learner | rounds per CPU second (median) | CPU ns/round | runs |")
    print("|---|---|---|---|")
    for name, (env, kw) in workloads().items():
        if args.only and not any(s in name for s in args.only):
            continue
        rates = []
        for r in range(args.repeats):
            start = time.process_time()
            dp.simulate(kw["learner"], env, seeds=[r])
            rates.append(kw["learner"].horizon / (time.process_time() - start))  # simulate runs the whole horizon
        med = statistics.median(rates)
        print(f"| {name} | {med:,.0f} | {1e9 / med:,.0f} | {', '.join(f'{r:,.0f}' for r in rates)} |", flush=True)


if __name__ == "__main__":
    main()
