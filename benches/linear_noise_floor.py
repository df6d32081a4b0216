"""A floor under the regret of the jointly private LinUCB learners that
release noisy sums of their rows (Gram matrix and response vector), and
where the epoch learner sits above it: App. D.2 (d = 5, K = 25, gap 0) or
the d = 20, K = 100 instance (gap 0.1), eps = 1, delta = 1e-6.

    nice -n 10 python benches/linear_noise_floor.py --n 1000000 --seeds 8
    nice -n 10 python benches/linear_noise_floor.py --n 1000000 --seeds 8 --epochs
    nice -n 10 python benches/linear_noise_floor.py --env d20 --n 1000000 --seeds 2
    nice -n 10 python benches/linear_noise_floor.py --n 1000000 --seeds 8 --first-seed 0 --scales 1 2.34 4 --save a
    nice -n 10 python benches/linear_noise_floor.py --n 1000000 --seeds 8 --first-seed 8 --scales 1 2.34 4 --save b
    python benches/linear_noise_floor.py --combine a.npz b.npz

Any (eps, delta)-DP Gaussian release of the sum of rows z z^T, z = (x, y),
adds noise of at least one release's scale sigma (the epoch learner's
calibration, ``JointDPLinUCB(counter="epoch").calibration.sigma``: the
smallest Gaussian scale for this sensitivity at (eps, delta), Balle &
Wang 2018, Thm 8). Releases at several times carry independent noise, or
correlated noise on overlapping data (a tree, a factorization), and a
decision reads a release made before it. The floor learner is given more
than that: at every round the EXACT cumulative sums of all rounds so far
plus ONE fixed draw of a single release's symmetrized noise (Shariff &
Sheffet §4.2: off-diagonal variance sigma^2, diagonal 2 sigma^2), with no
lag and no accumulation of draws (releasing that would not be private:
two rounds' difference is a row). None of the learners here is private
or has a valid radius: each plays LinUCB's radius (narrower than any
valid one for noisy statistics) on its statistics, with the smallest
ridge that keeps the noisy matrix positive definite (read from the draw
itself, no union bound). So each row is a floor for a mechanism family:

- ``LinUCB``: exact statistics (a check against ``dp.LinUCB``);
- ``floor``: exact statistics + one fixed draw, every round;
- ``floor, greedy``: the same without the exploration bonus;
- ``floor x s`` (``--scales``): the one draw times s, e.g. the noise a
  continual release without lag carries (BLT at T = 1e6: about 5.6 sigma
  on the latest prefix sum, ``max_column_norm * sqrt(max_release_variance)``
  of ``dpbandits.privacy.factorization``);

and with ``--epochs``, the epoch learner's schedule (first epoch of
``default_first_epoch`` rounds played uniformly at random, then epochs
growing by 1.5, statistics refreshed at epoch ends only):

- ``epochs, one draw``: the lag alone (no valid mechanism releases this);
- ``epochs, independent``: the library's mechanism, one independent draw
  per epoch summed (noise sqrt(k) sigma after k epochs);
- ``epochs, sqrt-factorized``: the epochs' sums released through the
  square-root factorization over the epoch index (the counter of
  ``dpbandits.privacy.factorization``, "sqrt": noise sigma
  ||c_{0..m-1}|| (sum_{i < k} c_i^2)^{1/2} after k of m epochs), a valid
  continual mechanism.

Environment realizations are the ones ``dp.simulate(..., seeds=S)`` uses
for ``dp.ShariffSheffetEnv(d=5, gap=..., seed=0)`` (``d20_instance(seed=0)``).
Prints the mean cumulative regret (and standard error) at a few rounds,
per learner, and the ratio to LinUCB at T.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import dpbandits as dp
from dpbandits.envs.logistic import d20_instance
from dpbandits.mechanisms import symmetric_gaussian
from dpbandits.privacy.confidence import ConfidenceRadius
from dpbandits.privacy.epoch import epoch_ends
from dpbandits.privacy.factorization import max_column_norm, sqrt_coefficients
from dpbandits.sim import replicate_seed


def symmetrized_noise(rng: np.random.Generator, p: int, sigma: float, size: int | None = None) -> np.ndarray:
    """Draws of Shariff & Sheffet's symmetrized Gaussian noise, (p, p) or
    (size, p, p), seeded from ``rng``."""
    return symmetric_gaussian(sigma, p, size=size, seed=int(rng.integers(2**63)))


class Variant:
    """One learner: its exact statistics, the noise its decisions read,
    and when it refreshes them (``ends``: None for every round)."""

    def __init__(self, d: int, noise: list[np.ndarray] | None, ends: list[int] | None, bonus: bool) -> None:
        self.d, self.noise, self.bonus = d, noise, bonus
        self.ends = None if ends is None else set(ends)
        self.epoch = 0
        self.gram = np.zeros((d, d))
        self.resp = np.zeros(d)
        self.blind = ends is not None  # plays uniformly until its first release
        self.refresh()

    def refresh(self) -> None:
        d = self.d
        z = np.zeros((d + 1, d + 1)) if self.noise is None else self.noise[min(self.epoch, len(self.noise) - 1)]
        n_gram, n_resp = z[:d, :d], z[:d, d]
        ridge = 1.0 + max(0.0, -float(np.linalg.eigvalsh(n_gram).min()))
        v = self.gram + n_gram + ridge * np.eye(d)
        self.vinv = np.linalg.inv(v)
        self.theta = self.vinv @ (self.resp + n_resp)
        self.logdet = float(np.linalg.slogdet(v)[1])

    def pick(self, x: np.ndarray, radius: ConfidenceRadius, rng: np.random.Generator) -> int:
        if self.blind:
            return int(rng.integers(x.shape[0]))
        scores = x @ self.theta
        if self.bonus:
            width = np.sqrt(np.maximum(np.einsum("kd,de,ke->k", x, self.vinv, x), 0.0))
            scores = scores + radius.beta(self.logdet) * width
        return int(scores.argmax())

    def update(self, t: int, a: np.ndarray, r: float) -> None:
        self.gram += np.outer(a, a)
        self.resp += r * a
        if self.ends is None:
            # Sherman-Morrison on the every-round statistics.
            va = self.vinv @ a
            denom = 1.0 + a @ va
            self.vinv -= np.outer(va, va) / denom
            self.logdet += math.log(denom)
            self.theta = self.vinv @ (self.resp + (0.0 if self.noise is None else self.noise[0][: self.d, self.d]))
        elif t in self.ends:
            self.blind = False
            self.epoch += 1
            self.refresh()


def variants(
    d: int, n: int, sigma: float, first: int, with_epochs: bool, scales: list[float], rng: np.random.Generator
) -> dict[str, Variant]:
    """The learners of the module docstring, their noise drawn from ``rng``."""
    one = [symmetrized_noise(rng, d + 1, sigma)]
    out = {"LinUCB": Variant(d, None, None, True)}
    for scale in scales:
        tag = "" if scale == 1.0 else f" x {scale:g}"
        out[f"floor{tag}"] = Variant(d, [scale * one[0]], None, True)
        out[f"floor{tag}, greedy"] = Variant(d, [scale * one[0]], None, False)
    if with_epochs:
        ends = epoch_ends(n, first, 1.5)
        m = len(ends)
        draws = symmetrized_noise(rng, d + 1, sigma, size=m)
        independent = list(np.cumsum(draws, axis=0))
        c = sqrt_coefficients(m)
        scale = max_column_norm("sqrt", m)  # the factorization's sensitivity factor
        factorized = [scale * sum(c[k - i] * draws[i] for i in range(k + 1)) for k in range(m)]
        # Entry k is the noise after k releases (entry 0 is read only
        # before the first release, when the learner plays blind).
        out["epochs, one draw"] = Variant(d, one, ends, True)
        out["epochs, independent"] = Variant(d, [np.zeros((d + 1, d + 1)), *independent], ends, True)
        out["epochs, sqrt-factorized"] = Variant(d, [np.zeros((d + 1, d + 1)), *factorized], ends, True)
    return out


def environment(name: str, gap: float, seed: int) -> dp.ShariffSheffetEnv:
    """Replicate ``seed`` of the named instance, as ``dp.simulate`` builds it."""
    if name == "d20":
        return d20_instance(gap=gap, seed=replicate_seed(0, seed))
    return dp.ShariffSheffetEnv(d=5, gap=gap, seed=replicate_seed(0, seed))


def one_seed(env: dp.ShariffSheffetEnv, seed: int, n: int, sigma: float, first: int, radius: ConfidenceRadius,
             at: list[int], with_epochs: bool, scales: list[float]) -> tuple[list[str], np.ndarray]:
    """Cumulative pseudo-regret of every learner at the rounds ``at``."""
    rng = np.random.default_rng([seed, 2026])
    table = variants(env.d, n, sigma, first, with_epochs, scales, rng)
    regret = np.zeros(len(table))
    out = np.zeros((len(table), len(at)))
    k = 0
    for t in range(1, n + 1):
        x = env.decision_set(t)
        means = env.mean_rewards(t)
        best = means.max()
        for v, learner in enumerate(table.values()):
            i = learner.pick(x, radius, rng)
            regret[v] += best - means[i]
            learner.update(t, x[i], env.reward(t, i))
        if t == at[k]:
            out[:, k] = regret
            k += 1
    return list(table), out


def print_table(names: list[str], at: list[int], stacked: np.ndarray) -> None:
    """Mean ± se over the seeds (axis 0) at each round of ``at``, per learner."""
    mean = stacked.mean(axis=0)
    seeds = stacked.shape[0]
    se = stacked.std(axis=0, ddof=1) / math.sqrt(seeds) if seeds > 1 else np.zeros_like(mean)
    print("learner".ljust(26) + "".join(f"{t:>16,}" for t in at) + "   ratio at T")
    for v, name in enumerate(names):
        cells = "".join(f"{m:>9,.0f} ± {s:<4,.0f}" for m, s in zip(mean[v], se[v], strict=True))
        print(f"{name:26s}{cells}   {mean[v, -1] / mean[0, -1]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=["d2", "d20"], default="d2")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--gap", type=float, default=None, help="default: 0 on d2, 0.1 on d20")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--epochs", action="store_true", help="also the epoch-schedule learners")
    parser.add_argument("--scales", type=float, nargs="+", default=[1.0],
                        help="floor learners with the one draw times each of these")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    parser.add_argument("--save", default=None, help="write the per-seed regret (npz: names, at, seeds, regret)")
    parser.add_argument("--combine", nargs="+", default=None, help="print the table of these --save files pooled")
    args = parser.parse_args()
    if args.combine is not None:
        parts = [np.load(f) for f in args.combine]
        print(f"pooled: {sum(len(p['seeds']) for p in parts)} seeds")
        print_table(list(parts[0]["names"]), list(parts[0]["at"]), np.concatenate([p["regret"] for p in parts]))
        return
    n = args.n
    gap = args.gap if args.gap is not None else (0.1 if args.env == "d20" else 0.0)
    d = 20 if args.env == "d20" else 5
    calibration = dp.JointDPLinUCB(d, n, args.epsilon, args.delta, calibration="tight", counter="epoch").calibration
    radius = dp.LinUCB(d, n).radius
    at = sorted({t for t in (144, 1_000, 10_000, 100_000, 1_000_000, n) if t <= n})
    print(f"{args.env} gap {gap}, eps {args.epsilon}, delta {args.delta}: one release's sigma = "
          f"{calibration.sigma:.4f}; T = {n}, {args.seeds} seeds; load average before: {os.getloadavg()[0]:.2f}")
    start = time.perf_counter()
    names: list[str] = []
    runs = []
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    for s in seeds:
        names, r = one_seed(environment(args.env, gap, s), s, n, calibration.sigma, calibration.first_epoch,
                            radius, at, args.epochs, args.scales)
        runs.append(r)
    stacked = np.stack(runs)
    if args.save is not None:
        np.savez(args.save, names=np.array(names), at=np.array(at), seeds=np.array(seeds), regret=stacked)
    print_table(names, at, stacked)
    print(f"({time.perf_counter() - start:.0f} s; load average after: {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
