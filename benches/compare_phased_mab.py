"""Rounds per second of DP-KLUCB (Azize et al. 2025; alpha = 1.5, eps = 1,
K = 5 Bernoulli arms 0.75 .. 0.25): ``dpbandits.simulate`` (one seed, one
core, the Rust loop: one environment draw and one learner step per round)
against the fastest loop a user could write in NumPy for the same
algorithm, and in numba when it is installed.

The NumPy version exploits the algorithm's structure as a user would:
within a committed phase of n pulls of arm a the reward sum is one
Binomial(n, mu_a) draw, so the Python work is per phase (a few hundred
phases per run), not per round; its "rounds per second" are therefore not
a per-round loop's. The numba version does the same per round (one
Bernoulli draw per round, like the library), jit-compiled.

``--learners`` instead times every phased learner in ``simulate`` at
K = 5 (the issue's target: >= 20 M rounds/s each): median of
``--repeats`` runs of one seed, in wall-clock and in process CPU time (the
second is what to read on a shared, loaded machine: the simulation runs on
one core and the caller sleeps until it finishes).

Run from the repository root: ``python3 benches/compare_phased_mab.py``
(``--horizon``, ``--repeats``, ``--learners``).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import dpbandits as dp
from dpbandits.privacy.azize import d_eps

MEANS = np.array([0.75, 0.625, 0.5, 0.375, 0.25])


def _upper(m: float, c: float, eps: float) -> float:
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


def dp_klucb_numpy(horizon: int, eps: float, alpha: float, seed: int) -> float:
    """DP-KLUCB in NumPy, one Binomial draw per phase; returns the regret."""
    rng = np.random.default_rng(seed)
    k = len(MEANS)
    pulls = np.zeros(k, dtype=np.int64)
    sums = np.zeros(k)
    x = np.ones(k)
    t = 0
    regret = 0.0
    best = MEANS.max()
    while t < horizon:
        ln_t = math.log(t + 1)
        score = np.full(k, np.inf)
        for a in range(k):
            if pulls[a]:
                m = min(max(sums[a] / pulls[a], 0.0), 1.0)
                score[a] = _upper(m, ln_t / pulls[a], eps)
        arm = int(np.argmax(score))
        if pulls[arm] == 0:
            n = 1
        else:
            x[arm] *= alpha
            n = max(pulls[arm] + 1, math.ceil(x[arm])) - pulls[arm]
        n = min(n, horizon - t)
        sums[arm] += rng.binomial(n, MEANS[arm]) + rng.laplace(scale=1.0 / eps)
        pulls[arm] += n
        regret += n * (best - MEANS[arm])
        t += n
    return regret


def _numba_loop():  # type: ignore[no-untyped-def]
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(cache=True)
    def run(horizon, eps, alpha, means, seed):  # type: ignore[no-untyped-def]
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
                if pulls[a] == 0:
                    s = 2.0
                else:
                    m = min(max(sums[a] / pulls[a], 0.0), 1.0)
                    c = ln_t / pulls[a]
                    e = math.exp(-eps)
                    if eps * (1 - m) <= c:
                        s = 1.0
                    else:
                        lo, hi = m, 1.0
                        for _ in range(60):
                            mid = 0.5 * (lo + hi)
                            den = 1 - mid + mid * e
                            z = mid * e / den
                            if m >= z:
                                d = m * math.log(m / mid) + (1 - m) * math.log((1 - m) / (1 - mid)) if m > 0 else \
                                    -math.log(1 - mid)
                            else:
                                d = -eps * m - math.log(den)
                            if d <= c:
                                lo = mid
                            else:
                                hi = mid
                        s = lo
                if s > top:
                    arm, top = a, s
            n = 1 if pulls[arm] == 0 else 0
            if n == 0:
                x[arm] *= alpha
                n = max(pulls[arm] + 1, math.ceil(x[arm])) - pulls[arm]
            n = min(n, horizon - t)
            s_ = 0.0
            for _ in range(n):  # one Bernoulli per round, as the library
                s_ += 1.0 if np.random.random() < means[arm] else 0.0  # noqa: NPY002
            sums[arm] += s_ + np.random.laplace(0.0, 1.0 / eps)  # noqa: NPY002
            pulls[arm] += n
            regret += n * (best - means[arm])
            t += n
        return regret

    return run


def learner_speeds(T: int, repeats: int) -> None:
    """Rounds per second of each phased learner in ``simulate`` (K = 5, eps = 1)."""
    import statistics

    env = dp.BernoulliBandit(MEANS.tolist())
    makers = {
        "DPKLUCB (default: adaptive grid)": lambda: dp.DPKLUCB(5, T, 1.0),
        "DPKLUCB alpha 1.5": lambda: dp.DPKLUCB(5, T, 1.0, alpha=1.5, phase_floor=None),
        "DPIMED": lambda: dp.DPIMED(5, T, 1.0),
        "AdaPUCB": lambda: dp.AdaPUCB(5, T, 1.0),
        "AdaPKLUCB": lambda: dp.AdaPKLUCB(5, T, 1.0),
        "AdaCUCB": lambda: dp.AdaCUCB(5, T, 0.5),
        "AdaCKLUCB": lambda: dp.AdaCKLUCB(5, T, 0.5),
        "DPSE": lambda: dp.DPSE(5, T, 1.0),
        "DPTS": lambda: dp.DPTS(5, T, 1.0),
        "KLUCB": lambda: dp.KLUCB(5, T),
    }
    print(f"simulate, K = 5, T = {T:,}, median of {repeats} runs (M rounds/s)")
    for name, make in makers.items():
        wall, cpu = [], []
        for r in range(repeats):
            learner = make()
            t0, c0 = time.perf_counter(), time.process_time()
            dp.simulate(learner, env, horizon=T, seeds=[r], record_every=T)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        w, c = T / statistics.median(wall) / 1e6, T / statistics.median(cpu) / 1e6
        print(f"  {name:34s} wall {w:6.1f}   cpu {c:6.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--horizon", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--learners", action="store_true", help="time every phased learner in simulate")
    args = ap.parse_args()
    T = args.horizon
    if args.learners:
        learner_speeds(T, args.repeats)
        return
    env = dp.BernoulliBandit(MEANS.tolist())
    learner = dp.DPKLUCB(5, T, 1.0, alpha=1.5, phase_floor=None)  # the algorithm of the loops below
    rows = {}
    lib = []
    for r in range(args.repeats):
        t0 = time.perf_counter()
        dp.simulate(learner, env, horizon=T, seeds=[r], record_every=T)
        lib.append(time.perf_counter() - t0)
    rows["dpbandits.simulate (Rust, per round)"] = min(lib)
    npy = []
    for r in range(args.repeats):
        t0 = time.perf_counter()
        dp_klucb_numpy(T, 1.0, 1.5, r)
        npy.append(time.perf_counter() - t0)
    rows["NumPy (one Binomial per phase)"] = min(npy)
    run = _numba_loop()
    if run is not None:
        run(1000, 1.0, 1.5, MEANS, 0)  # compile
        nb = []
        for r in range(args.repeats):
            t0 = time.perf_counter()
            run(T, 1.0, 1.5, MEANS, r)
            nb.append(time.perf_counter() - t0)
        rows["numba (per round)"] = min(nb)
    else:
        print("numba not installed: its row is skipped")
    base = rows["dpbandits.simulate (Rust, per round)"]
    print(f"DP-KLUCB, K = 5, eps = 1, alpha = 1.5, T = {T:,} (best of {args.repeats})")
    for name, sec in rows.items():
        print(f"  {name:40s} {sec:8.3f} s  {T / sec / 1e6:8.1f} M rounds/s  ratio to dpbandits {sec / base:6.2f}")


if __name__ == "__main__":
    main()
