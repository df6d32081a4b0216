"""App. D.2's Wishart learners with the paper's constants and with the
constants of the authors' own code (PrivateBandits.jl).

Runs JointDPLinUCB(noise="wishart") shifted and unshifted, once calibrated
by Prop. 9 / Eq. (4) as printed (the library's calibration) and once by
:func:`dpbandits.privacy.wishart_authors_code.authors_code_wishart`, on the
D.2 workload (d = 5, K = 25, eps = 1, delta = 0.1, calibrated for
n = 5e7), gaps 0 and 0.1, all learners of a seed on one environment
realization. ``--rounds`` runs fewer rounds than the calibrated horizon (the
curves are flat after about 2e6 rounds). Prints the final regret (mean +- se)
and each variant's constants. Findings: REPRODUCTION.md, "App. D.2 Wishart
ordering".

    nice -n 10 python3 benches/d2_wishart_constants.py --rounds 2000000 --seeds 4
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import dpbandits as dp
from dpbandits.learners import linucb
from dpbandits.privacy.wishart_authors_code import authors_code_wishart


class AuthorsWishartLinUCB(dp.JointDPLinUCB):
    """JointDPLinUCB whose Wishart calibration is the authors' code's."""

    def _calibrate(self, noise: str, shift: Any, *args: Any) -> None:
        paper = linucb.shariff_sheffet_wishart

        def code(d: int, horizon: int, epsilon: float, delta: float, alpha: Any = None, L: float = 1.0,
                 B_tilde: float = 1.0, shift: bool = True) -> Any:
            return authors_code_wishart(d, horizon, epsilon, delta, L=L, B_tilde=B_tilde, shift=shift)

        linucb.shariff_sheffet_wishart = code  # type: ignore[assignment]
        try:
            super()._calibrate(noise, shift, *args)
        finally:
            linucb.shariff_sheffet_wishart = paper


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=50_000_000, help="calibrated horizon n")
    ap.add_argument("--rounds", type=int, default=2_000_000, help="rounds run (<= horizon)")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--gaps", type=float, nargs="+", default=[0.0, 0.1])
    args = ap.parse_args()
    n = args.horizon
    learners = {
        "Wishart (paper)": dp.JointDPLinUCB(5, n, 1.0, 0.1, noise="wishart", shift=True),
        "WishartUnshifted (paper)": dp.JointDPLinUCB(5, n, 1.0, 0.1, noise="wishart", shift=False),
        "Wishart (authors' code)": AuthorsWishartLinUCB(5, n, 1.0, 0.1, noise="wishart", shift=True),
        "WishartUnshifted (authors' code)": AuthorsWishartLinUCB(5, n, 1.0, 0.1, noise="wishart", shift=False),
    }
    print("| variant | k | shift c | rho_min | rho_max | gamma | alpha | S sqrt(rho_max) + gamma |")
    print("|---|---|---|---|---|---|---|---|")
    for name, lrn in learners.items():
        c = lrn.calibration
        print(f"| {name} | {c.k} | {c.shift:.4g} | {c.rho_min:.4g} | {c.rho_max:.4g} | {c.gamma:.4g} | "
              f"{c.alpha:.3g} | {c.rho_max ** 0.5 + c.gamma:.4g} |")
    print()
    print(f"final regret at t = {args.rounds:,} (calibrated n = {n:,}), mean +- se over {args.seeds} seeds")
    print("| variant | " + " | ".join(f"gap {g}" for g in args.gaps) + " |")
    print("|---|" + "---|" * len(args.gaps))
    rows: dict[str, list[str]] = {name: [] for name in learners}
    t0 = time.perf_counter()
    for g in args.gaps:
        env = dp.ShariffSheffetEnv(d=5, k=25, gap=g)
        res = dp.simulate_many(learners, env, horizon=args.rounds, seeds=args.seeds)
        for name, r in res.items():
            f = r.final_regret
            se = f.std(ddof=1) / f.size**0.5 if f.size > 1 else 0.0
            rows[name].append(f"{f.mean():,.0f} +- {se:,.0f}")
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\nwall {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
