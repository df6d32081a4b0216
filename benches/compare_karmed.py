"""UCB1 and PrivateUCB (K = 10 Bernoulli arms) in ``simulate`` beside
20-line numba loops of the same algorithms (side by side):
nanoseconds per round, the engines and the loops interleaved, median of
several runs; numba's row is skipped when numba is not installed
(``pip install numba``; not a dependency of the package).

The numba UCB1 is Auer et al.'s index mean + sqrt(2 ln t / n) with one
Bernoulli reward a round. The numba private UCB keeps, per arm, the
binary-tree counter of Mishra & Thakurta (a Laplace draw for each node
completed, popcount(n) noisy nodes summed into the released sum) and
ranks arms by released mean + sqrt(2 ln t / n) + a noise width: the
same work per round as ``PrivateUCB`` with floating-point noise; the
engine row is run with both its default lattice noise and
``sampler="float"``.

    python3 benches/compare_karmed.py --horizon 10000000 --repeats 5
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dpbandits as dp

MEANS = np.linspace(0.9, 0.45, 10)


def _numba_loops() -> tuple[Callable[..., float], Callable[..., float]] | None:
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(cache=True)
    def ucb1(horizon, means, seed):  # type: ignore[no-untyped-def]
        np.random.seed(seed)  # noqa: NPY002 (numba supports the legacy generator only)
        k = means.size
        pulls = np.zeros(k)
        sums = np.zeros(k)
        regret, best = 0.0, means.max()
        for t in range(horizon):
            arm = t
            if t >= k:
                c = 2.0 * math.log(t + 1)
                top = -1.0
                for a in range(k):
                    s = sums[a] / pulls[a] + math.sqrt(c / pulls[a])
                    if s > top:
                        arm, top = a, s
            y = 1.0 if np.random.random() < means[arm] else 0.0  # noqa: NPY002
            sums[arm] += y
            pulls[arm] += 1.0
            regret += best - means[arm]
        return regret

    @numba.njit(cache=True)
    def private_ucb(horizon, means, scale, width, seed):  # type: ignore[no-untyped-def]
        np.random.seed(seed)  # noqa: NPY002
        k = means.size
        levels = 64
        exact = np.zeros((k, levels))   # exact node sums, per arm and level
        noisy = np.zeros((k, levels))   # their noisy values
        released = np.zeros(k)
        pulls = np.zeros(k, np.int64)
        regret, best = 0.0, means.max()
        for t in range(horizon):
            arm = t
            if t >= k:
                c = 2.0 * math.log(t + 1)
                top = -1.0e300
                for a in range(k):
                    n = pulls[a]
                    s = released[a] / n + math.sqrt(c / n) + width * math.log(n + 1.0) / n
                    if s > top:
                        arm, top = a, s
            y = 1.0 if np.random.random() < means[arm] else 0.0  # noqa: NPY002
            n = pulls[arm] + 1
            level = 0
            while (n >> level) & 1 == 0:
                level += 1
            node = y
            for j in range(level):
                node += exact[arm, j]
            exact[arm, level] = node
            u = np.random.random() - 0.5  # noqa: NPY002
            noisy[arm, level] = node - scale * math.copysign(math.log(1.0 - 2.0 * abs(u)), u)
            total = 0.0
            for j in range(levels):
                if (n >> j) & 1:
                    total += noisy[arm, j]
            released[arm] = total
            pulls[arm] = n
            regret += best - means[arm]
        return regret

    return ucb1, private_ucb


def _engine(make: Callable[[], Any], horizon: int) -> float:
    env = dp.BernoulliBandit(MEANS)
    learner = make()
    start = time.perf_counter()
    dp.simulate(learner, env, horizon, seeds=1)
    return (time.perf_counter() - start) / horizon * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    h = args.horizon
    loops = _numba_loops()
    rows: dict[str, Callable[[], float]] = {
        "dpbandits UCB1": lambda: _engine(lambda: dp.UCB1(10, h), h),
        "dpbandits PrivateUCB (tight, lattice)": lambda: _engine(
            lambda: dp.PrivateUCB(10, h, 1.0, calibration="tight"), h),
        "dpbandits PrivateUCB (tight, float)": lambda: _engine(
            lambda: dp.PrivateUCB(10, h, 1.0, calibration="tight", sampler="float"), h),
    }
    if loops is None:
        print("numba not installed: its rows are skipped")
    else:
        ucb1, private_ucb = loops
        ucb1(100, MEANS, 0)  # compile outside the timings
        private_ucb(100, MEANS, 1.0, 1.0, 0)
        levels = math.ceil(math.log2(h)) + 1

        def timed(f: Callable[[], float]) -> float:
            start = time.perf_counter()
            f()
            return (time.perf_counter() - start) / h * 1e9

        rows["numba UCB1"] = lambda: timed(lambda: ucb1(h, MEANS, 1))
        rows["numba private UCB (tree, float Laplace)"] = lambda: timed(
            lambda: private_ucb(h, MEANS, float(levels), float(levels) ** 1.5, 1))
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.repeats):
        for name, run in rows.items():
            times[name].append(run())
    print(f"{'loop':42s} {'ns/round (median)':>18s}")
    for name, ts in times.items():
        print(f"{name:42s} {statistics.median(ts):18.1f}")


if __name__ == "__main__":
    main()
