"""The dpbandits command.

dpbandits run: the main job. Non-private LinUCB and the jointly private
Gaussian and Wishart learners of Shariff & Sheffet 2018 on the App. D.2
environment (d = 5, K = 25, gap 0.1, eps = 1, delta = 0.1), with the
Gaussian learner also under calibration="tight" (same guarantee, least
noise) and under tight calibration with the BLT factorization counter
(the library's best learner here). Prints a table of regret and
guarantees, and writes the regret curves (CSV and JSON) and a PNG figure
(median and quantile band over seeds, log-log axes) to --out. Regret is
recorded at log-spaced rounds from the first rounds on, so the learning
phase is visible. All learners of a seed share one environment
realization (common random numbers). --horizon 50000000 is the paper's
scale.

dpbandits reproduce NAME: a registered paper experiment (--list).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dpbandits import __version__
from dpbandits.envs import ShariffSheffetEnv
from dpbandits.learners import JointDPLinUCB, LinUCB
from dpbandits.sim import THROUGHPUT_UNIT, SimulationResult, results_table, simulate_many

#: name -> (builder(args) -> learner, one-line description), in table order.
LEARNERS: dict[str, tuple[Callable[[argparse.Namespace], Any], str]] = {
    "nonprivate": (lambda a: LinUCB(a.d, a.horizon, regularizer=1.0), "LinUCB, rho = 1 (no privacy)"),
    "gaussian": (
        lambda a: JointDPLinUCB(a.d, a.horizon, a.epsilon, a.delta, noise="gaussian"),
        "shifted Gaussian tree, paper calibration (S&S §4.2, Prop. 11)",
    ),
    "gaussiantight": (
        lambda a: JointDPLinUCB(a.d, a.horizon, a.epsilon, a.delta, noise="gaussian", calibration="tight"),
        "shifted Gaussian tree, tight calibration (same guarantee, least noise)",
    ),
    "gaussianblt": (
        lambda a: JointDPLinUCB(a.d, a.horizon, a.epsilon, a.delta, noise="gaussian", calibration="tight",
                                counter="blt"),
        "Gaussian noise, tight calibration, BLT factorization counter instead of the tree (least regret)",
    ),
    "wishart": (
        lambda a: JointDPLinUCB(a.d, a.horizon, a.epsilon, a.delta, noise="wishart", shift=True),
        "shifted Wishart tree (S&S §4.1, Eq. (4), Prop. 9)",
    ),
    "wishartunshifted": (
        lambda a: JointDPLinUCB(a.d, a.horizon, a.epsilon, a.delta, noise="wishart", shift=False),
        "unshifted Wishart tree (S&S App. D.2)",
    ),
}
#: Display labels of the table and the figure.
LABELS = {
    "nonprivate": "NonPrivate", "gaussian": "Gaussian", "gaussiantight": "GaussianTight",
    "gaussianblt": "GaussianTightBLT", "wishart": "Wishart", "wishartunshifted": "WishartUnshifted",
}

CALIBRATION_NOTE = (
    "calibration: 'paper' = the noise of the published formula (for reproduction); "
    "'tight' = the least noise that meets the same (epsilon, delta) under exact accounting "
    "of the whole tree (docs/privacy-calibration.md)."
)
#: Record points the main job keeps: about this many, log-spaced from round 1.
LOG_POINTS = 200
#: Regret is recorded every horizon / RECORD_DIVISOR rounds (at least every
#: round) and then thinned to the log-spaced points.
RECORD_DIVISOR = 20_000


def log_spaced(record_at: Any, count: int = LOG_POINTS) -> list[int]:
    """About ``count`` record points of ``record_at``, log-spaced from the
    first one, always including the last."""
    import numpy as np

    points = np.asarray(record_at, dtype=np.int64)
    points = points[points > 0]
    targets = np.geomspace(points[0], points[-1], count)
    index = np.unique(np.clip(np.searchsorted(points, targets), 0, points.size - 1))
    return sorted(set(points[index].tolist()) | {int(points[-1])})


# ----------------------------------------------------------- argument types


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except where the default is None (the
    help text then says what not giving the option means) and for flags
    (off unless given)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.nargs == 0:
            return action.help
        return super()._get_help_string(action)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _dimension(text: str) -> int:
    value = _positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be >= 2 (App. D's optimal action lives on a (d-2)-sphere), got {value}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _positive_float(text: str) -> float:
    value = _number(text)
    if not (math.isfinite(value) and value > 0.0):
        raise argparse.ArgumentTypeError(f"must be finite and > 0, got {text}")
    return value


def _open_unit(text: str) -> float:
    value = _positive_float(text)
    if not value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1), got {text}")
    return value


def _gap(text: str) -> float:
    value = _number(text)
    if not (math.isfinite(value) and 0.0 <= value < 1.5):
        raise argparse.ArgumentTypeError(f"must lie in [0, 1.5) (twice the optimal reward 0.75), got {text}")
    return value


def _learner_list(text: str) -> list[str]:
    names = [s.strip().lower() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in LEARNERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown learner(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"valid names: {', '.join(LEARNERS)}"
        )
    return list(dict.fromkeys(names))


# ----------------------------------------------------------------- outputs


def _write_curves(results: dict[str, SimulationResult], out: Path, meta: dict[str, Any]) -> list[Path]:
    """Every curve as CSV (one row per learner, seed and record point) and
    JSON (everything, with the guarantees), written next to the figure."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out / "d2_regret.csv", out / "d2_regret.json"
    with csv_path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["learner", "seed", "round", "regret"])
        for name, r in results.items():
            for seed, row in zip(r.seeds.tolist(), r.regret.tolist(), strict=True):
                for t, v in zip(r.record_at.tolist(), row, strict=True):
                    w.writerow([name, seed, t, repr(v)])
    json_path.write_text(json.dumps({"meta": meta, "results": {k: r.to_dict() for k, r in results.items()}}, indent=1))
    return [csv_path, json_path]


def _guarantee_footnotes(results: dict[str, SimulationResult]) -> list[str]:
    return [f"  {name}: {r.guarantee}" for name, r in results.items()]


def run(args: argparse.Namespace) -> int:
    """``dpbandits run``: the App. D.2 job (table, CSV/JSON and figure); returns the exit status."""
    plot = not args.no_plot
    if plot and importlib.util.find_spec("matplotlib") is None:
        # Said before computing, not after: the numbers are still saved.
        print(
            "note: matplotlib is not installed, so no figure will be drawn; the curves are still "
            f"written as CSV/JSON to {args.out}/. For the figure: python3 -m pip install 'dpbandits[plot]'",
            file=sys.stderr,
        )
        plot = False
    env = ShariffSheffetEnv(args.d, k=args.k, gap=args.gap)
    learners = {LABELS[name]: LEARNERS[name][0](args) for name in (args.learners or list(LEARNERS))}
    start = time.perf_counter()
    print(
        f"Shariff & Sheffet App. D.2: d={args.d}, K={env.k}, gap={args.gap}, horizon={args.horizon:,}, "
        f"seeds={args.seeds}, epsilon={args.epsilon}, delta={args.delta}",
        file=sys.stderr,
    )
    every = max(1, args.horizon // RECORD_DIVISOR)
    results = simulate_many(learners, env, seeds=args.seeds, record_every=every, progress=not args.quiet)
    wall = time.perf_counter() - start
    keep = log_spaced(next(iter(results.values())).record_at)
    results = {name: r.at(keep) for name, r in results.items()}
    print()
    print(results_table(results))
    first = next(iter(results.values()))
    rate = float(first.rounds_per_second.mean())
    print(
        f"\nthroughput: {rate:,.0f} {THROUGHPUT_UNIT} per replicate with all {len(results)} learners stepping "
        f"each round ({rate * len(results):,.0f} learner-{THROUGHPUT_UNIT}); wall time {wall:.1f} s"
    )
    print(CALIBRATION_NOTE)
    if args.verbose:
        print("guarantees (model, parameters, what is protected, derivation):")
        print("\n".join(_guarantee_footnotes(results)))
    meta = {
        "experiment": "shariff-sheffet-d2", "d": args.d, "k": env.k, "gap": args.gap, "horizon": args.horizon,
        "seeds": args.seeds, "epsilon": args.epsilon, "delta": args.delta, "wall_seconds": wall,
        "version": __version__,
    }
    written = _write_curves(results, Path(args.out), meta)
    if plot:
        from dpbandits.plot import regret_plot

        written.append(regret_plot(
            list(results.items()), Path(args.out) / "d2_regret.png",
            title=(f"JDP LinUCB on S&S App. D.2: d={args.d}, K={env.k}, gap={args.gap}\n"
                   f"horizon={args.horizon:,}, {args.seeds} seeds, epsilon={args.epsilon}, delta={args.delta}"),
        ))
    for path in written:
        print(f"wrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``dpbandits`` argument parser (sub-commands ``run`` and ``reproduce``)."""
    parser = argparse.ArgumentParser(
        prog="dpbandits", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"dpbandits {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    learner_help = "; ".join(f"{k}: {v[1]}" for k, v in LEARNERS.items())
    p = sub.add_parser(
        "run",
        help="the main job: JDP LinUCB on Shariff & Sheffet App. D.2",
        description="Runs private and non-private LinUCB on Shariff & Sheffet's App. D.2 environment, prints "
        "a regret table and writes the curves and a figure.",
        formatter_class=_DefaultsFormatter,
    )
    p.add_argument("--horizon", type=_positive_int, default=2_000_000, help="rounds per seed (paper: 50000000)")
    p.add_argument("--seeds", type=_positive_int, default=8, help="number of replicates (seeds 0..N-1)")
    p.add_argument("--d", type=_dimension, default=5, help="feature dimension d (>= 2)")
    p.add_argument("--k", type=_positive_int, default=None, help="actions per round (default: d^2)")
    p.add_argument("--gap", type=_gap, default=0.1, help="suboptimality gap (App. D.2: 0 or 0.1)")
    p.add_argument("--epsilon", type=_positive_float, default=1.0, help="privacy epsilon (> 0)")
    p.add_argument("--delta", type=_open_unit, default=0.1, help="privacy delta, in (0, 1)")
    p.add_argument(
        "--learners", type=_learner_list, default=None,
        help=f"comma-separated learner names (default: all of them). {learner_help}",
    )
    p.add_argument("--out", default="results", help="folder for the figure and the CSV/JSON curves")
    p.add_argument("--no-plot", action="store_true", help="skip the figure (the CSV/JSON are still written)")
    p.add_argument("--verbose", "-v", action="store_true", help="print each guarantee with its derivation")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    _add_reproduce(sub)
    return parser


# ---------------------------------------------------------------- reproduce


def _add_reproduce(sub: Any) -> None:
    from dpbandits.sweeps import BACKENDS

    p = sub.add_parser(
        "reproduce",
        help="run a registered paper experiment end to end (figure, CSV/JSON, summary)",
        description="Runs a registered experiment (see --list), writing <out>/<name>/<name>.png, .csv, .json and "
        ".md; finished cells are kept in <out>/<name>/cells, so a rerun resumes an interrupted run.",
        formatter_class=_DefaultsFormatter,
    )
    p.add_argument("name", nargs="?", help="experiment name (see --list)")
    p.add_argument("--list", action="store_true", help="list the registered experiments and exit")
    p.add_argument("--quick", action="store_true", help="a small version that runs in seconds")
    p.add_argument("--out", default="results", help="output folder")
    p.add_argument("--backend", choices=BACKENDS, default="processes", help="where cells run")
    p.add_argument("--seeds", type=_positive_int, default=None, help="seeds per configuration (default: the "
                   "experiment's own)")
    p.add_argument("--n-jobs", type=_positive_int, default=None, help="parallel workers (default: CPU count)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=reproduce_command, parser=p)


def reproduce_command(args: argparse.Namespace) -> int:
    """``dpbandits reproduce``: list or run registered experiments; returns the exit status."""
    from dpbandits.experiments import experiments, reproduce

    found = experiments()
    if args.list:
        width = max(map(len, found))
        for name, exp in found.items():
            print(f"{name:<{width}}  {exp.title} [{exp.paper}]")
        return 0
    if args.name is None:
        args.parser.error(f"give an experiment name or --list; registered: {', '.join(found)}")
    if args.name not in found:
        args.parser.error(f"unknown experiment {args.name!r}; registered: {', '.join(found)}")
    start = time.perf_counter()
    written = reproduce(args.name, quick=args.quick, out=args.out, backend=args.backend, seeds=args.seeds,
                        n_jobs=args.n_jobs, progress=not args.quiet)
    for path in written:
        print(f"wrote {path}")
    print(f"{args.name}: wall time {time.perf_counter() - start:.1f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpbandits`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
