"""The ``dpbandits`` command.

``dpbandits run``: the main job. Non-private LinUCB and the jointly private
Gaussian and Wishart learners of Shariff & Sheffet 2018 on the App. D.2
environment (d = 5, K = 25, gap 0.1, eps = 1, delta = 0.1), with the
Gaussian learner also under ``calibration="tight"`` (same guarantee, least
noise); a table of regret and throughput, and a PNG regret plot. All
learners of a seed share one environment realization (common random
numbers). Defaults finish in about a minute on two cores;
``--horizon 50000000`` is the paper's scale.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from dpbandits.envs import ShariffSheffetEnv
from dpbandits.learners import JointDPLinUCB, LinUCB
from dpbandits.sim import SimulationResult, simulate_many


def _learners(args: argparse.Namespace) -> list[tuple[str, object]]:
    n, d = args.horizon, args.d
    eps, delta = args.epsilon, args.delta
    return [
        ("NonPrivate", LinUCB(d, n, regularizer=1.0)),
        ("Gaussian", JointDPLinUCB(d, n, eps, delta, noise="gaussian")),
        ("GaussianTight", JointDPLinUCB(d, n, eps, delta, noise="gaussian", calibration="tight")),
        ("Wishart", JointDPLinUCB(d, n, eps, delta, noise="wishart", shift=True)),
        ("WishartUnshifted", JointDPLinUCB(d, n, eps, delta, noise="wishart", shift=False)),
    ]


def _table(rows: list[tuple[str, SimulationResult]]) -> str:
    head = f"{'learner':<18} {'final regret (mean +- sd)':>28}  guarantee"
    lines = [head, "-" * len(head)]
    for name, r in rows:
        f = r.final_regret
        sd = f.std(ddof=1) if f.size > 1 else 0.0
        lines.append(f"{name:<18} {f.mean():>16.1f} +- {sd:<8.1f}  {r.privacy}")
    r = rows[0][1]
    lines.append(
        f"\nthroughput: {np.median(r.rounds_per_second):,.0f} rounds/s per replicate with all {len(rows)} "
        f"learners stepping each round ({np.median(r.rounds_per_second) * len(rows):,.0f} learner-rounds/s)"
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    env = ShariffSheffetEnv(args.d, k=args.k, gap=args.gap)
    chosen = {s.strip().lower() for s in args.learners.split(",")}
    start = time.perf_counter()
    print(
        f"Shariff & Sheffet App. D.2: d={args.d}, K={env.k}, gap={args.gap}, n={args.horizon:,}, "
        f"seeds={args.seeds}, eps={args.epsilon}, delta={args.delta}",
        file=sys.stderr,
    )
    learners = {name: lrn for name, lrn in _learners(args) if name.lower() in chosen}
    if not learners:
        raise SystemExit(f"no learner selected by --learners {args.learners!r}")
    print(f"running {', '.join(learners)} on shared environments ...", file=sys.stderr, flush=True)
    rows = list(simulate_many(learners, env, seeds=args.seeds, progress=True).items())
    print()
    print(_table(rows))
    print(f"\nwall time {time.perf_counter() - start:.1f} s")
    if not args.no_plot:
        from dpbandits.plot import regret_plot

        out = Path(args.out) / "d2_regret.png"
        regret_plot(
            rows, out,
            title=f"JDP LinUCB, d={args.d}, K={env.k}, gap={args.gap}, eps={args.epsilon}, delta={args.delta}",
        )
        print(f"figure: {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="dpbandits", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="the main job: JDP LinUCB on Shariff & Sheffet App. D.2")
    p.add_argument("--horizon", type=int, default=2_000_000, help="rounds per seed (paper: 50000000)")
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--d", type=int, default=5)
    p.add_argument("--k", type=int, default=None, help="actions per round (default d^2)")
    p.add_argument("--gap", type=float, default=0.1)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=0.1)
    p.add_argument("--learners", default="nonprivate,gaussian,gaussiantight,wishart,wishartunshifted")
    p.add_argument("--out", default="results", help="folder for the figure")
    p.add_argument("--no-plot", action="store_true")
    p.set_defaults(func=run)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
