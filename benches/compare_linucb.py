"""Throughput of dpbandits vs. a plain NumPy JDP-LinUCB on Shariff & Sheffet's D.2 workload.

Workload (Shariff & Sheffet 2018, "Differentially Private Contextual Linear
Bandits", App. D setting and D.2, right panel): d = 5, K = d^2 = 25 actions,
a fresh decision set every round, suboptimality gap 0.1, +-1 rewards;
jointly DP LinUCB (Alg. 1) with the tree-based mechanism over the 6 x 6
matrix M_t = A_t^T A_t and symmetric Gaussian node noise (§4, §4.2,
Prop. 11), epsilon = 1, delta = 0.1, alpha = 1/n.

Two implementations of the same learner on the same workload:

- dpbandits: ``dp.simulate(JointDPLinUCB(...), ShariffSheffetEnv(5, gap=0.1))``,
  one seed, so one core; the loop (environment included) runs in Rust.
- NumPy: the loop below, written as a user would write it, with the noise
  scale, shift and confidence radius copied from the dpbandits learner
  (``learner.calibration`` and ``learner.radius``), so both run the same
  algorithm with the same constants (calibrated for the dpbandits horizon;
  the NumPy run is a prefix of it).

Each side is timed several times (environment generation included) and the
median rounds/s is reported with the ratio. As a sanity check, the cumulative
pseudo-regret of both at the NumPy horizon is printed (mean over the seeds of
the repeats; it should agree within noise).

Run from the repository root:

    python3 benches/compare_linucb.py            # ~20 k NumPy rounds, 2 M dpbandits rounds
    python3 benches/compare_linucb.py --quick    # a few seconds
    python3 benches/compare_linucb.py --help
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np

import dpbandits as dp

D = 5
K = D * D
EPSILON = 1.0
DELTA = 0.1
GAP = 0.1
OPTIMAL_REWARD = 0.75


# --------------------------------------------------------------------------
# NumPy reference implementation
# --------------------------------------------------------------------------


class NumpyTree:
    """Tree-based mechanism for prefix sums of (p, p) matrices.

    Node (level i) sums 2^i consecutive leaves and carries its own noise
    (Z' + Z'^T)/sqrt(2), Z'_ij ~ N(0, sigma^2). Only the newest node of each
    level is kept (exact sum and noisy sum): O(log n) memory. The release
    after t additions is the sum of the noisy nodes of t's dyadic
    decomposition, one per set bit of t.
    """

    def __init__(self, p: int, horizon: int, sigma: float, rng: np.random.Generator) -> None:
        levels = horizon.bit_length()
        self.p, self.sigma, self.rng = p, sigma, rng
        self.t = 0
        self.exact = np.zeros((levels, p, p))
        self.noisy = np.zeros((levels, p, p))
        self.release = np.zeros((p, p))

    def add(self, value: np.ndarray) -> None:
        self.t += 1
        level = (self.t & -self.t).bit_length() - 1  # trailing zeros of t
        node = value + self.exact[:level].sum(axis=0)
        z = self.rng.normal(0.0, self.sigma, size=(self.p, self.p))
        self.exact[level] = node
        self.noisy[level] = node + (z + z.T) / np.sqrt(2.0)
        live = [j for j in range(self.t.bit_length()) if (self.t >> j) & 1]
        self.release = self.noisy[live].sum(axis=0)


def decision_set(theta: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """App. D: one optimal unit action with <x, theta*> = 0.75 at a random index,
    K - 1 uniform unit actions with <x, theta*> in [-0.75, 0.65] (by rejection)."""
    lo, hi = -OPTIMAL_REWARD, OPTIMAL_REWARD - GAP
    while True:  # about 88% of the sphere lies in the band (d = 5): one batch nearly always does
        g = rng.standard_normal((2 * K, D))
        g /= np.sqrt((g * g).sum(axis=1, keepdims=True))
        dots = g @ theta
        subopt = g[(dots >= lo) & (dots <= hi)]
        if len(subopt) >= K - 1:
            break

    g = rng.standard_normal(D)
    g -= (g @ theta) * theta
    g /= np.sqrt(g @ g)
    best = OPTIMAL_REWARD * theta + np.sqrt(1.0 - OPTIMAL_REWARD**2) * g

    index = rng.integers(K)
    actions = np.empty((K, D))
    actions[np.arange(K) != index] = subopt[: K - 1]
    actions[index] = best
    return actions, actions @ theta


def run_numpy(learner: dp.JointDPLinUCB, n: int, seed: int) -> tuple[float, float]:
    """Runs n rounds of Gaussian JDP-LinUCB; returns (seconds, cumulative regret)."""
    cal, rad = learner.calibration, learner.radius
    rng = np.random.default_rng(seed)
    theta_star = rng.standard_normal(D)
    theta_star /= np.linalg.norm(theta_star)

    start = time.perf_counter()
    tree = NumpyTree(D + 1, learner.horizon + 1, cal.sigma, rng)
    tree.add(np.zeros((D + 1, D + 1)))  # A_1 = 0: the first leaf is the zero row
    eye = np.eye(D)
    last_good = None
    regret = 0.0
    for _ in range(n):
        actions, means = decision_set(theta_star, rng)

        # V_t = G_t + H_t (top-left block of the release, shifted by 2 Upsilon I),
        # u~_t = u_t + h_t (first D entries of the release's last column).
        v = tree.release[:D, :D] + cal.shift * eye
        u = tree.release[:D, D]
        try:
            chol = np.linalg.cholesky(v)
            last_good = chol, u
        except np.linalg.LinAlgError:  # prob. ~ alpha/2n: reuse the last good release
            if last_good is None:
                last_good = np.sqrt(cal.shift) * eye, np.zeros(D)
            chol, u = last_good
        log_det = 2.0 * np.log(np.diag(chol)).sum()
        beta = rad.noise_sd * np.sqrt(max(0.0, rad.log_offset + log_det)) + rad.offset

        # With V = C C^T: <theta~, x> = (C^-1 u)·(C^-1 x), ||x||_{V^-1} = ||C^-1 x||.
        w = np.linalg.solve(chol, np.column_stack([u, actions.T]))
        ucb = w[:, 0] @ w[:, 1:] + beta * np.sqrt((w[:, 1:] ** 2).sum(axis=0))
        i = int(np.argmax(ucb))

        y = 1.0 if rng.random() < 0.5 * (1.0 + means[i]) else -1.0
        regret += means.max() - means[i]
        z = np.append(actions[i], y)
        tree.add(np.outer(z, z))
    return time.perf_counter() - start, regret


# --------------------------------------------------------------------------
# Benchmark driver
# --------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--numpy-rounds", type=int, default=20_000, help="NumPy horizon")
    parser.add_argument("--dpbandits-rounds", type=int, default=2_000_000, help="dpbandits horizon")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per side")
    parser.add_argument("--quick", action="store_true", help="2k NumPy, 200k dpbandits rounds")
    args = parser.parse_args()
    if args.quick:
        args.numpy_rounds, args.dpbandits_rounds = 2_000, 200_000
    n_np, n_rs, reps = args.numpy_rounds, args.dpbandits_rounds, args.repeats
    if not 0 < n_np <= n_rs or reps < 1:
        parser.error("need 0 < --numpy-rounds <= --dpbandits-rounds and --repeats >= 1")

    learner = dp.JointDPLinUCB(d=D, horizon=n_rs, epsilon=EPSILON, delta=DELTA, noise="gaussian")
    env = dp.ShariffSheffetEnv(D, gap=GAP)
    cal = learner.calibration
    print(f"Shariff & Sheffet App. D.2: d={D}, K={K}, eps={EPSILON}, delta={DELTA}, gap={GAP}")
    print(
        f"calibration (n={n_rs}): m={cal.m}, sigma={cal.sigma:.2f}, "
        f"shift=2*Upsilon={cal.shift:.1f}, beta offset={learner.radius.offset:.1f}"
    )
    print(f"numpy {np.__version__}, dpbandits {dp.__version__}, python {platform.python_version()}")
    print(f"{reps} repeats per side, seeds 0..{reps - 1}; median rounds/s reported\n")

    rs_rate, rs_regret = [], []
    for seed in range(reps):
        # record_every = n_np puts a record point at the NumPy horizon.
        res = dp.simulate(learner, env, seeds=[seed], record_every=n_np)
        rs_rate.append(float(res.rounds_per_second[0]))
        rs_regret.append(float(res.regret[0, 0]))

    np_rate, np_regret = [], []
    for seed in range(reps):
        seconds, regret = run_numpy(learner, n_np, seed)
        np_rate.append(n_np / seconds)
        np_regret.append(regret)

    rs_med, np_med = statistics.median(rs_rate), statistics.median(np_rate)
    print(f"{'implementation':<16}{'rounds':>12}{'rounds/s (median)':>20}{'min':>12}{'max':>12}")
    for name, n, rates in (("dpbandits", n_rs, rs_rate), ("numpy", n_np, np_rate)):
        print(
            f"{name:<16}{n:>12,}{statistics.median(rates):>20,.0f}{min(rates):>12,.0f}{max(rates):>12,.0f}"
        )
    print(f"\nspeed-up dpbandits / numpy: {rs_med / np_med:,.1f}x")

    def mean_sd(v: list[float]) -> str:
        sd = statistics.stdev(v) if len(v) > 1 else 0.0
        return f"{statistics.mean(v):8.1f} +- {sd:6.1f}  ({statistics.mean(v) / n_np:.3f}/round)"

    print(f"\npseudo-regret at t = {n_np:,} (mean +- sd over {reps} seeds):")
    print(f"  dpbandits {mean_sd(rs_regret)}")
    print(f"  numpy     {mean_sd(np_regret)}")
    print("  (uniformly random play: about 0.75/round)")


if __name__ == "__main__":
    main()
