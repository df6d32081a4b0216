"""Time of one round (one ``select`` + one ``update``) of LinUCB and
JointDPLinUCB through the public Python classes, beside NumPy.

The target workload: d = 40 with K = 400 actions and d = 64
with K = 4096 actions, unit rows, a new decision set every round (drawn
beforehand from a pool, so that no side times the drawing), rewards +-1.

Per round, per class (all after ``--warmup`` rounds, horizon 10^6):

- ``public``: ``i = learner.select(actions); learner.update(y)`` on
  ``dp.LinUCB`` / ``dp.JointDPLinUCB`` (Gaussian tree noise, epsilon = 1,
  delta = 0.1);
- ``engine``: the same two calls on ``learner._engine`` (``select`` and
  ``observe``: array conversion and the Rust engine, no Python wrapper) on
  a twin learner, to split the round into wrapper overhead
  (public - engine) and engine time;
- ``numpy``: the same algorithm with the same constants written as a
  user would. LinUCB: V^-1 by Sherman-Morrison, refactored from the exact
  V every ``refactor_every`` = 64 rounds, log det V by the matrix
  determinant lemma, beta_t of Prop. 4 from ``learner.radius``, x scaled
  to norm L. JointDPLinUCB: the tree mechanism of
  ``benches/compare_linucb.py`` over the (d+1) x (d+1) matrix M_t with
  symmetric Gaussian node noise of the learner's sigma (float draws), V_t =
  top-left block + shift I, its Cholesky factor C, C^-1 by one triangular
  solve (SciPy), then one GEMM over the K actions (4x faster at (40, 400)
  than ``np.linalg.solve`` with the actions as right-hand sides, the form
  of ``benches/compare_scoring.py``).

NumPy draws floating-point Gaussians; the dpbandits learner's default is
exact lattice noise (``sampler="lattice"``, README "Released values"),
which costs more per draw. ``--sampler`` picks the dpbandits sampler
(default: both, ``float`` being the like-for-like row).

The three implementations alternate within each of ``--repeats`` runs
(each run times ``--seconds`` per implementation and cell); the median per
round over the runs is reported, with ratios NumPy / dpbandits (higher is
better for dpbandits), the wrapper share of the public round (public -
engine) and ``convert``: the binding's conversion of the decision set, in
us (part of ``engine``; see ``ConversionOnly``). Times
are CPU time of the process (``time.process_time``): on a shared machine
the wall clock mostly measures the other users. One core each: OpenBLAS is
limited to one thread (``OPENBLAS_NUM_THREADS=1``) and so is the engine
(``RAYON_NUM_THREADS=1``: it would split a large set's scoring, K d^2 >=
2^22 as at (64, 4096), over rayon's threads, whose hand-over and idle
spinning count as CPU time without doing the round's work), unless the
environment sets them; ``benches/scoring_gemm_rate.py`` measures the split
in wall time.

Run from the repository root:

    nice -n 10 python3 benches/compare_select_update.py                # both sizes, ~1 min
    nice -n 10 python3 benches/compare_select_update.py --sizes 40x400 --repeats 5
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads OpenBLAS
os.environ.setdefault("RAYON_NUM_THREADS", "1")  # before the engine's first parallel call

import numpy as np
from compare_linucb import NumpyTree  # benches/ is on sys.path when run as a script
from compare_scoring import parse_sizes, unit_rows
from scipy.linalg import solve_triangular

import dpbandits as dp

HORIZON = 1_000_000
POOL = 16


# --------------------------------------------------------------------------
# NumPy references
# --------------------------------------------------------------------------


def clipped(x: np.ndarray | None, l_bound: float) -> np.ndarray:
    """The played action scaled into the ball of radius L (the learners' clip policy)."""
    assert x is not None
    norm = np.sqrt(x @ x)
    return x * (l_bound / norm) if norm > l_bound else x


class NumpyLinUCB:
    """Non-private LinUCB with the learner's constants (see the module docstring)."""

    def __init__(self, learner: dp.LinUCB, refactor_every: int = 64) -> None:
        d, rho = learner.d, learner.regularizer
        self.rad, self.l_bound, self.every = learner.radius, float(learner.config["L"]), refactor_every
        self.v = rho * np.eye(d)
        self.vinv = np.eye(d) / rho
        self.u = np.zeros(d)
        self.log_det = d * np.log(rho)
        self.t = 0
        self.pending: np.ndarray | None = None

    def select(self, actions: np.ndarray) -> int:
        rad = self.rad
        if rad.log_det_coefficient == 0.0:
            beta = rad.beta()
        else:
            beta = rad.noise_sd * np.sqrt(max(0.0, rad.log_offset + self.log_det)) + rad.offset
        theta = self.vinv @ self.u
        xv = actions @ self.vinv
        ucb = actions @ theta + beta * np.sqrt(np.einsum("ij,ij->i", xv, actions))
        i = int(np.argmax(ucb))
        self.pending = actions[i]
        return i

    def update(self, y: float) -> None:
        x = clipped(self.pending, self.l_bound)
        vx = self.vinv @ x
        q = 1.0 + x @ vx
        self.log_det += np.log(q)
        self.v += np.outer(x, x)
        self.t += 1
        if self.t % self.every == 0:
            self.vinv = np.linalg.inv(self.v)
        else:
            self.vinv -= np.outer(vx, vx / q)
        self.u += y * x
        self.pending = None


class NumpyJointDPLinUCB:
    """Gaussian JDP-LinUCB (tree mechanism over M_t) with the learner's constants."""

    def __init__(self, learner: dp.JointDPLinUCB, rng: np.random.Generator) -> None:
        d = learner.d
        p = d + 1
        cal = learner.calibration
        self.d, self.p, self.sigma, self.shift, self.rad = d, p, cal.sigma, cal.shift, learner.radius
        self.b_tilde, self.l_bound = float(learner.config["B_tilde"]), float(learner.config["L"])
        self.rng = rng
        self.tree = NumpyTree(p, HORIZON + 1, cal.sigma, rng)
        self.eye = np.eye(d)
        self.last_good: tuple[np.ndarray, np.ndarray] | None = None
        self.pending: np.ndarray | None = None
        self.tree.add(np.zeros((p, p)))  # A_1 = 0: the first leaf is the zero row

    def select(self, actions: np.ndarray) -> int:
        d, rad = self.d, self.rad
        v = self.tree.release[:d, :d] + self.shift * self.eye
        u = self.tree.release[:d, d]
        try:
            chol = np.linalg.cholesky(v)
            self.last_good = chol, u
        except np.linalg.LinAlgError:
            if self.last_good is None:
                self.last_good = np.sqrt(abs(self.shift)) * self.eye, np.zeros(d)
            chol, u = self.last_good
        if rad.log_det_coefficient == 0.0:
            beta = rad.beta()
        else:
            log_det = 2.0 * np.log(np.diag(chol)).sum()
            beta = rad.noise_sd * np.sqrt(max(0.0, rad.log_offset + log_det)) + rad.offset
        # With V = C C^T: <theta~, x> = (C^-1 u).(C^-1 x), ||x||_{V^-1} = ||C^-1 x||;
        # C^-1 (d^3 / 3 flops) then one GEMM over the K actions.
        cinv = solve_triangular(chol, self.eye, lower=True)
        w = actions @ cinv.T
        ucb = w @ (cinv @ u) + beta * np.sqrt(np.einsum("ij,ij->i", w, w))
        i = int(np.argmax(ucb))
        self.pending = actions[i]
        return i

    def update(self, y: float) -> None:
        x = clipped(self.pending, self.l_bound)
        z = np.append(x, min(max(y, -self.b_tilde), self.b_tilde))
        self.tree.add(np.outer(z, z))
        self.pending = None


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


class EngineRounds:
    """select + observe on the bare engine (binding and Rust, no Python wrapper)."""

    def __init__(self, learner: Any) -> None:
        self.engine = learner._engine

    def select(self, actions: np.ndarray) -> int:
        i = self.engine.select(actions)
        self.pending = actions[i]
        return int(i)

    def update(self, y: float) -> None:
        self.engine.observe(self.pending, y)


class ConversionOnly:
    """The binding's conversion of a decision set alone: ``select`` on an
    engine of dimension d + 1, which converts (and, on this branch, checks)
    the whole (K, d) array before refusing its shape. ``engine`` minus this
    is the Rust engine's own select + observe."""

    def __init__(self, d: int) -> None:
        self.engine = dp.LinUCB(d + 1, HORIZON, seed=0)._engine

    def select(self, actions: np.ndarray) -> int:
        try:
            self.engine.select(actions)
        except ValueError:
            pass
        return 0

    def update(self, y: float) -> None:
        pass


def per_round(side: Any, sets: list[np.ndarray], rewards: np.ndarray, seconds: float) -> float:
    """Mean CPU seconds per select + update over a loop of about `seconds`."""
    n, rounds, start = len(sets), 0, time.process_time()
    while True:
        for j in range(64):
            side.select(sets[(rounds + j) % n])
            side.update(rewards[(rounds + j) % len(rewards)])
        rounds += 64
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return elapsed / rounds


def make_learner(kind: str, d: int, sampler: str, seed: int) -> Any:
    if kind == "LinUCB":
        return dp.LinUCB(d, HORIZON, seed=seed)
    return dp.JointDPLinUCB(d, HORIZON, 1.0, 0.1, noise="gaussian", sampler=sampler, seed=seed)


def measure(
    kind: str, d: int, k: int, sampler: str, repeats: int, seconds: float, warmup: int, seed: int
) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    sets = [unit_rows(rng, k, d) for _ in range(POOL)]
    rewards = np.where(rng.random(1013) < 0.5, -1.0, 1.0)
    public = make_learner(kind, d, sampler, seed)
    twin = make_learner(kind, d, sampler, seed)
    reference = NumpyLinUCB(public) if kind == "LinUCB" else NumpyJointDPLinUCB(public, rng)
    sides: dict[str, Any] = {"public": public, "engine": EngineRounds(twin), "numpy": reference,
                             "convert": ConversionOnly(d)}
    for side in sides.values():
        for t in range(warmup):
            side.select(sets[t % POOL])
            side.update(rewards[t % len(rewards)])
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, side in sides.items():
            times[name].append(per_round(side, sets, rewards, seconds))
    return {name: statistics.median(v) for name, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", nargs="+", default=["40x400", "64x4096"], help="d x K pairs")
    parser.add_argument("--classes", nargs="+", default=["LinUCB", "JointDPLinUCB"],
                        choices=["LinUCB", "JointDPLinUCB"])
    parser.add_argument("--sampler", nargs="+", default=["float", "lattice"], choices=["float", "lattice"],
                        help="JointDPLinUCB's sampler(s)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per cell (median reported)")
    parser.add_argument("--seconds", type=float, default=0.3, help="timed seconds per implementation and run")
    parser.add_argument("--warmup", type=int, default=200, help="rounds played before timing")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = parse_sizes(parser, args, "40x400")

    print("one round = select + update, CPU us per round; median of", args.repeats, "interleaved runs")
    print(f"numpy {np.__version__} (OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, "
          f"RAYON_NUM_THREADS={os.environ['RAYON_NUM_THREADS']}), "
          f"dpbandits {dp.__version__} (kernels: {dp._core.kernel_build()}), python {platform.python_version()}\n")
    header = (f"{'class':<26}{'d':>4}{'K':>6}{'public':>10}{'engine':>10}{'numpy':>10}"
              f"{'np/public':>11}{'np/engine':>11}{'wrapper':>9}{'convert':>9}")
    print(header)
    cells: list[tuple[str, str]] = []
    for kind in args.classes:
        for sampler in ([""] if kind == "LinUCB" else args.sampler):
            cells.append((kind, sampler))
    for d, k in sizes:
        for kind, sampler in cells:
            m = measure(kind, d, k, sampler or "float", args.repeats, args.seconds, args.warmup, args.seed)
            label = kind if not sampler else f"{kind} ({sampler})"
            share = (m["public"] - m["engine"]) / m["public"]
            print(
                f"{label:<26}{d:>4}{k:>6}{m['public'] * 1e6:>10.1f}{m['engine'] * 1e6:>10.1f}"
                f"{m['numpy'] * 1e6:>10.1f}{m['numpy'] / m['public']:>10.2f}x{m['numpy'] / m['engine']:>10.2f}x"
                f"{share:>8.0%}{m['convert'] * 1e6:>9.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
