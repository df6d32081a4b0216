"""App. D.2's Wishart learners with persistent or fresh padding noise: a
NumPy reference that isolates why our shifted Wishart learner is the worst.

Prop. 9 needs every release to carry exactly m Wishart draws. Our engine
(``rust/src/tree.rs``, ``TreeCounter::with_padding``) tops the popcount(t)
noisy tree nodes up to m with a *fresh* data-independent draw every round,
so up to m - 1 of the m draws change from one round to the next. The
authors' code (PrivateBandits.jl, ``PanPrivTreeStrategy`` in
``src/DifferentialPrivacy.jl``) keeps m *persistent* noise terms: the
pan-private tree's state, of which only the trailing ones are redrawn when
the counter advances. Both releases have the law W(Ltilde^2 I, m k) each
round (so Prop. 9 holds for both and privacy is the same), but the fresh
padding makes the shifted regularizer H_t - c I jump by about its own size
every round, whereas the unshifted one moves by about 1%.

This script runs JDP-LinUCB with Wishart noise in pure NumPy, both noise
schemes, shifted and unshifted, on ``ShariffSheffetEnv`` (d = 5, K = 25),
calibrated for n = 5e7 with the paper's constants (or the authors' code's
with ``--constants code``), for ``--rounds`` rounds. The "fresh" rows
reproduce the engine's ordering; the "persistent" rows show the paper's.
Findings: REPRODUCTION.md, "App. D.2 Wishart ordering".

    nice -n 10 python3 benches/d2_wishart_padding.py --rounds 100000 --seeds 2
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np

import dpbandits as dp
from dpbandits.privacy.calibration import WishartCalibration, shariff_sheffet_wishart
from dpbandits.privacy.confidence import confidence_radius
from dpbandits.privacy.wishart_authors_code import authors_code_wishart


def wishart(rng: np.random.Generator, p: int, scale: float, df: float) -> np.ndarray:
    """W_p(scale I, df) by Bartlett's decomposition."""
    a = np.tril(rng.standard_normal((p, p)), -1)
    a[np.diag_indices(p)] = np.sqrt(rng.chisquare(df - np.arange(p)))
    return scale * (a @ a.T)


class PersistentTree:
    """PrivateBandits.jl's PanPrivTreeStrategy: m state matrices, every
    release is one of them and holds exactly m persistent noise draws."""

    def __init__(self, m: int, noise: Any, init: np.ndarray) -> None:
        self.m, self.noise, self.count = m, noise, 0
        self.state: list[np.ndarray] = [init.copy() for _ in range(m)]
        self.add(None)  # initialize(): the first accum! adds noise, no data

    def add(self, x: np.ndarray | None) -> None:
        m, mask = self.m, (1 << (self.m - 1)) - 1
        leaf = bin(self.count).count("1")
        v = self.count | (~mask & ((1 << 64) - 1))
        new = leaf + ((v & -v).bit_length() - 1)
        if x is not None:
            for i in range(m - 1, new - 1, -1):
                self.state[i] += x
        self.state[new] += self.noise()
        for i in range(new - 1, leaf - 1, -1):
            self.state[i] = self.state[i + 1] + self.noise()
        self.count = (self.count + 1) & mask

    def release(self) -> np.ndarray:
        prev = (self.count - 1) & ((1 << (self.m - 1)) - 1)
        return self.state[bin(prev).count("1")]


class FreshPaddingTree:
    """The binary tree with persistent node noise, topped up to m draws by a
    fresh W(scale I, (m - popcount(t)) k) each round: the engine's scheme."""

    def __init__(self, m: int, noise: Any, pad: Any, init: np.ndarray) -> None:
        self.m, self.noise, self.pad, self.t = m, noise, pad, 0
        self.init = init
        self.alpha = [np.zeros_like(init) for _ in range(m + 1)]
        self.noisy = [np.zeros_like(init) for _ in range(m + 1)]
        self.padding = pad(m)

    def add(self, x: np.ndarray) -> None:
        self.t += 1
        i = (self.t & -self.t).bit_length() - 1
        self.alpha[i] = sum(self.alpha[:i], x.copy())
        self.noisy[i] = self.alpha[i] + self.noise()
        for j in range(i):
            self.alpha[j] = np.zeros_like(x)
            self.noisy[j] = np.zeros_like(x)
        self.padding = self.pad(self.m - bin(self.t).count("1"))

    def release(self) -> np.ndarray:
        out = self.init + self.padding
        for j in range(self.m + 1):
            if self.t >> j & 1:
                out = out + self.noisy[j]
        return out


def run(cal: WishartCalibration, scheme: str, gap: float, seed: int, rounds: int) -> tuple[float, int]:
    d, p = cal.d, cal.d + 1
    rng = np.random.default_rng([seed, 7])
    env = dp.ShariffSheffetEnv(d=d, k=d * d, gap=gap, seed=seed)
    radius = confidence_radius(cal, sigma=1.0, S=1.0, form="log_det")
    init = np.zeros((p, p))
    init[:d, :d] -= cal.shift * np.eye(d)

    def noise() -> np.ndarray:
        return wishart(rng, p, cal.scale, float(cal.k))

    def pad(j: int) -> np.ndarray:
        return wishart(rng, p, cal.scale, float(cal.k * j)) if j > 0 else np.zeros((p, p))

    tree: Any = (PersistentTree(cal.m, noise, init) if scheme == "persistent"
                 else FreshPaddingTree(cal.m, noise, pad, init))
    regret, failures = 0.0, 0
    for t in range(1, rounds + 1):
        xs = env.decision_set(t)
        mtx = tree.release()
        v, h = mtx[:d, :d], mtx[:d, d]
        try:
            chol = np.linalg.cholesky(v)
        except np.linalg.LinAlgError:
            failures += 1
            i = int(rng.integers(len(xs)))
        else:
            theta = np.linalg.solve(v, h)
            z = np.linalg.solve(chol, xs.T)
            beta = radius.beta(2.0 * float(np.log(np.diag(chol)).sum()))
            i = int(np.argmax(xs @ theta + beta * np.sqrt((z * z).sum(axis=0))))
        means = env.mean_rewards(t)
        regret += float(means.max() - means[i])
        row = np.append(xs[i], env.reward(t, i))
        tree.add(np.outer(row, row))
    return regret, failures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--gaps", type=float, nargs="+", default=[0.0, 0.1])
    ap.add_argument("--constants", choices=["paper", "code"], default="paper")
    args = ap.parse_args()
    n = 50_000_000
    make = shariff_sheffet_wishart if args.constants == "paper" else authors_code_wishart
    print(f"NumPy JDP-LinUCB, Wishart noise, {args.constants} constants (calibrated n = {n:,}), "
          f"final regret at t = {args.rounds:,}, mean +- se over {args.seeds} seeds")
    print("| noise scheme | variant | " + " | ".join(f"gap {g}" for g in args.gaps) + " |")
    print("|---|---|" + "---|" * len(args.gaps))
    t0 = time.perf_counter()
    for scheme in ("persistent", "fresh"):
        for shift in (True, False):
            cal = make(5, n, 1.0, 0.1, shift=shift)
            cells = []
            for g in args.gaps:
                out = [run(cal, scheme, g, s, args.rounds) for s in range(args.seeds)]
                r = np.array([o[0] for o in out])
                se = r.std(ddof=1) / math.sqrt(r.size) if r.size > 1 else 0.0
                fails = sum(o[1] for o in out)
                cells.append(f"{r.mean():,.0f} +- {se:,.0f}" + (f" ({fails} non-PD)" if fails else ""))
            name = "Wishart" if shift else "WishartUnshifted"
            print(f"| {scheme} | {name} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nwall {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
