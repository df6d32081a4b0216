"""Interleaved A/B of installed builds on the K-armed speed target:
``dp.simulate`` of PrivateUCB (tight calibration, K = 10 Bernoulli arms,
means 0.9 .. 0.45) for ``--horizon`` rounds, wall clock per round.

Each build is a directory holding an installed ``dpbandits`` (e.g. from
``maturin build --release -o W && pip install --no-deps --target DIR
W/*.whl``); every run is a fresh process with that directory first on
``PYTHONPATH``, the builds' order reversed every other round, and the
medians and ranges are printed. With no directory, the installed package
is timed alone.

    python3 benches/karmed_simulate_ab.py --runs 7 build-old build-new
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

MEANS_LO, MEANS_HI, K = 0.45, 0.9, 10


def one_run(horizon: int, sampler: str) -> float:
    """ns a round of one ``simulate`` call in this process."""
    import numpy as np

    import dpbandits as dp

    kwargs = {} if sampler == "lattice" else {"sampler": sampler}
    learner = dp.PrivateUCB(K, horizon, 1.0, calibration="tight", **kwargs)
    env = dp.BernoulliBandit(np.linspace(MEANS_HI, MEANS_LO, K))
    start = time.perf_counter()
    dp.simulate(learner, env, horizon, seeds=1)
    return (time.perf_counter() - start) / horizon * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs="*", help="directories holding an installed dpbandits")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=2_000_000)
    parser.add_argument("--sampler", default="lattice", choices=["lattice", "float"])
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(f"{one_run(args.horizon, args.sampler):.3f}")
        return
    builds = args.builds or [""]
    times: dict[str, list[float]] = {b: [] for b in builds}
    for i in range(args.runs):
        for build in builds if i % 2 == 0 else builds[::-1]:
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
            if build:
                env["PYTHONPATH"] = build
            cmd = [sys.executable, __file__, "--one", "--horizon", str(args.horizon), "--sampler", args.sampler]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
            times[build].append(float(out.strip()))
    for build, values in times.items():
        values.sort()
        print(
            f"{build or 'installed'}: PrivateUCB ({args.sampler}) {statistics.median(values):.2f} ns/round "
            f"(range {values[0]:.2f}-{values[-1]:.2f}, {len(values)} runs)"
        )


if __name__ == "__main__":
    main()
