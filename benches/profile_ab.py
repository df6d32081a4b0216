"""Interleaved A/B of builds of the Rust profiling examples
(``examples/karmed_profile.rs``, ``examples/d2_profile.rs``): each build's
binary is run in turn, the order reversed every other round, and both the
rate the example prints and the rate per CPU second of the process (its
``wait4`` resource usage, which a busy neighbour on a shared machine
disturbs less than wall time) are reported as medians with quartiles.

Build each revision's example with its own target directory, e.g.

    git worktree add ../base <revision>
    (cd ../base && cargo build --profile profiling --example karmed_profile)
    cargo build --profile profiling --example karmed_profile
    python3 benches/profile_ab.py --runs 15 --args private_lattice 2000000 -- \
        ../base/target/profiling/examples/karmed_profile target/profiling/examples/karmed_profile

The examples print a regret; a build whose regret differs from the first
build's is flagged (the same seeds should give the same draws).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess

RATE = re.compile(r"([\d.]+) ns/round|= (\d+) rounds/s")
REGRET = re.compile(r"regret ([-\d.]+)")


def run(binary: str, args: list[str], rounds: int) -> tuple[float, float, str]:
    """(ns a round as printed, ns a round of CPU time, printed regret)."""
    proc = subprocess.Popen([binary, *args], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{binary} exited with status {status}: {out}")
    rate, regret = RATE.search(out), REGRET.search(out)
    if rate is None or regret is None:
        raise SystemExit(f"{binary}: no rate or regret in {out!r}")
    printed = float(rate.group(1)) if rate.group(1) else 1e9 / float(rate.group(2))
    cpu = (usage.ru_utime + usage.ru_stime) / rounds * 1e9
    return printed, cpu, regret.group(1)


def quartiles(values: list[float]) -> str:
    v = sorted(values)
    return f"{statistics.median(v):8.2f} (q1 {v[len(v) // 4]:.2f}, q3 {v[(3 * len(v)) // 4]:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="runs of each binary (interleaved)")
    parser.add_argument("--args", nargs="+", required=True,
                        help="the example's arguments: variant and rounds (the last one is the round count)")
    parser.add_argument("binaries", nargs="+")
    a = parser.parse_args()
    rounds = int(a.args[-1])
    printed: dict[str, list[float]] = {b: [] for b in a.binaries}
    cpu: dict[str, list[float]] = {b: [] for b in a.binaries}
    regrets: dict[str, str] = {}
    for i in range(a.runs):
        for b in a.binaries if i % 2 == 0 else a.binaries[::-1]:
            p, c, r = run(b, a.args, rounds)
            printed[b].append(p)
            cpu[b].append(c)
            regrets[b] = r
    print(f"{' '.join(a.args)}, {a.runs} interleaved runs; ns a round, median (quartiles); load "
          f"{os.getloadavg()[0]:.1f}")
    first = regrets[a.binaries[0]]
    for b in a.binaries:
        flag = "" if regrets[b] == first else "   REGRET DIFFERS"
        print(f"{b}\n    printed {quartiles(printed[b])}   CPU {quartiles(cpu[b])}   regret {regrets[b]}{flag}")


if __name__ == "__main__":
    main()
