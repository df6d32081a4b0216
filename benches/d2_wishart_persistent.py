"""App. D.2's Wishart learners with fresh and with persistent padding, in
the Rust engine.

Runs JointDPLinUCB(noise="wishart") shifted and unshifted with
``padding="fresh"`` (the library's default: the m - popcount(t) missing
draws of a release are drawn anew every round) and ``padding="persistent"``
(one draw per tree level kept while that level's bit of t is 0, as in the
pan-private tree of the authors' code), on the D.2 workload (d = 5, K = 25,
eps = 1, delta = 0.1, paper constants calibrated for n = 5e7), gaps 0 and
0.1, all learners of a seed on one environment realization. ``--rounds``
runs fewer rounds than the calibrated horizon. Prints the regret at
``--at`` rounds (mean +- se over seeds) and, per gap and horizon, Welch's t
of unshifted against shifted for each padding. Findings: REPRODUCTION.md,
"App. D.2 Wishart ordering".

    nice -n 10 python3 benches/d2_wishart_persistent.py --rounds 2000000 --seeds 8
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dpbandits as dp


def welch_t(a: np.ndarray, b: np.ndarray) -> float:
    """Welch's t of mean(a) - mean(b)."""
    return float((a.mean() - b.mean()) / np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=50_000_000, help="calibrated horizon n")
    ap.add_argument("--rounds", type=int, default=2_000_000, help="rounds run (<= horizon)")
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--gaps", type=float, nargs="+", default=[0.0, 0.1])
    ap.add_argument("--at", type=int, nargs="+", default=[100_000, 200_000, 500_000, 1_000_000, 2_000_000])
    ap.add_argument("--record-every", type=int, default=100_000)
    ap.add_argument("--paddings", nargs="+", default=["persistent", "fresh"], choices=["persistent", "fresh"])
    args = ap.parse_args()
    n = args.horizon
    learners = {
        f"{name}, {padding}": dp.JointDPLinUCB(5, n, 1.0, 0.1, noise="wishart", shift=shift, padding=padding)
        for padding in args.paddings
        for name, shift in (("Wishart", True), ("WishartUnshifted", False))
    }
    at = [t for t in args.at if t <= args.rounds]
    t0 = time.perf_counter()
    print(f"regret at t (calibrated n = {n:,}), mean +- se over {args.seeds} seeds")
    print("| t | gap | " + " | ".join(learners) + f" | Welch t (unshifted - shifted): {' / '.join(args.paddings)} |")
    print("|---|---|" + "---|" * (len(learners) + 1))
    for g in args.gaps:
        env = dp.ShariffSheffetEnv(d=5, k=25, gap=g)
        res = dp.simulate_many(learners, env, horizon=args.rounds, seeds=args.seeds,
                               record_every=args.record_every)
        for t in at:
            cells, vals = [], {}
            for name, r in res.items():
                i = int(np.searchsorted(r.record_at, t))
                v = r.regret[:, i]
                vals[name] = v
                cells.append(f"{v.mean():,.0f} +- {v.std(ddof=1) / v.size**0.5:,.0f}")
            tw = [welch_t(vals[f"WishartUnshifted, {p}"], vals[f"Wishart, {p}"]) for p in args.paddings]
            welch = " / ".join(f"{w:+.1f}" for w in tw)
            print(f"| {t:.0e} | {g} | " + " | ".join(cells) + f" | {welch} |", flush=True)
        for name, r in res.items():
            final = np.round(r.final_regret).astype(int).tolist()
            print(f"  gap {g} {name}: seeds {[int(x) for x in r.seeds]}, final {final}")
    print(f"\nwall {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
