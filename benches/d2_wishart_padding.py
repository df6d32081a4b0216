"""App. D.2's Wishart learners with persistent or fresh padding noise: a
NumPy reference that isolates why our shifted Wishart learner is the worst.

Prop. 9 needs every release to carry exactly m Wishart draws. Our engine
(``rust/src/counter/tree/mod.rs``, ``TreeCounter::with_padding``) tops the popcount(t)
noisy tree nodes up to m with a *fresh* data-independent draw every round,
so up to m - 1 of the m draws change from one round to the next. The
authors' code (PrivateBandits.jl, ``PanPrivTreeStrategy`` in
``src/DifferentialPrivacy.jl``) keeps m *persistent* noise terms: the
pan-private tree's state, of which only the trailing ones are redrawn when
the counter advances (about two a round). Both releases have the law
W(Ltilde^2 I, m k) every round, so Prop. 9 holds for both and the privacy
is the same; but with fresh padding the shifted regularizer H_t - c I
(eigenvalues about 1.7e5-3.4e5 for the paper's constants) moves by about
its own size every round, while the unshifted one (about 7.4e6) moves by
about 1%.

JDP-LinUCB with Wishart noise in NumPy, every variant and seed advanced in
lock step as one batch: noise scheme (``persistent``: the authors' tree;
``fresh``: the engine's padding) x shift (Eq. (4) / none) x constants
(``paper``: the library's Prop. 9 calibration; ``code``: the authors'
code's, :mod:`dpbandits.privacy.wishart_authors_code`) on
``ShariffSheffetEnv`` (d = 5, K = 25; variants of a seed share the
environment's draws), calibrated for n = 5e7, for ``--rounds`` rounds.
Prints the mean regret (+- se over seeds) at a few checkpoints. The
"fresh, paper" rows reproduce the engine (benches/d2_wishart_constants.py).
Findings: REPRODUCTION.md, "App. D.2 Wishart ordering".

    nice -n 10 python3 benches/d2_wishart_padding.py --rounds 1000000 --seeds 2
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np

import dpbandits as dp
from dpbandits.privacy.calibration import WishartCalibration, shariff_sheffet_wishart
from dpbandits.privacy.confidence import confidence_radius
from dpbandits.privacy.wishart_authors_code import authors_code_wishart

N_CALIBRATED = 50_000_000


def wishart(rng: np.random.Generator, p: int, scale: np.ndarray, df: np.ndarray) -> np.ndarray:
    """One W_p(scale_b I, df_b) per batch entry by Bartlett's decomposition (0 where df_b = 0)."""
    b = scale.size
    a = np.tril(rng.standard_normal((b, p, p)), -1)
    live = df > 0
    dof = np.where(live, df, p)[:, None] - np.arange(p)[None, :]
    a[:, np.arange(p), np.arange(p)] = np.sqrt(rng.chisquare(dof))
    w = np.einsum("bij,bkj->bik", a, a) * scale[:, None, None]
    w[~live] = 0.0
    return w


class PersistentTree:
    """PrivateBandits.jl's PanPrivTreeStrategy, batched: m state matrices per
    entry; every release is one of them and holds exactly m persistent draws."""

    def __init__(self, m: int, noise: object, init: np.ndarray) -> None:
        self.m, self.noise, self.count = m, noise, 0
        self.state = np.repeat(init[:, None], m, axis=1)
        self.add(None)  # initialize(): the first accum! adds noise, no data

    def add(self, x: np.ndarray | None) -> None:
        mask = (1 << (self.m - 1)) - 1
        leaf = bin(self.count).count("1")
        v = self.count | (~mask & ((1 << 64) - 1))
        new = leaf + ((v & -v).bit_length() - 1)
        if x is not None:
            self.state[:, new:] += x[:, None]
        self.state[:, new] += self.noise()  # type: ignore[operator]
        for i in range(new - 1, leaf - 1, -1):
            self.state[:, i] = self.state[:, i + 1] + self.noise()  # type: ignore[operator]
        self.count = (self.count + 1) & mask

    def release(self) -> np.ndarray:
        prev = (self.count - 1) & ((1 << (self.m - 1)) - 1)
        return self.state[:, bin(prev).count("1")]


class FreshPaddingTree:
    """The binary tree with persistent node noise, topped up to m draws by a
    fresh W(scale I, (m - popcount(t)) k) every round: the engine's scheme."""

    def __init__(self, m: int, noise: object, pad: object, init: np.ndarray) -> None:
        self.m, self.noise, self.pad, self.t, self.init = m, noise, pad, 0, init
        self.alpha = np.zeros((init.shape[0], m + 1, *init.shape[1:]))
        self.noisy = np.zeros_like(self.alpha)
        self.padding = pad(m)  # type: ignore[operator]

    def add(self, x: np.ndarray) -> None:
        self.t += 1
        i = (self.t & -self.t).bit_length() - 1
        self.alpha[:, i] = self.alpha[:, :i].sum(axis=1) + x
        self.noisy[:, i] = self.alpha[:, i] + self.noise()  # type: ignore[operator]
        self.alpha[:, :i] = 0.0
        self.noisy[:, :i] = 0.0
        self.padding = self.pad(self.m - bin(self.t).count("1"))  # type: ignore[operator]

    def release(self) -> np.ndarray:
        bits = [j for j in range(self.m + 1) if self.t >> j & 1]
        return self.init + self.padding + self.noisy[:, bits].sum(axis=1)


def make_tree(scheme: str, cals: list[WishartCalibration], rng: np.random.Generator) -> object:
    d, p, m = cals[0].d, cals[0].d + 1, cals[0].m
    scale = np.array([c.scale for c in cals])
    k = np.array([float(c.k) for c in cals])
    init = np.zeros((len(cals), p, p))
    for b, c in enumerate(cals):
        init[b, :d, :d] -= c.shift * np.eye(d)

    def noise() -> np.ndarray:
        return wishart(rng, p, scale, k)

    def pad(j: int) -> np.ndarray:
        return wishart(rng, p, scale, k * j)

    return PersistentTree(m, noise, init) if scheme == "persistent" else FreshPaddingTree(m, noise, pad, init)


def jitter(rounds: int = 3000) -> None:
    """Median round-to-round change ||H_(t+1) - H_t||_2 / lambda_min(H_t) of the
    released regularizer alone (no data), paper constants, each scheme."""
    rng = np.random.default_rng(5)
    zero = np.zeros((1, 6, 6))
    for shift in (True, False):
        cal = shariff_sheffet_wishart(5, N_CALIBRATED, 1.0, 0.1, shift=shift)
        for scheme in ("persistent", "fresh"):
            tree = make_tree(scheme, [cal], rng)
            prev, rel, lmin = None, [], []
            for _ in range(rounds):
                v = tree.release()[0, :5, :5].copy()  # type: ignore[attr-defined]
                low = float(np.linalg.eigvalsh(v)[0])
                lmin.append(low)
                if prev is not None:
                    rel.append(float(np.linalg.norm(v - prev, 2)) / low)
                prev = v
                tree.add(zero)  # type: ignore[attr-defined]
            print(f"{'shifted' if shift else 'unshifted'} {scheme}: median relative change {np.median(rel):.3g}, "
                  f"lambda_min in [{min(lmin):.3g}, {max(lmin):.3g}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--gaps", type=float, nargs="+", default=[0.0, 0.1])
    ap.add_argument("--schemes", nargs="+", choices=["persistent", "fresh"], default=["persistent", "fresh"])
    ap.add_argument("--code-constants", action="store_true",
                    help="also run the persistent tree with the authors' code's constants")
    ap.add_argument("--jitter", action="store_true", help="only measure the regularizer's round-to-round change")
    args = ap.parse_args()
    if args.jitter:
        jitter()
        return
    makers = {"paper": shariff_sheffet_wishart, "code": authors_code_wishart}
    variants = [(scheme, "paper") for scheme in args.schemes] + (
        [("persistent", "code")] if args.code_constants else [])
    runs = [(scheme, consts, shift, g, s) for (scheme, consts), shift, g, s
            in itertools.product(variants, (True, False), args.gaps, range(args.seeds))]
    cals = {(c, sh): makers[c](5, N_CALIBRATED, 1.0, 0.1, shift=sh) for c in makers for sh in (True, False)}
    rng = np.random.default_rng(20181002)
    groups = {scheme: [i for i, r in enumerate(runs) if r[0] == scheme] for scheme in ("persistent", "fresh")
              if any(r[0] == scheme for r in runs)}
    trees = {scheme: make_tree(scheme, [cals[(runs[i][1], runs[i][2])] for i in idx], rng)
             for scheme, idx in groups.items()}
    radii = [confidence_radius(cals[(r[1], r[2])], sigma=1.0, S=1.0, form="log_det") for r in runs]
    log_offset = np.array([r.log_offset for r in radii])
    offset = np.array([r.offset for r in radii])
    envs = [dp.ShariffSheffetEnv(d=5, k=25, gap=r[3], seed=r[4]) for r in runs]
    d = 5
    regret = np.zeros(len(runs))
    failures = np.zeros(len(runs), dtype=int)
    checkpoints = sorted({c for c in (5 * 10**4, 10**5, 2 * 10**5, 5 * 10**5, 10**6, 2 * 10**6) if c < args.rounds}
                         | {args.rounds})
    history = {}
    t0 = time.perf_counter()
    for t in range(1, args.rounds + 1):
        xs = np.stack([e.decision_set(t) for e in envs])  # (B, K, d)
        mtx = np.empty((len(runs), d + 1, d + 1))
        for scheme, idx in groups.items():
            mtx[idx] = trees[scheme].release()  # type: ignore[attr-defined]
        v, h = mtx[:, :d, :d], mtx[:, :d, d]
        try:
            chol = np.linalg.cholesky(v)
            ok = np.ones(len(runs), dtype=bool)
        except np.linalg.LinAlgError:
            ok = np.array([np.all(np.linalg.eigvalsh(vb) > 0) for vb in v])
            chol = np.stack([np.linalg.cholesky(vb) if good else np.eye(d) for vb, good in zip(v, ok, strict=True)])
        theta = np.linalg.solve(chol.transpose(0, 2, 1), np.linalg.solve(chol, h[..., None]))[..., 0]
        z = np.linalg.solve(chol, xs.transpose(0, 2, 1))
        logdet = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        beta = np.sqrt(np.maximum(0.0, log_offset + logdet)) + offset
        ucb = np.einsum("bkd,bd->bk", xs, theta) + beta[:, None] * np.sqrt((z * z).sum(axis=1))
        choice = ucb.argmax(axis=1)
        bad = np.flatnonzero(~ok)
        failures[bad] += 1
        choice[bad] = rng.integers(0, xs.shape[1], bad.size)
        rows = np.empty((len(runs), d + 1))
        for b, e in enumerate(envs):
            means = e.mean_rewards(t)
            regret[b] += means.max() - means[choice[b]]
            rows[b, :d] = xs[b, choice[b]]
            rows[b, d] = e.reward(t, int(choice[b]))
        outer = rows[:, :, None] * rows[:, None, :]
        for scheme, idx in groups.items():
            trees[scheme].add(outer[idx])  # type: ignore[attr-defined]
        if t in checkpoints:
            history[t] = regret.copy()
            report(t, time.perf_counter() - t0, history, failures, runs, variants, args)


def report(t: int, wall: float, history: dict[int, np.ndarray], failures: np.ndarray, runs: list[tuple], variants: list,
           args: argparse.Namespace) -> None:
    """The table of regrets at every checkpoint reached so far."""
    marks = sorted(history)
    print(f"\nafter t = {t:,} ({wall:.0f} s wall). NumPy JDP-LinUCB, Wishart noise (calibrated n = "
          f"{N_CALIBRATED:,}), regret mean +- se over {args.seeds} seeds at t = " + ", ".join(f"{c:,}" for c in marks))
    print("| noise scheme | constants | variant | " + " | ".join(f"gap {g}" for g in args.gaps) + " |")
    print("|---|---|---|" + "---|" * len(args.gaps))
    for (scheme, consts), shift in itertools.product(variants, (True, False)):
        cells = []
        for g in args.gaps:
            idx = [i for i, r in enumerate(runs) if r[:4] == (scheme, consts, shift, g)]
            parts = []
            for c in marks:
                x = history[c][idx]
                se = x.std(ddof=1) / math.sqrt(x.size) if x.size > 1 else 0.0
                parts.append(f"{x.mean():,.0f} +- {se:,.0f}")
            fails = int(failures[idx].sum())
            cells.append(" / ".join(parts) + (f" ({fails} non-PD rounds)" if fails else ""))
        name = "Wishart" if shift else "WishartUnshifted"
        print(f"| {scheme} | {consts} | {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
