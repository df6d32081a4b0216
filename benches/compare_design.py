"""Times dpbandits.design.core_set against a straightforward NumPy Frank-Wolfe.

Same algorithm on the same inputs (Hanna et al., App. A): uniform start,
exact line-search step, stop at max_a ||a||^2_{V^{-1}} <= stop_at. The
support reduction is switched off for fairness (NumPy does not do it).
Inputs: seeded random unit-norm actions, K = 1000, d = 10 and K = 10^4,
d = 20, with the paper's rule 2d and a tight rule 1.001 d. (Nearly
isotropic random actions meet 2d at the uniform start, so the 2d rows
time the setup; the 1.001 d rows time the Frank-Wolfe loop.)

BLAS runs on one thread unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS are
set (one-core numbers).

    python3 benches/compare_design.py
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from dpbandits.design import core_set  # noqa: E402


def numpy_frank_wolfe(actions: np.ndarray, stop_at: float, max_iter: int = 10_000):
    """App. A in NumPy: V^{-1} and all K quadratic forms recomputed each step."""
    k, d = actions.shape
    pi = np.full(k, 1.0 / k)
    for it in range(max_iter + 1):
        v = actions.T @ (pi[:, None] * actions)
        g = np.einsum("ij,ij->i", actions @ np.linalg.inv(v), actions)
        j = int(np.argmax(g))
        if g[j] <= stop_at:
            return pi, float(g[j]), it
        gamma = (g[j] / d - 1.0) / (g[j] - 1.0)
        pi *= 1.0 - gamma
        pi[j] += gamma
    raise RuntimeError("NumPy Frank-Wolfe did not stop")


def unit_actions(k: int, d: int, seed: int = 2024) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal((k, d))
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def median_seconds(fn: Callable[[], object], budget: float = 2.0, max_runs: int = 25) -> float:
    fn()  # warm up
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (len(times) < max_runs and time.perf_counter() - start < budget):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    print(f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']}")
    header = f"{'case':<26}{'iters':>7}{'dpbandits [s]':>16}{'numpy [s]':>14}{'ratio':>9}"
    print(header)
    print("-" * len(header))
    for k, d in [(1000, 10), (10_000, 20)]:
        a = unit_actions(k, d)
        for label, stop_at in [("2d", 2.0 * d), ("1.001d", 1.001 * d)]:
            ours = core_set(a, stop_at=stop_at, reduce_support=False)
            pi, value, iters = numpy_frank_wolfe(a, stop_at)
            assert ours.iterations == iters, (ours.iterations, iters)
            assert np.max(np.abs(ours.weights - pi)) < 1e-8
            assert abs(ours.value - value) < 1e-8
            t_ours = median_seconds(
                lambda a=a, s=stop_at: core_set(a, stop_at=s, reduce_support=False)
            )
            t_numpy = median_seconds(lambda a=a, s=stop_at: numpy_frank_wolfe(a, s))
            case = f"K={k} d={d} stop={label}"
            print(f"{case:<26}{iters:>7}{t_ours:>16.6f}{t_numpy:>14.6f}{t_numpy / t_ours:>8.1f}x")
        t_reduced = median_seconds(lambda a=a: core_set(a))
        print(f"{'  with reduce_support=True, stop=2d:':<49}{t_reduced:>.6f} s (dpbandits only)")


if __name__ == "__main__":
    main()
