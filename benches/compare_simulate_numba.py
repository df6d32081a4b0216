"""``dp.simulate`` of the K-armed learners beside numba loops of the same
algorithms, each with numba's ``np.random`` and with an inline
xoshiro256++ generator (the generator of the library's simulated
environments), as ratios: median over interleaved runs of each loop's
nanoseconds a round, numba's time / the library's (greater than 1: the
library is faster).

Workloads (one seed, one core, Bernoulli arms):

- DP-KLUCB (Azize et al. 2025), K = 5, means 0.75 .. 0.25, eps = 1, on the
  library's default adaptive grid (alpha 1.2, first phase ceil(4 / eps)
  pulls); the numba loops decide at phase ends (KL-UCB index by bisection
  on d_eps, floating-point Laplace(1 / eps) on each phase sum) and draw one
  Bernoulli reward a round. The "floor" loop is one xoshiro256++ uniform and
  a count a round, nothing else.
- UCB1, K = 10, means 0.9 .. 0.45: index mean + sqrt(2 ln t / n) a round.
- Private UCB (Mishra & Thakurta 2015, Alg. 1), K = 10: one binary tree per
  arm over its rewards, a Laplace draw per completed node (one a round),
  the released sum read by the index mean + sqrt(2 ln t / n) + a noise
  width; the numba loops draw floating-point Laplace noise, the library
  row runs the default exact lattice noise.

Needs numba (``pip install "dpbandits[bench]"`` or ``pip install numba``).
Run from the repository root, with a quiet machine if there is one:

    python3 benches/compare_simulate_numba.py --horizon 10000000 --runs 5

Timing is process CPU time of the calling thread's process (the library's
loop runs on one worker thread while the caller sleeps), which is what to
read on a machine shared with other jobs.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dpbandits as dp

MEANS5 = np.array([0.75, 0.625, 0.5, 0.375, 0.25])
MEANS10 = np.linspace(0.9, 0.45, 10)


def numba_loops() -> dict[str, Callable[..., float]]:
    """The numba loops, compiled; each takes (horizon, means, seed) and
    returns the pseudo-regret."""
    import numba
    from numba import uint64

    @numba.njit(inline="always")
    def rotl(x, k):  # type: ignore[no-untyped-def]
        return (x << uint64(k)) | (x >> uint64(64 - k))

    @numba.njit(inline="always")
    def seed_state(seed):  # type: ignore[no-untyped-def]
        # SplitMix64 expands the seed into the four state words.
        s = np.empty(4, np.uint64)
        z = uint64(seed)
        for i in range(4):
            z = z + uint64(0x9E3779B97F4A7C15)
            x = z
            x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
            x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
            s[i] = x ^ (x >> uint64(31))
        return s

    @numba.njit(inline="always")
    def next_u01(s):  # type: ignore[no-untyped-def]
        # xoshiro256++ (Blackman & Vigna), its top 53 bits as a uniform on [0, 1).
        out = rotl(s[0] + s[3], 23) + s[0]
        t = s[1] << uint64(17)
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return float(out >> uint64(11)) * (1.0 / 9007199254740992.0)

    @numba.njit(inline="always")
    def d_eps(m, y, eps):  # type: ignore[no-untyped-def]
        e = math.exp(-eps)
        den = 1.0 - y + y * e
        if m >= y * e / den:
            v = 0.0
            if m > 0.0:
                v += m * math.log(m / y)
            if m < 1.0:
                v += (1.0 - m) * math.log((1.0 - m) / (1.0 - y))
            return max(v, 0.0)
        return max(-eps * m - math.log(den), 0.0)

    @numba.njit(inline="always")
    def kl_upper(m, c, eps):  # type: ignore[no-untyped-def]
        if d_eps(m, 1.0, eps) <= c:
            return 1.0
        lo, hi = m, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if d_eps(m, mid, eps) <= c:
                lo = mid
            else:
                hi = mid
            if hi - lo < 1e-12:
                break
        return lo

    def make_dp_klucb(xoshiro: bool) -> Callable[..., float]:
        @numba.njit
        def run(horizon, means, seed):  # type: ignore[no-untyped-def]
            eps, alpha, min_len = 1.0, 1.2, 4
            s = seed_state(seed)
            np.random.seed(seed)  # noqa: NPY002 (numba supports the legacy generator only)
            k = means.size
            pulls = np.zeros(k, np.int64)
            sums = np.zeros(k)
            x = np.ones(k)
            best = means.max()
            regret = 0.0
            t = 0
            while t < horizon:
                ln_t = math.log(t + 1)
                arm, top = 0, -1.0
                for a in range(k):
                    score = 2.0
                    if pulls[a] > 0:
                        m = min(max(sums[a] / pulls[a], 0.0), 1.0)
                        score = kl_upper(m, ln_t / pulls[a], eps)
                    if score > top:
                        arm, top = a, score
                n0 = pulls[arm]
                if n0 == 0:
                    n = min_len
                else:
                    xa = x[arm] * alpha
                    target = max(n0 + min_len, math.ceil(xa))
                    x[arm] = max(xa, float(target))
                    n = target - n0
                n = min(n, horizon - t)
                mu = means[arm]
                ones = 0
                if xoshiro:
                    for _ in range(n):
                        ones += next_u01(s) < mu
                else:
                    for _ in range(n):
                        ones += np.random.random() < mu  # noqa: NPY002
                sums[arm] += ones + np.random.laplace(0.0, 1.0 / eps)  # noqa: NPY002
                pulls[arm] += n
                regret += n * (best - mu)
                t += n
            return regret

        return run  # type: ignore[no-any-return]

    @numba.njit
    def floor(horizon, means, seed):  # type: ignore[no-untyped-def]
        s = seed_state(seed)
        mu = means[0]
        ones = 0
        for _ in range(horizon):
            ones += next_u01(s) < mu
        return float(ones)

    def make_ucb1(xoshiro: bool) -> Callable[..., float]:
        @numba.njit
        def run(horizon, means, seed):  # type: ignore[no-untyped-def]
            s = seed_state(seed)
            np.random.seed(seed)  # noqa: NPY002
            k = means.size
            pulls = np.zeros(k)
            sums = np.zeros(k)
            regret, best = 0.0, means.max()
            for t in range(horizon):
                arm = t
                if t >= k:
                    c = 2.0 * math.log(t + 1)
                    top = -1.0
                    for a in range(k):
                        score = sums[a] / pulls[a] + math.sqrt(c / pulls[a])
                        if score > top:
                            arm, top = a, score
                u = next_u01(s) if xoshiro else np.random.random()  # noqa: NPY002
                sums[arm] += 1.0 if u < means[arm] else 0.0
                pulls[arm] += 1.0
                regret += best - means[arm]
            return regret

        return run  # type: ignore[no-any-return]

    def make_private_ucb(xoshiro: bool) -> Callable[..., float]:
        @numba.njit
        def run(horizon, means, seed):  # type: ignore[no-untyped-def]
            s = seed_state(seed)
            np.random.seed(seed)  # noqa: NPY002
            levels = 64
            scale = float(math.ceil(math.log2(horizon)) + 1)
            width = scale**1.5
            k = means.size
            exact = np.zeros((k, levels))  # exact node sums, per arm and level
            noisy = np.zeros((k, levels))  # their noisy values
            released = np.zeros(k)
            pulls = np.zeros(k, np.int64)
            regret, best = 0.0, means.max()
            for t in range(horizon):
                arm = t
                if t >= k:
                    c = 2.0 * math.log(t + 1)
                    top = -1.0e300
                    for a in range(k):
                        n = pulls[a]
                        score = released[a] / n + math.sqrt(c / n) + width * math.log(n + 1.0) / n
                        if score > top:
                            arm, top = a, score
                u = next_u01(s) if xoshiro else np.random.random()  # noqa: NPY002
                y = 1.0 if u < means[arm] else 0.0
                n = pulls[arm] + 1
                level = 0
                while (n >> level) & 1 == 0:
                    level += 1
                node = y
                for j in range(level):
                    node += exact[arm, j]
                exact[arm, level] = node
                v = (next_u01(s) if xoshiro else np.random.random()) - 0.5  # noqa: NPY002
                noisy[arm, level] = node - scale * math.copysign(math.log(1.0 - 2.0 * abs(v)), v)
                total = 0.0
                for j in range(levels):
                    if (n >> j) & 1:
                        total += noisy[arm, j]
                released[arm] = total
                pulls[arm] = n
                regret += best - means[arm]
            return regret

        return run  # type: ignore[no-any-return]

    loops = {
        "DPKLUCB np.random": make_dp_klucb(False),
        "DPKLUCB xoshiro": make_dp_klucb(True),
        "floor xoshiro": floor,
        "UCB1 np.random": make_ucb1(False),
        "UCB1 xoshiro": make_ucb1(True),
        "PrivateUCB np.random": make_private_ucb(False),
        "PrivateUCB xoshiro": make_private_ucb(True),
    }
    for name, f in loops.items():
        f(2000, MEANS5 if name.startswith(("DPKLUCB", "floor")) else MEANS10, 0)  # compile outside the timings
    return loops


def _cpu_ns(run: Callable[[], Any], horizon: int) -> float:
    start = time.process_time()
    run()
    return (time.process_time() - start) / horizon * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    h = args.horizon
    env5, env10 = dp.BernoulliBandit(MEANS5), dp.BernoulliBandit(MEANS10)

    def library(make: Callable[[], Any], env: Any) -> Callable[[], Any]:
        def run() -> Any:
            learner = make()
            return dp.simulate(learner, env, h, seeds=1)

        return run

    rows: dict[str, Callable[[], Any]] = {
        "dpbandits DPKLUCB": library(lambda: dp.DPKLUCB(5, h, 1.0), env5),
        "dpbandits UCB1": library(lambda: dp.UCB1(10, h), env10),
        "dpbandits PrivateUCB": library(lambda: dp.PrivateUCB(10, h, 1.0), env10),
    }
    try:
        loops = numba_loops()
    except ImportError:
        print("numba is not installed: only the library's rows are timed")
        loops = {}
    for i, (name, f) in enumerate(loops.items()):
        means = MEANS5 if name.startswith(("DPKLUCB", "floor")) else MEANS10
        rows[f"numba {name}"] = lambda f=f, means=means, i=i: f(h, means, i + 1)
    times: dict[str, list[float]] = {name: [] for name in rows}
    for r in range(args.runs):
        # Interleaved: every loop once per pass, the order reversed every other pass.
        order = list(rows.items()) if r % 2 == 0 else list(reversed(rows.items()))
        for name, run in order:
            times[name].append(_cpu_ns(run, h))
    median = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"T = {h:,}, median of {args.runs} interleaved runs (process CPU time), ns a round")
    for name, ts in times.items():
        print(f"  {name:32s} {median[name]:7.2f}   (range {min(ts):.2f} .. {max(ts):.2f})")
    if loops:
        print("ratios (numba ns / dpbandits ns; > 1: dpbandits faster)")
        for learner in ("DPKLUCB", "UCB1", "PrivateUCB"):
            lib = median[f"dpbandits {learner}"]
            for variant in ("np.random", "xoshiro"):
                print(f"  {learner:10s} vs numba {variant:10s} {median[f'numba {learner} {variant}'] / lib:6.2f}")
        print(f"  DPKLUCB    vs numba floor      {median['numba floor xoshiro'] / median['dpbandits DPKLUCB']:6.2f}")


if __name__ == "__main__":
    main()
