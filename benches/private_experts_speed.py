"""Rounds per second of the private experts learners in ``simulate``
(targets: >= 1 M rounds/s at d = 16, >= 50 k rounds/s at d = 1,024, for
PrivateStochasticExperts on StochasticLosses), beside PrivateFTRL, and of
the bandit learners (BatchedPrivateEXP3 vs EXP2 at K = 16). Median of
``--repeats`` interleaved runs, one replicate each, one process; rates
per CPU second of the process (``time.process_time``: on a shared,
loaded machine the wall clock measures the other processes too), the
environment's loss generation included.

    python benches/private_experts_speed.py --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import dpbandits as dp


def rate(make, env, horizon: int) -> float:  # type: ignore[no-untyped-def]
    learner = make()  # the parameter search is not part of the simulation
    t0 = time.process_time()
    dp.simulate(learner, env, seeds=1)
    return horizon / (time.process_time() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    cases = []
    for d, horizon in ((16, 2**20), (1024, 2**15)):
        env = dp.StochasticLosses([0.4] + [0.5] * (d - 1))
        cases.append((f"PrivateStochasticExperts d={d}", lambda d=d, h=horizon: dp.PrivateStochasticExperts(
            d, h, 0.05, seed=0), env, horizon))
        cases.append((f"LazyPrivateExperts d={d}", lambda d=d, h=horizon: dp.LazyPrivateExperts(d, h, 0.1, seed=0),
                      env, horizon))
        cases.append((f"PrivateDartboardExperts d={d}",
                      lambda d=d, h=horizon: dp.PrivateDartboardExperts(d, h, 0.1, seed=0), env, horizon))
        cases.append((f"PrivateFTRL d={d}", lambda d=d, h=horizon // 8: dp.PrivateFTRL(d, h, 0.05, seed=0), env,
                      horizon // 8))
    for n, horizon in ((16, 2**18), (1024, 2**13)):
        ball = dp.UniformLosses([0.3] + [0.0] * (n - 1), 0.5)
        cases.append((f"LazyPrivateOCO n={n}", lambda n=n, h=horizon: dp.LazyPrivateOCO(n, h, 0.1, seed=0), ball,
                      horizon))
    env16 = dp.StochasticLosses([0.4] + [0.5] * 15)
    cases.append(("BatchedPrivateEXP3 K=16", lambda: dp.BatchedPrivateEXP3(16, 2**21, 1.0, seed=0), env16, 2**21))
    cases.append(("EXP2 K=16", lambda: dp.EXP2(16, 2**21, 1.0, seed=0), env16, 2**21))
    rates: dict[str, list[float]] = {name: [] for name, *_ in cases}
    for _ in range(args.repeats):
        for name, make, env, horizon in cases:
            rates[name].append(rate(make, env, horizon))
    for name, values in rates.items():
        print(f"{name:32s} median {statistics.median(values) / 1e6:7.3f} M rounds/s  "
              f"(runs: {', '.join(f'{v / 1e6:.3f}' for v in values)})")


if __name__ == "__main__":
    main()
