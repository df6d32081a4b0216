"""Per-round CPU time of non-private LinUCB in ``simulate``, baseline kernel
build vs the AVX2 + FMA build (rust/src/cpu_dispatch.rs).

Each measurement runs in a fresh process with ``DPBANDITS_CPU_DISPATCH``
set, the two builds alternating; the table shows the median over
``--repeats`` of the CPU time (``time.process_time``, which a shared
machine inflates less than wall time) per round of ``simulate`` on the
Shariff & Sheffet generator (a fresh decision set of K unit actions per
round, so each round also pays for K d normals).

Run from the repository root:

    python3 benches/kernel_builds.py
    python3 benches/kernel_builds.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

# (d, K, rounds): D.2's size, the issue-7 sweep's largest K, and D.1's largest d.
CASES = [(5, 25, 300_000), (20, 400, 20_000), (64, 4096, 200)]

PROBE = """
import sys, time, dpbandits as dp
d, k, n = (int(v) for v in sys.argv[1:4])
env = dp.ShariffSheffetEnv(d=d, k=k, gap=0.1, reward="gaussian")
learner = dp.LinUCB(d=d, horizon=n, regularizer=1.0)
start = time.process_time()
dp.simulate(learner, env, horizon=n, seeds=[0])
print(dp._core.kernel_build(), 1e6 * (time.process_time() - start) / n)
"""


def measure(build: str, d: int, k: int, n: int) -> tuple[str, float]:
    env = {**os.environ, "DPBANDITS_CPU_DISPATCH": build}
    out = subprocess.run([sys.executable, "-c", PROBE, str(d), str(k), str(n)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return out[0], float(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"CPU time per round (us), median of {args.repeats} alternating runs")
    print(f"{'d':>4}{'K':>6}{'baseline':>12}{'dispatched':>12}{'build':>10}{'speedup':>9}")
    for d, k, n in CASES:
        times: dict[str, list[float]] = {"baseline": [], "auto": []}
        name = "baseline"
        for _ in range(args.repeats):
            for build in times:
                got, us = measure(build, d, k, n)
                times[build].append(us)
                if build == "auto":
                    name = got
        base, auto = statistics.median(times["baseline"]), statistics.median(times["auto"])
        print(f"{d:>4}{k:>6}{base:>12.2f}{auto:>12.2f}{name:>10}{base / auto:>8.2f}x")


if __name__ == "__main__":
    main()
