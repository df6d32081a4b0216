"""The public K-armed online call against the engine-direct call and a
plain pure-Python DP-KLUCB with the same interface.

One round is ``arm = learner.select(); learner.update(reward)`` from
Python (rewards drawn beforehand, Bernoulli on the 5-arm instance
0.75 .. 0.25). Three loops, interleaved, ``--reps`` times each:

- ``public``: ``dp.DPKLUCB(5, 10**7, 1.0)``, its ``select`` / ``update``;
- ``engine``: the same learner's engine object, ``select`` / ``observe``
  (the engine's own call: no protocol, the reward fed at once);
- ``python``: :class:`PurePythonDPKLUCB` below, the peer a service would
  otherwise write (adaptive phases, a Laplace draw per phase end, the
  KL-UCB index by bisection at decisions only).

Reported: the median ns per round of each, and the ratios
public / engine (target <= 1.5) and python / public (target >= 1.5).
``--main PATH`` also times the public call of another build (e.g. the
``python`` directory of the main branch) in a subprocess, for a before /
after comparison.

    PYTHONPATH=python python3 benches/karmed_online_call.py --rounds 200000 --reps 7
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import time
from typing import Any

MEANS = (0.75, 0.625, 0.5, 0.375, 0.25)


class PurePythonDPKLUCB:
    """DP-KLUCB (Azize et al. 2025) on the adaptive phase grid of
    ``dp.DPKLUCB`` (alpha 1.2, first phase ceil(4 / eps) pulls), Laplace
    (1 / eps) per phase sum (floating point), the d_eps KL-UCB index by
    bisection at phase ends; ``select()`` / ``update(reward)``."""

    def __init__(self, k: int, horizon: int, epsilon: float, seed: int = 0) -> None:
        self.k, self.horizon, self.eps = k, horizon, epsilon
        self.rng = random.Random(seed)
        self.min_len = math.ceil(4.0 / epsilon)
        self.alpha = 1.2
        self.pulls = [0] * k
        self.sums = [0.0] * k
        self.x = [1.0] * k
        self.t = 0
        self.arm = -1
        self.left = 0
        self.acc = 0.0
        self.length = 0

    def _laplace(self) -> float:
        u = self.rng.random() - 0.5
        return -math.copysign(1.0, u) * math.log(1.0 - 2.0 * abs(u)) / self.eps

    def _d_eps(self, x: float, y: float) -> float:
        # kl(x, z) + eps (y - z) minimised over z in [x, y] (d_eps of the lower bound).
        def kl(p: float, q: float) -> float:
            p = min(max(p, 1e-12), 1 - 1e-12)
            q = min(max(q, 1e-12), 1 - 1e-12)
            return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))

        e = math.exp(-self.eps)
        z = x * e / (1 - x + x * e)
        z = min(max(z, x), y)
        return kl(x, z) + self.eps * (y - z)

    def _index(self, a: int) -> float:
        n = self.pulls[a]
        if n == 0:
            return math.inf
        m = min(max(self.sums[a] / n, 0.0), 1.0)
        c = math.log(self.t + 1) / n
        lo, hi = m, 1.0
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            if self._d_eps(m, mid) <= c:
                lo = mid
            else:
                hi = mid
        return lo

    def select(self) -> int:
        if self.left == 0:
            a = max(range(self.k), key=self._index)
            n = self.pulls[a]
            if n == 0:
                length = self.min_len
            else:
                x = self.x[a] * self.alpha
                target = max(n + self.min_len, math.ceil(x))
                self.x[a] = max(x, float(target))
                length = target - n
            self.arm, self.left, self.length, self.acc = a, length, length, 0.0
        return self.arm

    def update(self, reward: float) -> None:
        self.acc += reward
        self.left -= 1
        self.t += 1
        if self.left == 0:
            a = self.arm
            self.sums[a] += self.acc + self._laplace()
            self.pulls[a] += self.length


def _rewards(n: int) -> list[list[float]]:
    rng = random.Random(7)
    return [[1.0 if rng.random() < m else 0.0 for _ in range(n)] for m in MEANS]


def run_public(learner: Any, table: list[list[float]], n: int) -> float:
    t0 = time.perf_counter_ns()
    for i in range(n):
        a = learner.select()
        learner.update(table[a][i])
    return (time.perf_counter_ns() - t0) / n


def run_engine(engine: Any, table: list[list[float]], n: int) -> float:
    t0 = time.perf_counter_ns()
    for i in range(n):
        a = engine.select()
        engine.observe(a, table[a][i])
    return (time.perf_counter_ns() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--main", default=None, help="PYTHONPATH of another build to time in a subprocess")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    import dpbandits as dp

    table = _rewards(args.rounds)
    if args.child:  # one timing of the public and engine calls of this build
        lr = dp.DPKLUCB(5, 10**7, 1.0, seed=1)
        pub = run_public(lr, table, args.rounds)
        lr = dp.DPKLUCB(5, 10**7, 1.0, seed=1)
        eng = run_engine(lr._engine, table, args.rounds)
        print(json.dumps({"public": pub, "engine": eng}))
        return
    times: dict[str, list[float]] = {"public": [], "engine": [], "python": [], "main public": [], "main engine": []}
    for _ in range(args.reps):
        times["public"].append(run_public(dp.DPKLUCB(5, 10**7, 1.0, seed=1), table, args.rounds))
        times["engine"].append(run_engine(dp.DPKLUCB(5, 10**7, 1.0, seed=1)._engine, table, args.rounds))
        times["python"].append(run_public(PurePythonDPKLUCB(5, 10**7, 1.0, seed=1), table, args.rounds))
        if args.main:
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--rounds", str(args.rounds)],
                env={"PYTHONPATH": args.main, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True,
            )
            got = json.loads(out.stdout)
            times["main public"].append(got["public"])
            times["main engine"].append(got["engine"])
    med = {k: statistics.median(v) for k, v in times.items() if v}
    for k, v in med.items():
        print(f"{k:>12}: {v:7.1f} ns/round  (runs: {', '.join(f'{x:.0f}' for x in times[k])})")
    print(f"public / engine       = {med['public'] / med['engine']:.2f}  (target <= 1.5)")
    print(f"python / public       = {med['python'] / med['public']:.2f}  (target >= 1.5)")
    if args.main:
        print(f"main public / public  = {med['main public'] / med['public']:.2f}")
        print(f"public / main engine  = {med['public'] / med['main engine']:.2f}")


if __name__ == "__main__":
    main()
