"""The workloads of the private experts and bandit learners, 4 seeds each
(final regret, mean and standard error, and the per-seed values):

1. stochastic experts: d = 1,024 (expert 0 mean loss 0.4, the others
   0.5), T = 2^16, eps = 0.05: PrivateStochasticExperts, PrivateFTRL,
   PrivateFTPL (delta 1e-6);
2. oblivious switching best expert: d = 1,024, T = 2^16, eps = 0.1:
   LazyPrivateExperts (exact draws, and the floating-point opt-in) and
   PrivateDartboardExperts (delta 1e-6),
   PrivateFTRL, PrivateFTPL, and the non-private lazy multiplicative
   weights;
3. bandits: K = 16, T = 10^6, eps = 1, stochastic (0.4 / 0.5) and
   switching losses: BatchedPrivateEXP3 and EXP2;
4. adaptive adversary (ChasingAdversary): d = 16, T = 2^14, eps = 0.1,
   every private experts learner, one per run;
5. online linear optimization on the unit ball: n = 8, T = 2^16,
   eps = 0.1, UniformLosses (centre (0.3, -0.2, 0.1, 0, ...), spread
   0.5): LazyPrivateOCO (delta 1e-6), PrivateFTRL and PrivateFTPL on the
   ball, and the non-private lazy exponential weights;
6. the unit ball, where the regret of LazyPrivateOCO goes: n in {2, 8,
   32}, eps in {0.1, 1, 4}, T = 2^16, LazyPrivateOCO beside PrivateFTRL
   and PrivateFTPL on the ball; at n = 8, the lazy engine run without
   privacy at the private learner's eta (one-round batches, no floor, no
   switch budget; also 4x and 16x that eta), to separate the base
   algorithm's cost from the lazy transformation's.

    python benches/private_experts_targets.py [--only 1,2,3,4,5,6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dpbandits as dp
from dpbandits import _core


def run(name: str, learner, env, seeds: int = 4) -> None:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    r = dp.simulate(learner, env, seeds=seeds).final_regret
    se = r.std(ddof=1) / np.sqrt(r.size)
    print(f"{name}: mean {r.mean():,.0f} se {se:,.0f} runs {np.round(r).astype(int).tolist()} "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="1,2,3,4,5,6")
    parts = {int(p) for p in ap.parse_args().only.split(",")}
    if 1 in parts:
        d, T, eps = 1024, 2**16, 0.05
        env = dp.StochasticLosses([0.4] + [0.5] * (d - 1))
        run("1 PrivateStochasticExperts", dp.PrivateStochasticExperts(d, T, eps, seed=0), env)
        run("1 PrivateFTRL", dp.PrivateFTRL(d, T, eps, seed=0), env)
        run("1 PrivateFTPL", dp.PrivateFTPL(d, T, eps, delta=1e-6, seed=0), env)
    if 2 in parts:
        d, T, eps = 1024, 2**16, 0.1
        env = dp.SwitchingBestExpert(d)
        lazy = dp.LazyPrivateExperts(d, T, eps, seed=0)
        print(f"2 lazy parameters: B {lazy.batch}, eta {lazy.eta:.3g}, gamma {lazy.gamma:g}, "
              f"max switches {lazy.max_switches}, {lazy.privacy}", flush=True)
        run("2 LazyPrivateExperts", lazy, env)
        run("2 LazyPrivateExperts (sampler='float')", dp.LazyPrivateExperts(d, T, eps, seed=0, sampler="float"), env)
        board = dp.PrivateDartboardExperts(d, T, eps, seed=0)
        print(f"2 dartboard parameters: B {board.batch}, eta {board.eta:.3g}, shift {board.shift:.4g}, "
              f"test noise {board.noise_wire}, max switches {board.max_switches}, {board.privacy}", flush=True)
        run("2 PrivateDartboardExperts", board, env)
        run("2 PrivateFTRL", dp.PrivateFTRL(d, T, eps, seed=0), env)
        run("2 PrivateFTPL", dp.PrivateFTPL(d, T, eps, delta=1e-6, seed=0), env)
        run("2 non-private lazy MW", dp.LazyPrivateExperts(d, T, None, seed=0), env)
    if 3 in parts:
        K, T, eps = 16, 10**6, 1.0
        for name, env in (("stochastic", dp.StochasticLosses([0.4] + [0.5] * (K - 1))),
                          ("switching", dp.SwitchingBestExpert(K))):
            b = dp.BatchedPrivateEXP3(K, T, eps, seed=0)
            print(f"3 batch tau {b.batch}, eta {b.eta:.3g}, gamma {b.gamma:.3g}", flush=True)
            run(f"3 {name} BatchedPrivateEXP3", b, env)
            run(f"3 {name} EXP2", dp.EXP2(K, T, eps, seed=0), env)
    if 4 in parts:
        d, T, eps = 16, 2**14, 0.1
        for lr in (dp.PrivateStochasticExperts(d, T, eps, seed=0), dp.LazyPrivateExperts(d, T, eps, seed=0),
                   dp.PrivateDartboardExperts(d, T, eps, seed=0), dp.PrivateFTRL(d, T, eps, seed=0),
                   dp.PrivateFTPL(d, T, eps, delta=1e-6, seed=0)):
            run(f"4 adaptive {type(lr).__name__}", lr, dp.ChasingAdversary(d))
    if 5 in parts:
        n, T, eps = 8, 2**16, 0.1
        env = dp.UniformLosses([0.3, -0.2, 0.1] + [0.0] * (n - 3), 0.5)
        oco = dp.LazyPrivateOCO(n, T, eps, seed=0)
        print(f"5 lazy ball parameters: B {oco.batch}, eta {oco.eta:.3g}, gamma {oco.gamma:.3g}, "
              f"max switches {oco.max_switches}, {oco.privacy}", flush=True)
        run("5 LazyPrivateOCO", oco, env)
        run("5 PrivateFTRL (ball)", dp.PrivateFTRL(n, T, eps, geometry="ball", seed=0), env)
        run("5 PrivateFTPL (ball)", dp.PrivateFTPL(n, T, eps, delta=1e-6, geometry="ball", seed=0), env)
        run("5 non-private lazy EW (ball)", dp.LazyPrivateOCO(n, T, None, seed=0), env)

    if 6 in parts:
        T = 2**16
        for n in (2, 8, 32):
            env = dp.UniformLosses(([0.3, -0.2, 0.1] + [0.0] * n)[:n], 0.5)
            for eps in (0.1, 1.0, 4.0):
                run(f"6 n {n} eps {eps:g} LazyPrivateOCO", dp.LazyPrivateOCO(n, T, eps, seed=0), env)
                run(f"6 n {n} eps {eps:g} PrivateFTRL (ball)", dp.PrivateFTRL(n, T, eps, geometry="ball", seed=0), env)
                run(f"6 n {n} eps {eps:g} PrivateFTPL (ball)",
                    dp.PrivateFTPL(n, T, eps, delta=1e-6, geometry="ball", seed=0), env)
        n, eps = 8, 0.1
        env = dp.UniformLosses([0.3, -0.2, 0.1] + [0.0] * (n - 3), 0.5)
        eta = dp.LazyPrivateOCO(n, T, eps, seed=0).eta
        for scale in (1, 4, 16):
            # The non-private learner's engine swapped for one at the chosen eta (B = 1, no floor, no budget).
            lr = dp.LazyPrivateOCO(n, T, None, seed=0)
            lr._engine = _core.LazyBallEngine(n, T, 1, scale * eta, 0.0, T, clip=True, seed=0)
            run(f"6 exponential weights at {scale} x the private eta {eta:.3g}", lr, env)


if __name__ == "__main__":
    main()
