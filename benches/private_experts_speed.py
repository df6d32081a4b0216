"""Rounds per second in ``simulate`` of every private online learner past
Agarwal & Singh (targets: >= 1 M rounds/s at d = 16 and >= 50 k rounds/s
at d = 1,024), beside the Agarwal & Singh learners (PrivateFTRL,
PrivateFTPL; EXP2 for the bandit) for reference. Experts learners on
StochasticLosses (expert 0 mean 0.4, the others 0.5), LazyPrivateOCO on
UniformLosses in R^d, the bandits with K = d arms on the same losses.

Median of ``--repeats`` interleaved runs, one replicate each, one
process; rates per CPU second of the process (``time.process_time``: on
a shared, loaded machine the wall clock measures the other processes
too), the environment's loss generation included, the parameter search
of the constructor excluded. The load average is printed beside.

    python benches/private_experts_speed.py --repeats 5
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import time

import dpbandits as dp


def rate(make, env, horizon: int) -> float:  # type: ignore[no-untyped-def]
    learner = make()  # the parameter search is not part of the simulation
    t0 = time.process_time()
    dp.simulate(learner, env, seeds=1)
    return horizon / (time.process_time() - t0)


def cases(sizes: list[int]):  # type: ignore[no-untyped-def]
    exact_lazy = "sampler" in inspect.signature(dp.LazyPrivateExperts).parameters
    out = []
    for d in sizes:
        h = 2**20 if d <= 64 else 2**15
        losses = dp.StochasticLosses([0.4] + [0.5] * (d - 1))
        ball = dp.UniformLosses([0.3] + [0.0] * (d - 1), 0.5)
        out += [
            (f"PrivateStochasticExperts d={d}", lambda d=d, h=h: dp.PrivateStochasticExperts(d, h, 0.05, seed=0),
             losses, h),
            (f"LazyPrivateExperts d={d}", lambda d=d, h=h: dp.LazyPrivateExperts(d, h, 0.1, seed=0), losses, h),
        ]
        if exact_lazy:
            out.append((f"LazyPrivateExperts float d={d}",
                        lambda d=d, h=h: dp.LazyPrivateExperts(d, h, 0.1, seed=0, sampler="float"), losses, h))
        hb = h // 4 if d > 64 else h
        out += [
            (f"PrivateDartboardExperts d={d}", lambda d=d, h=h: dp.PrivateDartboardExperts(d, h, 0.1, seed=0),
             losses, h),
            (f"LazyPrivateOCO n={d}", lambda d=d, h=hb: dp.LazyPrivateOCO(d, h, 0.1, seed=0), ball, hb),
            (f"BatchedPrivateEXP3 K={d}", lambda d=d, h=h: dp.BatchedPrivateEXP3(d, h, 1.0, seed=0), losses, h),
            (f"PrivateFTRL d={d} (reference)", lambda d=d, h=h // 8: dp.PrivateFTRL(d, h, 0.05, seed=0), losses,
             h // 8),
            (f"PrivateFTPL d={d} (reference)",
             lambda d=d, h=h // 8: dp.PrivateFTPL(d, h, 0.05, delta=1e-6, seed=0), losses, h // 8),
            (f"EXP2 K={d} (reference)", lambda d=d, h=h // 8: dp.EXP2(d, h, 1.0, seed=0), losses, h // 8),
        ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 1024])
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    args = ap.parse_args()
    todo = [c for c in cases(args.sizes) if args.only in c[0]]
    rates: dict[str, list[float]] = {name: [] for name, *_ in todo}
    loads = [os.getloadavg()[0]]
    for _ in range(args.repeats):
        for name, make, env, horizon in todo:
            rates[name].append(rate(make, env, horizon))
        loads.append(os.getloadavg()[0])
    for name, values in rates.items():
        print(f"{name:40s} median {statistics.median(values) / 1e6:7.3f} M rounds/s  "
              f"(runs: {', '.join(f'{v / 1e6:.3f}' for v in values)})")
    print(f"load average (1 min) during the runs: {min(loads):.1f} - {max(loads):.1f}")


if __name__ == "__main__":
    main()
