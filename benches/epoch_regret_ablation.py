"""Where the extra regret of ``JointDPLinUCB(counter="epoch")`` comes from:
ablations on App. D.2 (d = 5, K = 25, gap 0), eps = 1, delta = 1e-6,
lattice noise, one shared set of environment realizations.

    nice -n 10 python benches/epoch_regret_ablation.py --n 100000 --seeds 8

Each variant is the learner's Rust engine with one thing changed:

- ``no-noise``: the same epochs, no noise and no noise terms in the
  radius (the cost of the first epoch's uninformed play and of the lag);
- ``no-noise-first-only``: the first epoch, then one-round epochs (the
  first epoch's cost alone; slow: it refactors every round);
- ``no-noise-lag-only``: one-round first epoch, then the epochs (the lag);
- ``bounds-x0.5``, ``bounds-x0.1``: the true noise, but the noise bounds
  B_N, B_b, B_w (shift and radius) scaled down. NOT valid bounds (the
  confidence set no longer has its coverage): they measure how much a
  tighter radius could buy at most;
- ``vec-bound-0``: the radius without its B_b and B_w terms (also not
  valid);
- ``first=N``, ``ratio=R``: other epoch schedules (valid);
- ``eps=E``, ``delta=D``: other privacy levels (valid).

Prints the mean (and standard error) of the cumulative regret at a few
rounds and at T, for each variant.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import dpbandits as dp
from dpbandits import _core
from dpbandits.learners.linucb import _bounds_policy, _radius_kwargs

D = 5


def epoch_variant(
    n: int, *, noise: bool = True, bounds: float = 1.0, vec_bounds: float | None = None, first: int | None = None,
    ratio: float = 1.5, epsilon: float = 1.0, delta: float = 1e-6,
) -> Any:
    """A JointDPLinUCB(counter="epoch") whose engine has the changes above."""
    learner = dp.JointDPLinUCB(D, n, epsilon, delta, calibration="tight", counter="epoch", first_epoch=first,
                               epoch_ratio=ratio, seed=0)
    c = learner.calibration
    vec = bounds if vec_bounds is None else vec_bounds
    learner._engine = _core.LinUcbEngine(
        D, n, noise=c.noise.wire() if noise else ("zero",), counter="epoch", first_epoch=c.first_epoch,
        epoch_ratio=c.ratio, op_bound=c.op_bound * bounds, vec_bound=c.vec_bound * vec, ridge=c.ridge, s=1.0,
        mixed_bound=c.mixed_bound * vec, l=1.0, b_tilde=1.0, clip=_bounds_policy("error"), seed=0,
        **_radius_kwargs(learner.radius),
    )
    return learner


def variants(n: int) -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {
        "LinUCB": lambda: dp.LinUCB(D, n),
        "epoch": lambda: epoch_variant(n),
        "no-noise": lambda: epoch_variant(n, noise=False, bounds=0.0),
        "no-noise-first-only": lambda: epoch_variant(n, noise=False, bounds=0.0, ratio=1.0),
        "no-noise-lag-only": lambda: epoch_variant(n, noise=False, bounds=0.0, first=1),
        "bounds-x0.5": lambda: epoch_variant(n, bounds=0.5),
        "bounds-x0.1": lambda: epoch_variant(n, bounds=0.1),
        "vec-bound-0": lambda: epoch_variant(n, vec_bounds=0.0),
    }
    for f in (72, 96, 288):
        out[f"first={f}"] = partial(epoch_variant, n, first=f)
    for r in (1.25, 1.75, 2.0):
        out[f"ratio={r:g}"] = partial(epoch_variant, n, ratio=r)
    for e in (2.0, 4.0, 8.0):
        out[f"eps={e:g}"] = partial(epoch_variant, n, epsilon=e)
    out["delta=0.1"] = partial(epoch_variant, n, delta=0.1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--only", nargs="*", default=None, help="variant names (default: all but the slow one)")
    args = parser.parse_args()
    n = args.n
    table = variants(n)
    names = args.only if args.only is not None else [v for v in table if v != "no-noise-first-only"]
    env = dp.ShariffSheffetEnv(d=D, gap=0.0, seed=0)
    every = 8 if n <= 1_000_000 else 1_000
    points = [p for p in (144, 1_000, 10_000, 100_000, 1_000_000) if p < n and p % every == 0] + [n]
    print(f"D.2 gap 0, eps 1, delta 1e-6 unless named, T = {n}, {args.seeds} seeds; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'variant':22s}" + "".join(f"{'t=' + format(p, ','):>12s}" for p in points) + "      se(T)")
    for name in names:
        res = dp.simulate(table[name](), env, seeds=args.seeds, record_every=every)
        at = np.asarray(res.record_at)
        mean = res.regret.mean(axis=0)
        row = [mean[min(int(np.searchsorted(at, p)), at.size - 1)] for p in points]
        f = res.final_regret
        print(f"{name:22s}" + "".join(f"{v:12.1f}" for v in row) + f"{f.std(ddof=1) / np.sqrt(f.size):11.1f}",
              flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
