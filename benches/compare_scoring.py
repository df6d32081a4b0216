"""Time of one JDP-LinUCB ``select`` at several (d, K): dpbandits vs. plain NumPy.

One select of jointly DP LinUCB (Shariff & Sheffet 2018, Alg. 1, Gaussian
tree mechanism, epsilon = 1, delta = 0.1): read the released (d+1) x (d+1)
matrix, V_t = top-left block + shift I, its Cholesky factor, theta~_t,
beta_t, the UCB of every one of the K actions and the argmax.

- dpbandits: ``JointDPLinUCB.select(actions)`` from Python (the class's
  argument checking and conversion included), on a learner that has seen
  200 rounds; and the Rust engine's ``select`` alone (``learner._engine``,
  array conversion included), which is what ``simulate`` runs.
- NumPy: the same computation written as a user would (the select step of
  ``benches/compare_linucb.py``): ``np.linalg.cholesky`` and one
  ``np.linalg.solve`` with the K actions as right-hand sides, on a release
  built the same way (sum of outer products plus symmetric Gaussian noise of
  the learner's sigma) with the learner's shift and radius constants.

Each cell is the median over ``--repeats`` runs of the mean time per call of
a timed loop (the three implementations alternate within each run); the
ratios are NumPy / dpbandits (higher is better for dpbandits).

Run from the repository root:

    python3 benches/compare_scoring.py
    python3 benches/compare_scoring.py --repeats 3 --sizes 10x100 40x400
"""

from __future__ import annotations

import argparse
import platform
import statistics
import timeit

import numpy as np

import dpbandits as dp

HORIZON = 1_000_000
WARMUP_ROUNDS = 200


def unit_rows(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    g = rng.standard_normal((k, d))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def parse_sizes(parser: argparse.ArgumentParser, args: argparse.Namespace, example: str) -> list[tuple[int, ...]]:
    """``args.sizes`` ("dxK" strings) as (d, K) pairs; a parser error unless
    every pair is positive and ``args.repeats >= 1``."""
    sizes = [tuple(int(v) for v in s.lower().split("x")) for s in args.sizes]
    if args.repeats < 1 or any(len(s) != 2 or min(s) < 1 for s in sizes):
        parser.error(f"need --repeats >= 1 and sizes like {example}")
    return sizes


def numpy_select(release: np.ndarray, shift: float, rad: dp.privacy.ConfidenceRadius, actions: np.ndarray) -> int:
    """One JDP-LinUCB decision from a released M_t (see the module docstring)."""
    d = actions.shape[1]
    v = release[:d, :d] + shift * np.eye(d)
    u = release[:d, d]
    chol = np.linalg.cholesky(v)
    log_det = 2.0 * np.log(np.diag(chol)).sum()
    beta = rad.noise_sd * np.sqrt(max(0.0, rad.log_offset + log_det)) + rad.offset
    # With V = C C^T: <theta~, x> = (C^-1 u).(C^-1 x), ||x||_{V^-1} = ||C^-1 x||.
    w = np.linalg.solve(chol, np.column_stack([u, actions.T]))
    ucb = w[:, 0] @ w[:, 1:] + beta * np.sqrt((w[:, 1:] ** 2).sum(axis=0))
    return int(np.argmax(ucb))


def per_call(fn, min_seconds: float = 0.2) -> float:
    """Mean seconds per call of a loop lasting about `min_seconds`."""
    timer = timeit.Timer(fn)
    number, elapsed = timer.autorange()
    number = max(1, int(number * min_seconds / max(elapsed, 1e-9)))
    return timer.timeit(number) / number


def measure(d: int, k: int, repeats: int, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    learner = dp.JointDPLinUCB(d=d, horizon=HORIZON, epsilon=1.0, delta=0.1, noise="gaussian", seed=seed)
    cal, rad = learner.calibration, learner.radius
    # NumPy's release: the same statistics plus one symmetric Gaussian noise matrix per tree level in use.
    release = np.zeros((d + 1, d + 1))
    for _ in range(WARMUP_ROUNDS):
        actions = unit_rows(rng, k, d)
        i = learner.select(actions)
        y = 1.0 if rng.random() < 0.5 else -1.0
        learner.update(y)
        z = np.append(actions[i], y)
        release += np.outer(z, z)
    for _ in range(bin(WARMUP_ROUNDS + 1).count("1")):
        g = rng.normal(0.0, cal.sigma, size=(d + 1, d + 1))
        release += (g + g.T) / np.sqrt(2.0)
    actions = unit_rows(rng, k, d)

    engine = learner._engine
    ours, core, theirs = [], [], []
    for _ in range(repeats):
        ours.append(per_call(lambda: learner.select(actions)))
        core.append(per_call(lambda: engine.select(actions)))
        theirs.append(per_call(lambda: numpy_select(release, cal.shift, rad, actions)))
    return statistics.median(ours), statistics.median(core), statistics.median(theirs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", nargs="+", default=["5x25", "10x100", "20x400", "40x400"], help="d x K pairs")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per cell (median reported)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = parse_sizes(parser, args, "20x400")

    print("one Gaussian JDP-LinUCB select (eps = 1, delta = 0.1), median of", args.repeats, "runs")
    print(f"numpy {np.__version__}, dpbandits {dp.__version__} (kernels: {dp._core.kernel_build()}), "
          f"python {platform.python_version()}\n")
    print(f"{'d':>4}{'K':>6}{'select (us)':>13}{'engine (us)':>13}{'numpy (us)':>12}{'np/select':>11}{'np/engine':>11}")
    for d, k in sizes:
        ours, core, theirs = measure(d, k, args.repeats, args.seed)
        print(
            f"{d:>4}{k:>6}{ours * 1e6:>13.2f}{core * 1e6:>13.2f}{theirs * 1e6:>12.2f}"
            f"{theirs / ours:>10.1f}x{theirs / core:>10.1f}x"
        )


if __name__ == "__main__":
    main()
