"""PrivateFTRL (Agarwal & Singh, "The Price of Differential Privacy for
Online Learning", ICML 2017, Alg. 1: experts, entropic regularizer) in
``simulate`` beside the same algorithm written in plain NumPy, vectorised
per round (side by side): microseconds of CPU time per round,
the two sides interleaved, median of several runs, and the ratio.

Both sides run N = 1000 experts with Bernoulli losses (expert 0 mean 0.4,
the others 0.5), calibrated for T = 1e7 (``--calibrated-for``) at
epsilon = 1 and timed on a prefix of ``--horizon`` rounds (the per-round
work does not grow with t). Both count the realized regret against the
best expert in hindsight.

- dpbandits: ``dp.simulate(dp.PrivateFTRL(n, T, 1.0, counter=...), dp.
  StochasticLosses(means), horizon)``, once with the default lattice noise
  (exact discrete Laplace) and once with ``sampler="float"``.
- NumPy: the loop a user would write from the paper and the learner's
  calibration attributes (``eta``, ``noise_scale`` of the float learner,
  the counter's (height, ones) from
  ``dpbandits.privacy.factorization.counter_parameters``): each round the
  Bernoulli loss vector, an expert drawn from x_t proportional to
  exp(-eta (L~ - min L~)), the regret term, then the counter step with
  floating-point Laplace noise (``Generator.laplace``), one draw per new
  node and coordinate:
  - ``--counter smooth-binary`` (the learner's default; Andersson & Pagh
    2023): the query leaf moves to the next number with ``ones`` set bits
    (Gosper), the nodes of the old leaf at and below the highest changed
    bit leave the noise sum and those of the new leaf enter it, each with
    a fresh N-vector of Laplace noise;
  - ``--counter binary`` (TreeBasedAgg, Alg. 2): the completed node of
    level tz(t) gets a fresh draw, and the release is padded with
    ceil(log2 T) - popcount(t) fresh draws per coordinate (drawn one by
    one, as Alg. 2 line 6 reads).
  L~_0 is the sum of the same number of draws as every release.

    python3 benches/compare_ftrl.py --horizon 8000 --repeats 5
    python3 benches/compare_ftrl.py --counter binary
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable

import numpy as np

import dpbandits as dp
from dpbandits.privacy.factorization import counter_parameters


def _means(n: int) -> np.ndarray:
    return np.array([0.4] + [0.5] * (n - 1))


def _engine(n: int, calibrated_for: int, horizon: int, counter: str, sampler: str) -> float:
    learner = dp.PrivateFTRL(n, calibrated_for, 1.0, counter=counter, sampler=sampler)  # type: ignore[arg-type]
    env = dp.StochasticLosses(_means(n))
    start = time.process_time()
    dp.simulate(learner, env, horizon, seeds=1)
    return (time.process_time() - start) / horizon * 1e6


def _next_leaf(x: int) -> int:
    """The next larger number with the same popcount (Gosper's hack)."""
    c = x & -x
    r = x + c
    return (((r ^ x) >> 2) // c) | r


def _bits(x: int) -> list[int]:
    return [i for i in range(x.bit_length()) if x >> i & 1]


def numpy_ftrl(n: int, calibrated_for: int, horizon: int, counter: str, seed: int) -> float:
    """Regret of ``horizon`` rounds of private FTRL over n experts (see the
    module docstring); the constants are the dpbandits learner's."""
    ref = dp.PrivateFTRL(n, calibrated_for, 1.0, counter=counter, sampler="float")  # type: ignore[arg-type]
    eta, b = ref.eta, ref.noise_scale
    rng = np.random.default_rng(seed)
    means = _means(n)
    cum_loss = np.zeros(n)  # L_t, for the regret
    exact = np.zeros(n)  # the counter's exact prefix sum
    regret, best = 0.0, 0.0
    if counter == "smooth-binary":
        (height, ones), _ = counter_parameters("smooth-binary", calibrated_for, "laplace")
        height, ones = int(height), int(ones)
        nodes = np.zeros((height, n))  # the node noise read at each level
        leaf = (1 << ones) - 1  # b_1: the query leaf of the next release
        noise = rng.laplace(0.0, b, (ones, n)).sum(axis=0)  # L~_0
    else:
        pad = max(1, math.ceil(math.log2(calibrated_for)))
        levels = calibrated_for.bit_length() + 1
        node_exact = np.zeros((levels, n))
        nodes = np.zeros((levels, n))  # noisy node values
        noise = rng.laplace(0.0, b, (pad, n)).sum(axis=0)
    released = exact + noise  # L~_0
    for t in range(1, horizon + 1):
        losses = (rng.random(n) < means).astype(np.float64)
        # x_t from L~_{t-1}; the played expert is drawn from it.
        w = np.exp(-eta * (released - released.min()))
        cdf = np.cumsum(w)
        i = min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), n - 1)
        cum_loss += losses
        new_best = cum_loss.min()
        regret += losses[i] - (new_best - best)
        best = new_best
        exact += losses
        if counter == "smooth-binary":
            new = _next_leaf(leaf)
            top = (leaf ^ new).bit_length() - 1
            below = (2 << top) - 1
            leaving, entering = _bits(leaf & below), _bits(new & below)
            noise -= nodes[leaving].sum(axis=0)
            nodes[entering] = rng.laplace(0.0, b, (len(entering), n))
            noise += nodes[entering].sum(axis=0)
            leaf = new
            released = exact + noise
        else:
            level = (t & -t).bit_length() - 1
            node_exact[level] = node_exact[:level].sum(axis=0) + losses
            nodes[level] = node_exact[level] + rng.laplace(0.0, b, n)
            held = _bits(t)
            released = nodes[held].sum(axis=0) + rng.laplace(0.0, b, (pad - len(held), n)).sum(axis=0)
    return regret


def _numpy(n: int, calibrated_for: int, horizon: int, counter: str) -> float:
    start = time.process_time()
    numpy_ftrl(n, calibrated_for, horizon, counter, seed=1)
    return (time.process_time() - start) / horizon * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--calibrated-for", type=int, default=10_000_000, help="the horizon T of the calibration")
    parser.add_argument("--horizon", type=int, default=8000, help="rounds timed")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--counter", choices=["smooth-binary", "binary"], default="smooth-binary")
    args = parser.parse_args()
    n, big_t, h, counter = args.n, args.calibrated_for, args.horizon, args.counter
    rows: dict[str, Callable[[], float]] = {
        "dpbandits PrivateFTRL (lattice)": lambda: _engine(n, big_t, h, counter, "lattice"),
        "dpbandits PrivateFTRL (float)": lambda: _engine(n, big_t, h, counter, "float"),
        "NumPy FTRL (float Laplace)": lambda: _numpy(n, big_t, h, counter),
    }
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.repeats):
        for name, run in rows.items():
            times[name].append(run())
    med = {name: statistics.median(ts) for name, ts in times.items()}
    numpy_us = med["NumPy FTRL (float Laplace)"]
    print(f"N = {n}, calibrated for T = {big_t}, {h} rounds timed, counter {counter}, median of {args.repeats}")
    print(f"{'loop':34s} {'us/round (CPU)':>15s} {'NumPy / this':>13s}")
    for name, m in med.items():
        print(f"{name:34s} {m:15.1f} {numpy_us / m:12.2f}x")


if __name__ == "__main__":
    main()
