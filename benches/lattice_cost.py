"""Cost of exact lattice noise: every private learner in ``simulate``, with
``sampler="lattice"`` (the default) and ``sampler="float"`` (the opt-in),
interleaved, median of several runs; prints ns per round and the ratio.

Target: lattice within 1.5x of floating point for every learner.

    python3 benches/lattice_cost.py --repeats 5

Two builds, alternated in fresh processes (lattice sampler only; OLD is a
directory holding another build's installed package, e.g. made with
``pip install --target OLD --no-deps dpbandits-*.whl``):

    python3 benches/lattice_cost.py --repeats 5 --against OLD
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dpbandits as dp


def workloads() -> dict[str, tuple[Callable[[str], Any], Any, int]]:
    """name -> (learner factory taking the sampler, environment, horizon)."""
    k_env = dp.BernoulliBandit(np.linspace(0.9, 0.45, 10))
    lin_env = dp.ShariffSheffetEnv(5, gap=0.1)
    elim_env = dp.LinearBanditEnv(100, d=5, seed=3)
    loss_env = dp.StochasticLosses(np.linspace(0.2, 0.8, 10))
    return {
        "PrivateUCB (K = 10, tight)": (lambda s: dp.PrivateUCB(10, 10**6, 1.0, calibration="tight", sampler=s),
                                       k_env, 10**6),
        "PrivateThompsonSampling (K = 10)": (
            lambda s: dp.PrivateThompsonSampling(10, 10**6, 1.0, gap_estimation=False, sampler=s), k_env, 10**6),
        "JointDPLinUCB Gaussian (D.2)": (lambda s: dp.JointDPLinUCB(5, 10**5, 1.0, 0.1, sampler=s), lin_env, 10**5),
        "PrivateContextualUCB (d = 5)": (lambda s: dp.PrivateContextualUCB(5, 10**5, 1.0, sampler=s), lin_env,
                                         10**5),
        "EliminationLinearBandit central": (
            lambda s: dp.EliminationLinearBandit(elim_env.actions, 10**6, "central", 1.0, sampler=s), elim_env, 10**6),
        "EliminationLinearBandit local": (
            lambda s: dp.EliminationLinearBandit(elim_env.actions, 10**6, "local", 1.0, sampler=s), elim_env, 10**6),
        "PrivateFTRL (N = 10)": (lambda s: dp.PrivateFTRL(10, 10**5, 1.0, sampler=s), loss_env, 10**5),
        "PrivateFTPL (N = 10)": (lambda s: dp.PrivateFTPL(10, 10**5, 1.0, 0.1, sampler=s), loss_env, 10**5),
        "EXP2 (N = 10)": (lambda s: dp.EXP2(10, 10**6, 1.0, sampler=s), loss_env, 10**6),
        "DPKLUCB (K = 10)": (lambda s: dp.DPKLUCB(10, 10**7, 1.0, sampler=s), k_env, 10**7),
        "JointDPLinUCB tight BLT (D.2)": (
            lambda s: dp.JointDPLinUCB(5, 10**5, 1.0, 1e-3, calibration="tight", counter="blt", sampler=s), lin_env,
            10**5),
    }


def _lattice_ns(name: str, path: str | None) -> float:
    """One fresh process timing workload ``name`` with the lattice sampler,
    importing dpbandits from ``path`` (None: this build)."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    code = (f"import sys; sys.argv = ['lattice_cost', '--repeats', '1', '--only', {name!r}, '--lattice-only']; "
            f"exec(open({__file__!r}).read())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1].split()[-1])


def compare_builds(against: str, repeats: int, only: str | None) -> None:
    print(f"{'learner':36s} {'this build ns':>14s} {'other build ns':>15s} {'ratio':>6s}")
    for name in workloads():
        if only and only not in name:
            continue
        this: list[float] = []
        other: list[float] = []
        for _ in range(repeats):  # alternated
            this.append(_lattice_ns(name, None))
            other.append(_lattice_ns(name, against))
        a, b = statistics.median(this), statistics.median(other)
        print(f"{name:36s} {a:14.1f} {b:15.1f} {a / b:6.3f}x", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default=None, help="substring of the workload names to run")
    parser.add_argument("--secure", action="store_true",
                        help="time secure=True (lattice noise from operating-system entropy) against float")
    parser.add_argument("--against", default=None, help="directory of another build's installed package")
    parser.add_argument("--lattice-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        compare_builds(args.against, args.repeats, args.only)
        return
    if args.lattice_only:
        ((name, (make, env, horizon)),) = [(n, w) for n, w in workloads().items() if n == args.only]
        start = time.perf_counter()
        dp.simulate(make("lattice"), env, horizon=horizon, seeds=[1])
        print(f"{name} {(time.perf_counter() - start) / horizon * 1e9:.3f}")
        return
    if args.secure:
        import warnings

        from dpbandits.errors import IrreproducibleRunWarning

        warnings.simplefilter("ignore", IrreproducibleRunWarning)
    print(f"{'learner':36s} {'lattice ns/round':>17s} {'float ns/round':>15s} {'ratio':>6s}")
    for name, (make, env, horizon) in workloads().items():
        if args.only and args.only not in name:
            continue
        times: dict[str, list[float]] = {"lattice": [], "float": []}
        for r in range(args.repeats):
            for sampler in ("lattice", "float"):  # interleaved
                learner = make(sampler)
                if args.secure and sampler == "lattice":
                    learner = type(learner)(**{**learner.config, "secure": True})
                start = time.perf_counter()
                dp.simulate(learner, env, horizon=horizon, seeds=[r + 1])
                times[sampler].append((time.perf_counter() - start) / horizon * 1e9)
        lat, flo = statistics.median(times["lattice"]), statistics.median(times["float"])
        print(f"{name:36s} {lat:17.0f} {flo:15.0f} {lat / flo:6.2f}x", flush=True)


if __name__ == "__main__":
    main()
