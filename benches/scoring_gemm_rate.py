"""JDP-LinUCB engine scoring in GFLOP/s next to the machine's dgemm rate, in one run.

The engine's ``select`` on K actions of dimension d (Gaussian JDP-LinUCB,
epsilon = 1, delta = 0.1, after 200 rounds) is timed from Python
(``learner._engine.select``: array conversion, reading the release, the
Cholesky factor, theta~, beta and the argmax included), and credited with
the flops of the scoring alone, per action:

- d (d - 1) for the triangular part, ||L^-1 x||^2: d (d - 1) / 2
  multiply-adds of the forward substitution (or of F x with F = L^-1,
  whose zero upper triangle is not counted),
- d for the scaling by 1 / L_ii (the diagonal of F),
- 2 d for the sum of squares and 2 d for <theta~, x>,

so K (d^2 + 4 d) flops (square root, beta and argmax not counted; neither
is the d^3 / 3 of the factor nor the d^3 / 6 of an inverse, though their
time is in the measurement). That is a lower bound on the kernel's rate.

dgemm is NumPy's ``matmul`` (its BLAS, 2 m k n flops) on the same shape as
the scoring, (d x d) @ (d x K), and on a 1024^3 square product; both with
the BLAS's default thread count and, when ``threadpoolctl`` is installed,
with one thread (the engine scores on one thread). The table shows medians
over ``--repeats`` runs, the measurements alternating within each run, and
the ratio of the engine's rate to each dgemm rate.

The engine spreads a large set's scoring over rayon's threads (K d^2 >=
2^22, so (64, 4096) but not (40, 400)); ``RAYON_NUM_THREADS=1`` keeps it on
one. On a shared machine wall time swings with the neighbours' load;
``--clock cpu`` times the calling thread's CPU time instead (then the
engine runs on one thread and dgemm on one BLAS thread only).

Run from the repository root:

    python3 benches/scoring_gemm_rate.py
    python3 benches/scoring_gemm_rate.py --repeats 5 --sizes 64x4096 40x400
    python3 benches/scoring_gemm_rate.py --clock cpu
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import timeit
from collections.abc import Callable, Iterator

import numpy as np
from compare_scoring import parse_sizes, unit_rows  # benches/ is on sys.path when run as a script

import dpbandits as dp

HORIZON = 1_000_000
WARMUP_ROUNDS = 200


CLOCK = {"wall": time.perf_counter, "cpu": time.thread_time}


def per_call(fn: Callable[[], object], clock: str, min_seconds: float = 0.2) -> float:
    """Mean seconds per call of a loop lasting about `min_seconds`."""
    timer = timeit.Timer(fn, timer=CLOCK[clock])
    number, elapsed = timer.autorange()
    number = max(1, int(number * min_seconds / max(elapsed, 1e-9)))
    return timer.timeit(number) / number


@contextlib.contextmanager
def blas_threads(n: int | None) -> Iterator[bool]:
    """Limits the BLAS to `n` threads (None: its default); yields whether it could."""
    if n is None:
        yield True
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield False
        return
    with threadpool_limits(limits=n, user_api="blas"):
        yield True


def engine_after_warmup(d: int, k: int, seed: int) -> tuple[object, np.ndarray]:
    rng = np.random.default_rng(seed)
    learner = dp.JointDPLinUCB(d=d, horizon=HORIZON, epsilon=1.0, delta=0.1, noise="gaussian", seed=seed)
    for _ in range(WARMUP_ROUNDS):
        learner.select(unit_rows(rng, k, d))
        learner.update(1.0 if rng.random() < 0.5 else -1.0)
    return learner._engine, unit_rows(rng, k, d)


def gflops(flops: float, seconds: float) -> float:
    return flops / seconds / 1e9


def measure(d: int, k: int, repeats: int, seed: int, clock: str) -> dict[str, float]:
    engine, actions = engine_after_warmup(d, k, seed)
    rng = np.random.default_rng(seed + 1)
    a, b = rng.standard_normal((d, d)), rng.standard_normal((d, k))
    c = np.empty((d, k))
    sa, sb = rng.standard_normal((1024, 1024)), rng.standard_normal((1024, 1024))
    sc = np.empty((1024, 1024))
    rates: dict[str, list[float]] = {}
    for _ in range(repeats):
        t = per_call(lambda: engine.select(actions), clock)
        rates.setdefault("engine", []).append(gflops(k * (d * d + 4 * d), t))
        for threads in (None, 1) if clock == "wall" else (1,):
            with blas_threads(threads) as limited:
                if not limited:
                    continue
                tag = "1t" if threads == 1 else "default"
                t = per_call(lambda: np.matmul(a, b, out=c), clock)
                rates.setdefault(f"dgemm shape {tag}", []).append(gflops(2 * d * d * k, t))
                t = per_call(lambda: np.matmul(sa, sb, out=sc), clock)
                rates.setdefault(f"dgemm 1024 {tag}", []).append(gflops(2 * 1024**3, t))
    return {name: statistics.median(v) for name, v in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", nargs="+", default=["64x4096", "40x400"], help="d x K pairs")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per cell (median reported)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall", help="wall time, or this thread's CPU time")
    args = parser.parse_args()
    if args.clock == "cpu":
        # Read when rayon starts its pool, at the engine's first parallel call.
        os.environ["RAYON_NUM_THREADS"] = "1"
    sizes = parse_sizes(parser, args, "64x4096")

    print(
        f"GFLOP/s ({args.clock} clock), median of {args.repeats} alternating runs; numpy {np.__version__}, "
        f"dpbandits {dp.__version__} (kernels: {dp._core.kernel_build()})"
    )
    print(
        "engine: K (d^2 + 4d) flops per select; dgemm: 2 m k n; 'shape' = (d x d) @ (d x K); "
        "'1t' = one BLAS thread, 'default' = the BLAS's default count\n"
    )
    for d, k in sizes:
        r = measure(d, k, args.repeats, args.seed, args.clock)
        print(f"d = {d}, K = {k}: engine {r['engine']:.1f} GFLOP/s")
        for name, rate in r.items():
            if name != "engine":
                print(f"    {name:<20}{rate:>8.1f} GFLOP/s   engine / dgemm = {r['engine'] / rate:.2f}")


if __name__ == "__main__":
    main()
