"""Throughput of the contextual learners beside NumPy and numba loops of the same algorithms.

Each learner runs in ``dp.simulate`` on its environment and, beside it, in
a loop written as a user would write it from the learner's docstring and
the paper behind it: the same update rule, the same epoch schedule, the
same noise scale (floating-point Gaussian noise from ``np.random`` of the
library's sigma; the library draws its default exact lattice noise of that
scale) and the same confidence radius, with the constants read from the
library's privacy layer (``learner.calibration``, ``learner.radius`` and
the functions of ``dpbandits.privacy``) so that both sides run one
algorithm.

Workloads (one seed, one core):

- linear, Shariff & Sheffet 2018 App. D.2: ``ShariffSheffetEnv(d=5, k=25)``,
  gap 0.1, +-1 rewards. ``JointDPLinUCB(calibration="tight",
  counter="epoch")`` at epsilon = 1, delta = 0.1 (the epoch releases and
  adaptive radius of ``dpbandits.privacy.epoch``); ``ReweightedLinUCB`` and
  ``JointDPReweightedLinUCB`` (epsilon = 1, delta = 1e-6) with
  ``beta_scale=0.01`` (as ``dpbandits.experiments.linear_privacy_cost``).
- logistic: ``LogisticContextualEnv(d=5, k=25)``, gap 0.1, scale 2.
  ``LogisticUCB`` (``beta_scale=0.01``), ``LogisticThompsonSampling``
  (``v=0.5``), ``ReweightedLogisticUCB``, ``JointDPReweightedLogisticUCB``
  and ``LocalDPReweightedLogisticUCB`` (epsilon = 1, delta = 1e-6,
  ``beta_scale=0.01``).

The peers. Every learner but the two online logistic ones plays a policy
that is fixed between two releases (an epoch), so the peers play each
epoch with that policy and post-process the release at its end in NumPy
(the epoch's statistic summed over its rows at once). The NumPy peer plays
the rounds in a NumPy loop (decision set by rejection, scores by two small
matrix products); the numba peer plays them in one ``numba.njit`` loop over
the epoch (environment included, numba's ``np.random``) and keeps the
NumPy release. LogisticUCB and LogisticThompsonSampling update after every
round (Sherman-Morrison updates of A^-1 and V^-1, the Newton step); their
numba peer is the whole run in one ``numba.njit`` loop.

Timing: CPU seconds of the process (``time.process_time``) around each
run, environment included; rounds per CPU-second, median of ``--repeats``
interleaved runs (library, NumPy, numba, library, ...); the ratio is the
library's median over the peer's. Slow peers run a prefix of the library's
horizon (``--numpy-rounds``) with the constants of the library's horizon:
rounds per second is per round.

Agreement: before timing, every learner and its NumPy peer run ``--check-
seeds`` seeds at ``--check-rounds``; their mean cumulative pseudo-regret
must agree within 4 standard errors of the difference (sqrt(s_a^2 / n +
s_b^2 / n), s the standard deviations over the seeds), or the script exits
with status 1. The numba peers play the same loops and are checked too.

Ties. Until the first release the epoch learners' policy is theta = 0 with
the identity matrix, so every unit action of a decision set scores the
same up to the rounding of ||x||: the library's engines then choose a row
uniformly at random (from a seeded stream of their own, not the noise
generator), and so do the peers.

Run from the repository root (needs numba for the numba column:
``pip install "dpbandits[bench]"``):

    python3 benches/compare_contextual.py             # a few minutes
    python3 benches/compare_contextual.py --quick     # seconds
    python3 benches/compare_contextual.py --help
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core for the NumPy peers too

import numpy as np
from compare_linucb import K, decision_set  # App. D's decision sets (d = 5, K = 25, gap 0.1), by rejection

import dpbandits as dp
from dpbandits.privacy.epoch import epoch_ends
from dpbandits.privacy.reweighted import non_private_constants
from dpbandits.privacy.reweighted_glm import glm_reward_chi, ucb_glm_width

D, GAP, OPTIMAL_REWARD, SCALE = 5, 0.1, 0.75, 2.0
BETA_SCALE = 0.01  # the reweighted learners and LogisticUCB, as in linear_privacy_cost
TS_SCALE = 0.5

LINEAR, LOGISTIC = 0, 1


# --------------------------------------------------------------------------
# Environments (App. D's decision sets; +-1 or logistic rewards)
# --------------------------------------------------------------------------


def mu(z: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-z))


def unit_theta(rng: np.random.Generator) -> np.ndarray:
    theta = rng.standard_normal(D)
    return theta / np.linalg.norm(theta)


def reward_and_regret(kind: int, mean: float, rng: np.random.Generator) -> tuple[float, float]:
    if kind == LINEAR:
        return (1.0 if rng.random() < 0.5 * (1.0 + mean) else -1.0), OPTIMAL_REWARD - mean
    p = mu(SCALE * mean)
    return (1.0 if rng.random() < p else 0.0), mu(SCALE * OPTIMAL_REWARD) - p


def play_numpy(
    policy: tuple[np.ndarray, np.ndarray, float], theta_star: np.ndarray, n: int, kind: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, float]:
    """n rounds of the fixed UCB <theta, x> + beta ||F x|| (F = C^-1, V = C C^T):
    the played rows, their rewards and the pseudo-regret."""
    theta, f, beta = policy
    # theta = 0 and F = I (before the first release): every unit row scores
    # beta exactly, and the rounding of ||x|| is no tie rule (it favours the
    # optimal row, whose norm rounds differently): a uniform choice.
    tie = not theta.any() and np.array_equal(f, np.eye(D))
    xs, ys, regret = np.empty((n, D)), np.empty(n), 0.0
    for t in range(n):
        actions, means = decision_set(theta_star, rng)
        if tie:
            i = int(rng.integers(K))
        else:
            w = actions @ f.T
            i = int(np.argmax(actions @ theta + beta * np.sqrt((w * w).sum(axis=1))))
        y, r = reward_and_regret(kind, float(means[i]), rng)
        xs[t], ys[t] = actions[i], y
        regret += r
    return xs, ys, regret


# --------------------------------------------------------------------------
# Epoch learners: a policy fixed for an epoch, a release at its end
# --------------------------------------------------------------------------


def factor(v: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(theta-solver pieces) C and F = C^-1 of V = C C^T, or None if V is not positive definite."""
    try:
        c = np.linalg.cholesky(v)
    except np.linalg.LinAlgError:
        return None
    return c, np.linalg.inv(c)


class EpochLinUCB:
    """JointDPLinUCB(counter="epoch"): epoch k's rows z z^T (z = (x, y)) summed
    and released once with (Z + Z^T)/sqrt(2), Z_ij ~ N(0, sigma^2); V = the
    released block + c_k I, c_k = B_N sqrt(k) + rho; beta_t = the log-det
    radius at V plus min(S sqrt(rho) + S min(sqrt(2 B_N), 2 B_N / sqrt(lmin))
    + B_b / sqrt(lmin), (B_w + c_k S) / sqrt(lmin)) (dpbandits.privacy.epoch)."""

    kind = LINEAR

    def __init__(self, learner: Any, rng: np.random.Generator, beta_scale: float = 1.0) -> None:
        self.c, self.rad, self.rng = learner.calibration, learner.radius, rng
        ends = epoch_ends(learner.horizon, self.c.first_epoch, self.c.ratio)
        self.lengths = np.diff([0, *ends]).tolist()
        self.release = np.zeros((D + 1, D + 1))
        self.k = 0
        self.last_good: tuple[np.ndarray, np.ndarray] | None = None

    def policy(self) -> tuple[np.ndarray, np.ndarray, float]:
        c, root = self.c, math.sqrt(self.k)
        b_n, b_b, b_w = c.op_bound * root, c.vec_bound * root, c.mixed_bound * root
        shift = b_n + c.ridge
        v = self.release[:D, :D] + shift * np.eye(D)
        u = self.release[:D, D]
        if factor(v) is not None:
            self.last_good = v, u
        elif self.last_good is not None:
            v, u = self.last_good
        else:
            v, u = shift * np.eye(D), np.zeros(D)
        chol, f = factor(v)  # type: ignore[misc]
        lmin = float(np.linalg.eigvalsh(v)[0])
        log_det = 2.0 * float(np.log(np.diag(chol)).sum())
        lam = math.sqrt(lmin)
        split = c.S * (math.sqrt(c.ridge) + min(math.sqrt(2.0 * b_n), 2.0 * b_n / lam)) + b_b / lam
        beta = self.rad.noise_sd * math.sqrt(max(0.0, self.rad.log_offset + log_det)) + min(
            split, (b_w + c.S * shift) / lam
        )
        return np.linalg.solve(v, u), f, beta

    def end_epoch(self, xs: np.ndarray, ys: np.ndarray) -> None:
        z = np.column_stack([xs, ys])
        noise = self.rng.normal(0.0, self.c.sigma, (D + 1, D + 1))
        self.release += z.T @ z + (noise + noise.T) / math.sqrt(2.0)
        self.k += 1


def norm_bound(m: np.ndarray) -> float:
    """min(Frobenius, largest absolute row sum): an upper bound on the largest eigenvalue."""
    return min(float(np.sqrt((m * m).sum())), float(np.abs(m).sum(axis=1).max()))


class _Reweighted:
    """What the information-weighted learners share (Chen, Li, Rakhlin &
    Simchi-Levi 2025, as reconstructed in dpbandits.privacy.reweighted and
    .reweighted_glm): epochs of n_0 2^k rewards, the rows whitened by the
    released H = L L^T with weights w = min(1, gamma / ||L^-1 x||^2),
    gamma = d / n_k, one release of the upper triangle and the vector with
    i.i.d. N(0, sigma^2) noise per entry."""

    kind = LINEAR

    def __init__(self, learner: Any, rng: np.random.Generator, beta_scale: float) -> None:
        self.rng, self.beta_scale = rng, beta_scale
        n0, horizon = learner.first_epoch, learner.horizon
        cal = getattr(learner, "calibration", None)
        self.sigma = 0.0 if cal is None else cal.sigma
        self.op = 0.0 if cal is None else cal.op_bound
        self.chi = 0.0 if cal is None else cal.chi_bound
        self.reward_chi = self.non_private_chi(learner) if cal is None else cal.reward_chi
        self.lengths, total = [], 0
        while total < horizon:
            self.lengths.append(min(n0 << len(self.lengths), horizon - total))
            total += self.lengths[-1]
        self.full = [n0 << k for k in range(len(self.lengths))]
        self.epoch = 0
        self.h = n0 / D * np.eye(D)
        self.theta, self.f, self.beta = np.zeros(D), np.eye(D), 1.0
        self.iu = np.triu_indices(D)

    def non_private_chi(self, learner: Any) -> float:
        raise NotImplementedError

    def policy(self) -> tuple[np.ndarray, np.ndarray, float]:
        return self.theta, self.f, self.beta

    def whitened(self, xs: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
        """u = sqrt(w / gamma) L^-1 x (renormalized where rounding left ||u|| > 1) and w."""
        u = np.linalg.solve(self.lh, xs.T).T
        lev = (u * u).sum(axis=1)
        w = np.where(lev > gamma, gamma / np.maximum(lev, 1e-300), 1.0)
        u *= np.sqrt(w / gamma)[:, None]
        n2 = (u * u).sum(axis=1)
        big = n2 > 1.0
        u[big] /= np.sqrt(n2[big])[:, None]
        return u, w

    def noisy(self, a: np.ndarray, b: np.ndarray, draws: int) -> tuple[np.ndarray, np.ndarray]:
        """The release: (upper triangle of a, b) plus ``draws`` N(0, sigma^2) draws
        per entry, as the symmetric matrix and the vector."""
        m = len(self.iu[0]) + D
        z = self.rng.normal(0.0, self.sigma, (draws, m)).sum(axis=0) if self.sigma > 0.0 else np.zeros(m)
        zm = np.zeros((D, D))
        zm[self.iu] = z[: m - D]
        return a + zm + np.triu(zm, 1).T, b + z[m - D:]

    def end_epoch(self, xs: np.ndarray, ys: np.ndarray) -> None:
        n = self.full[self.epoch]
        self.epoch += 1
        if len(ys) < n:  # the horizon cut the epoch: never released
            return
        self.lh = np.linalg.cholesky(self.h)
        self.release(xs, ys, D / n, n)  # gamma_k = c d / n_k, c = 1

    def release(self, xs: np.ndarray, ys: np.ndarray, gamma: float, n: int) -> None:
        raise NotImplementedError

    def double_h(self) -> None:
        self.h = 2.0 * self.h


class ReweightedLin(_Reweighted):
    """ReweightedLinUCB / JointDPReweightedLinUCB: G = L (gamma A) L^T,
    u = L sqrt(gamma) b, Lambda = G + rho I (rho = 2 N_b + 1, N_b = gamma op
    lmax(H)), the epoch radius r = chi_r + (sqrt(gamma lmax H) chi + (N_b +
    rho) S) / sqrt(lmin Lambda), the UCB pooled over the last two epochs
    with radius sqrt(r_k^2 + r_{k-1}^2), H <- 2 (G + (N_b + 1) I)."""

    prev: tuple[np.ndarray, np.ndarray, float] | None = None
    S = 1.0

    def non_private_chi(self, learner: Any) -> float:
        return non_private_constants(D, learner.horizon, alpha=None, sigma_r=1.0, first_epoch=learner.first_epoch)

    def release(self, xs: np.ndarray, ys: np.ndarray, gamma: float, n: int) -> None:
        u, w = self.whitened(xs, gamma)
        a, b = self.noisy(u.T @ u, u.T @ (np.sqrt(w) * ys), 1)
        a, b = gamma * a, math.sqrt(gamma) * b
        lh = self.lh
        ub, g = lh @ b, lh @ a @ lh.T
        h_bound = norm_bound(self.h)
        n_bound = gamma * self.op * h_bound
        rho = 2.0 * n_bound + 1.0
        lam = g + rho * np.eye(D)
        h = 2.0 * (g + (n_bound + 1.0) * np.eye(D))
        fl = factor(lam)
        if fl is None or factor(h) is None or not np.isfinite(ub).all():
            self.double_h()
            return
        lmin_inv = norm_bound(np.linalg.inv(lam))
        noise_terms = math.sqrt(gamma * h_bound) * self.chi + (n_bound + rho) * self.S
        radius = self.reward_chi + noise_terms * math.sqrt(lmin_inv)
        both, u_both, r2 = lam, ub, radius * radius
        if self.prev is not None:
            both, u_both, r2 = lam + self.prev[0], ub + self.prev[1], r2 + self.prev[2] ** 2
        _, f = factor(both)  # type: ignore[misc]
        self.theta, self.f, self.beta = np.linalg.solve(both, u_both), f, self.beta_scale * math.sqrt(r2)
        self.h, self.prev = h, (lam, ub, radius)


class ReweightedLogistic(_Reweighted):
    """ReweightedLogisticUCB and its joint / local private versions: per row
    p = mu(<x, theta_k>), q = 4 p (1 - p), the statistic (q u u^T,
    sqrt(w) (y - p) u); V = gamma A + rho I (rho = gamma (1 + op)), the
    Newton step theta <- Pi_S(theta + 4 L^-T V^-1 sqrt(gamma) b), Lambda =
    L V L^T / 4, beta = chi_r + 2 ((gamma op + rho) S sqrt(||H||_F) / 4 +
    sqrt(gamma) chi) sqrt(||V^-1||_F), H <- 2 L V L^T. Local model: every
    row carries its own draw (the sums n_k of them; op, chi times sqrt(n_k))."""

    kind = LOGISTIC
    local = False
    S = 2.0

    def non_private_chi(self, learner: Any) -> float:
        return glm_reward_chi(D, learner.horizon, alpha=None, first_epoch=learner.first_epoch)

    def release(self, xs: np.ndarray, ys: np.ndarray, gamma: float, n: int) -> None:
        p = mu(xs @ self.theta)
        q = np.minimum(4.0 * p * (1.0 - p), 1.0)
        u, w = self.whitened(xs, gamma)
        a, b = self.noisy((u * q[:, None]).T @ u, u.T @ (np.sqrt(w) * (ys - p)), n if self.local else 1)
        spread = math.sqrt(n) if self.local else 1.0
        op, chi = self.op * spread, self.chi * spread
        rho = gamma * (1.0 + op)
        v = gamma * a + rho * np.eye(D)
        b = math.sqrt(gamma) * b
        fv = factor(v)
        if fv is None or not np.isfinite(b).all():
            self.double_h()
            return
        lh = self.lh
        theta = self.theta + 4.0 * np.linalg.solve(lh.T, np.linalg.solve(v, b))
        norm = float(np.linalg.norm(theta))
        if norm > self.S:
            theta *= self.S / norm
        full = lh @ v @ lh.T
        lam = full / 4.0
        v_inv = np.linalg.inv(v)
        bias = 2.0 * ((gamma * op + rho) * self.S * math.sqrt(float(np.sqrt((self.h**2).sum()))) / 4.0
                      + math.sqrt(gamma) * chi) * math.sqrt(float(np.sqrt((v_inv**2).sum())))
        fl = factor(lam)
        if fl is None or factor(2.0 * full) is None:
            self.double_h()
            return
        self.theta, self.f, self.beta = theta, fl[1], self.beta_scale * (self.reward_chi + bias)
        self.h = 2.0 * full


class LocalReweightedLogistic(ReweightedLogistic):
    local = True


def run_epochs(peer: Any, n: int, seed: int, play: Callable[..., Any]) -> float:
    """n rounds of an epoch learner's peer: each epoch played with its fixed
    policy by ``play``, then released; returns the pseudo-regret."""
    rng = np.random.default_rng(seed)
    theta_star = unit_theta(rng)
    regret, done = 0.0, 0
    for length in peer.lengths:
        m = min(length, n - done)
        if m <= 0:
            break
        xs, ys, r = play(peer.policy(), theta_star, m, peer.kind, rng)
        regret += r
        done += m
        if m == length:
            peer.end_epoch(xs, ys)
    return regret


# --------------------------------------------------------------------------
# Online logistic learners (UCB-GLM; Laplace Thompson sampling)
# --------------------------------------------------------------------------


def online_logistic_numpy(rule: str, learner: Any, n: int, seed: int) -> float:
    """A <- A + q x x^T (q = max(p (1 - p), 1e-12)), theta <- theta + A^-1 x (y - p),
    A^-1 and V^-1 by Sherman-Morrison. UCB: <theta, x> + beta_t ||x||_{V^-1},
    beta_t = beta_scale (sigma / kappa) sqrt((d / 2) ln(1 + 2 t / d) + ln n);
    Thompson: <theta~, x>, theta~ ~ N(theta, v^2 A^-1)."""
    rng = np.random.default_rng(seed)
    theta_star = unit_theta(rng)
    width, log_inv_alpha = ucb_glm_width(2.0, 1.0), math.log(learner.horizon)
    a_inv, v_inv, theta = np.eye(D), np.eye(D), np.zeros(D)
    regret = 0.0
    for t in range(n):
        actions, means = decision_set(theta_star, rng)
        if rule == "ucb":
            beta = BETA_SCALE * width * math.sqrt(D / 2.0 * math.log1p(2.0 * t / D) + log_inv_alpha)
            quad = ((actions @ v_inv) * actions).sum(axis=1)
            i = int(np.argmax(actions @ theta + beta * np.sqrt(np.maximum(quad, 0.0))))
        else:
            draw = theta + TS_SCALE * (np.linalg.cholesky(a_inv) @ rng.standard_normal(D))
            i = int(np.argmax(actions @ draw))
        x = actions[i]
        y, r = reward_and_regret(LOGISTIC, float(means[i]), rng)
        regret += r
        p = mu(x @ theta)
        q = max(p * (1.0 - p), 1e-12)
        ax = a_inv @ x
        a_inv -= np.outer(ax, ax) * (q / (1.0 + q * (x @ ax)))
        if rule == "ucb":
            vx = v_inv @ x
            v_inv -= np.outer(vx, vx) / (1.0 + x @ vx)
        theta += (a_inv @ x) * (y - p)
    return regret


# --------------------------------------------------------------------------
# numba versions of the loops
# --------------------------------------------------------------------------


def numba_kernels() -> dict[str, Callable[..., Any]] | None:
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(inline="always")
    def nb_decision_set(theta, actions, means):  # type: ignore[no-untyped-def]
        lo, hi = -OPTIMAL_REWARD, OPTIMAL_REWARD - GAP
        index = np.random.randint(K)  # noqa: NPY002
        j = 0
        while j < K:
            if j == index:
                j += 1
                continue
            norm, dot = 0.0, 0.0
            for c in range(D):
                g = np.random.standard_normal()  # noqa: NPY002
                actions[j, c] = g
                norm += g * g
            norm = math.sqrt(norm)
            for c in range(D):
                actions[j, c] /= norm
                dot += actions[j, c] * theta[c]
            if lo <= dot <= hi:
                means[j] = dot
                j += 1
        g = np.random.standard_normal(D)  # noqa: NPY002
        g -= (g @ theta) * theta
        g /= math.sqrt(g @ g)
        for c in range(D):
            actions[index, c] = OPTIMAL_REWARD * theta[c] + math.sqrt(1.0 - OPTIMAL_REWARD**2) * g[c]
        means[index] = OPTIMAL_REWARD

    @numba.njit(inline="always")
    def nb_reward(kind, mean):  # type: ignore[no-untyped-def]
        if kind == LINEAR:
            return (1.0 if np.random.random() < 0.5 * (1.0 + mean) else -1.0), OPTIMAL_REWARD - mean  # noqa: NPY002
        p = 1.0 / (1.0 + math.exp(-SCALE * mean))
        best = 1.0 / (1.0 + math.exp(-SCALE * OPTIMAL_REWARD))
        return (1.0 if np.random.random() < p else 0.0), best - p  # noqa: NPY002

    @numba.njit
    def nb_play(theta, f, beta, theta_star, n, kind, seed):  # type: ignore[no-untyped-def]
        np.random.seed(seed)  # noqa: NPY002 (numba supports the legacy generator only)
        actions, means = np.empty((K, D)), np.empty(K)
        xs, ys = np.empty((n, D)), np.empty(n)
        regret = 0.0
        tie = not theta.any()
        for r in range(D):
            for c in range(D):
                tie = tie and f[r, c] == (1.0 if r == c else 0.0)
        for t in range(n):
            nb_decision_set(theta_star, actions, means)
            best, i = -np.inf, 0
            if tie:
                best, i = np.inf, np.random.randint(K)  # noqa: NPY002
            for j in range(K if not tie else 0):
                s, q = 0.0, 0.0
                for r in range(D):
                    s += actions[j, r] * theta[r]
                    w = 0.0
                    for c in range(r + 1):
                        w += f[r, c] * actions[j, c]
                    q += w * w
                s += beta * math.sqrt(q)
                if s > best:
                    best, i = s, j
            y, reg = nb_reward(kind, means[i])
            xs[t], ys[t] = actions[i], y
            regret += reg
        return xs, ys, regret

    @numba.njit
    def nb_online(ucb, n, horizon, seed):  # type: ignore[no-untyped-def]
        np.random.seed(seed)  # noqa: NPY002 (numba supports the legacy generator only)
        theta_star = np.random.standard_normal(D)  # noqa: NPY002
        theta_star /= math.sqrt(theta_star @ theta_star)
        actions, means = np.empty((K, D)), np.empty(K)
        a_inv, v_inv, theta = np.eye(D), np.eye(D), np.zeros(D)
        z = 1.0 / (1.0 + math.exp(-2.0))
        width, log_inv_alpha = 0.5 / (z * (1.0 - z)), math.log(horizon)
        regret = 0.0
        for t in range(n):
            nb_decision_set(theta_star, actions, means)
            if ucb:
                beta = BETA_SCALE * width * math.sqrt(D / 2.0 * math.log1p(2.0 * t / D) + log_inv_alpha)
                scores = actions @ theta + beta * np.sqrt(np.maximum(((actions @ v_inv) * actions).sum(axis=1), 0.0))
            else:
                draw = theta + TS_SCALE * (np.linalg.cholesky(a_inv) @ np.random.standard_normal(D))  # noqa: NPY002
                scores = actions @ draw
            i = int(np.argmax(scores))
            x = actions[i].copy()
            y, reg = nb_reward(LOGISTIC, means[i])
            regret += reg
            p = 1.0 / (1.0 + math.exp(-(x @ theta)))
            q = max(p * (1.0 - p), 1e-12)
            ax = a_inv @ x
            a_inv -= np.outer(ax, ax) * (q / (1.0 + q * (x @ ax)))
            if ucb:
                vx = v_inv @ x
                v_inv -= np.outer(vx, vx) / (1.0 + x @ vx)
            theta += (a_inv @ x) * (y - p)
        return regret

    return {"play": nb_play, "online": nb_online}


# --------------------------------------------------------------------------
# Cases and driver
# --------------------------------------------------------------------------


class Case:
    def __init__(self, name: str, make: Callable[[int], Any], env: Callable[[], Any],
                 peer: type | str) -> None:
        self.name, self.make, self.env, self.peer = name, make, env, peer

    def run_peer(self, learner: Any, n: int, seed: int, kernels: dict[str, Any] | None) -> float:
        if isinstance(self.peer, str):
            if kernels is None:
                return online_logistic_numpy(self.peer, learner, n, seed)
            return float(kernels["online"](self.peer == "ucb", n, learner.horizon, seed))
        rng = np.random.default_rng(seed + 1_000_003)
        peer = self.peer(learner, rng, BETA_SCALE)
        if kernels is None:
            return run_epochs(peer, n, seed, play_numpy)
        play_nb = kernels["play"]

        def play(policy: Any, theta_star: Any, m: int, kind: int, r: np.random.Generator) -> Any:
            theta, f, beta = policy
            return play_nb(theta, np.ascontiguousarray(f), beta, theta_star, m, kind, int(r.integers(2**31)))

        return run_epochs(peer, n, seed, play)


def cases() -> list[Case]:
    lin = lambda: dp.ShariffSheffetEnv(D, k=K, gap=GAP)  # noqa: E731
    logi = lambda: dp.LogisticContextualEnv(D, k=K, gap=GAP, scale=SCALE)  # noqa: E731
    joint = {"epsilon": 1.0, "delta": 1e-6, "beta_scale": BETA_SCALE}
    return [
        Case("JointDPLinUCB epoch", lambda n: dp.JointDPLinUCB(
            D, n, 1.0, 0.1, calibration="tight", counter="epoch"), lin, EpochLinUCB),
        Case("ReweightedLinUCB", lambda n: dp.ReweightedLinUCB(D, n, beta_scale=BETA_SCALE), lin, ReweightedLin),
        Case("JointDPReweightedLinUCB", lambda n: dp.JointDPReweightedLinUCB(D, n, **joint), lin, ReweightedLin),
        Case("LogisticUCB", lambda n: dp.LogisticUCB(D, n, beta_scale=BETA_SCALE), logi, "ucb"),
        Case("LogisticThompsonSampling", lambda n: dp.LogisticThompsonSampling(D, n, v=TS_SCALE), logi, "ts"),
        Case("ReweightedLogisticUCB", lambda n: dp.ReweightedLogisticUCB(D, n, beta_scale=BETA_SCALE), logi,
             ReweightedLogistic),
        Case("JointDPReweightedLogisticUCB", lambda n: dp.JointDPReweightedLogisticUCB(D, n, **joint), logi,
             ReweightedLogistic),
        Case("LocalDPReweightedLogisticUCB", lambda n: dp.LocalDPReweightedLogisticUCB(D, n, **joint), logi,
             LocalReweightedLogistic),
    ]


def library_regret(case: Case, n: int, seeds: list[int]) -> list[float]:
    res = dp.simulate(case.make(n), case.env(), seeds=seeds, record_every=n)
    return [float(r) for r in res.regret[:, -1]]


def cpu_rate(run: Callable[[], Any], n: int) -> float:
    start = time.process_time()
    run()
    return n / (time.process_time() - start)


def agree(a: list[float], b: list[float]) -> tuple[float, bool]:
    """(difference of the means in standard errors of the difference, within 4)."""
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    z = (statistics.mean(a) - statistics.mean(b)) / se if se > 0 else 0.0
    return z, abs(z) <= 4.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200_000, help="library (and numba) horizon")
    parser.add_argument("--numpy-rounds", type=int, default=10_000, help="NumPy rounds (a prefix)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved timed runs per side")
    parser.add_argument("--check-rounds", type=int, default=3_000, help="horizon of the agreement check")
    parser.add_argument("--check-seeds", type=int, default=12, help="seeds of the agreement check")
    parser.add_argument("--only", default="", help="run the learners whose name contains this")
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.numpy_rounds, args.repeats, args.check_rounds, args.check_seeds = 20_000, 1_000, 3, 1_500, 8
    if not (0 < args.numpy_rounds <= args.rounds and args.repeats >= 1 and args.check_seeds >= 2):
        parser.error("need 0 < --numpy-rounds <= --rounds, --repeats >= 1, --check-seeds >= 2")
    kernels = numba_kernels()
    if kernels is not None:
        # Compile outside the timed runs.
        for case in cases()[:1] + cases()[3:5]:
            case.run_peer(case.make(400), 400, 0, kernels)
    selected = [c for c in cases() if args.only in c.name]
    load = os.getloadavg()
    print(f"d={D}, K={K}, gap={GAP}; numpy {np.__version__}, dpbandits {dp.__version__}, "
          f"numba {'absent' if kernels is None else __import__('numba').__version__}")
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n")

    print(f"agreement: mean pseudo-regret at T = {args.check_rounds:,} over {args.check_seeds} seeds "
          "(z = difference / its standard error; |z| <= 4 required)")
    seeds = list(range(args.check_seeds))
    failed = []
    for case in selected:
        lib = library_regret(case, args.check_rounds, seeds)
        row = f"  {case.name:<30} dpbandits {statistics.mean(lib):8.1f}"
        for label, kern in (("numpy", None), ("numba", kernels)):
            if label == "numba" and kernels is None:
                continue
            peer = [case.run_peer(case.make(args.check_rounds), args.check_rounds, s, kern) for s in seeds]
            z, ok = agree(lib, peer)
            row += f"   {label} {statistics.mean(peer):8.1f} (z = {z:+.2f})"
            if not ok:
                failed.append(f"{case.name} vs {label}")
        print(row)
    if failed:
        print("\nDISAGREEMENT: " + ", ".join(failed))
        sys.exit(1)

    print(f"\nrounds per CPU-second, median of {args.repeats} interleaved runs; dpbandits and numba "
          f"T = {args.rounds:,}, NumPy a prefix of {args.numpy_rounds:,} rounds")
    head = f"{'learner':<30}{'dpbandits':>12}{'numpy':>10}{'numba':>10}{'vs numpy':>10}{'vs numba':>10}"
    print(head)
    for case in selected:
        rates: dict[str, list[float]] = {"lib": [], "numpy": [], "numba": []}
        for rep in range(args.repeats):
            env, learner = case.env(), case.make(args.rounds)
            rates["lib"].append(cpu_rate(partial(dp.simulate, learner, env, seeds=[rep], record_every=args.rounds),
                                         args.rounds))
            rates["numpy"].append(cpu_rate(partial(case.run_peer, learner, args.numpy_rounds, rep, None),
                                           args.numpy_rounds))
            if kernels is not None:
                rates["numba"].append(cpu_rate(partial(case.run_peer, learner, args.rounds, rep, kernels),
                                               args.rounds))
        med = {k: statistics.median(v) if v else float("nan") for k, v in rates.items()}
        print(f"{case.name:<30}{med['lib']:>12,.0f}{med['numpy']:>10,.0f}{med['numba']:>10,.0f}"
              f"{med['lib'] / med['numpy']:>9.1f}x{med['lib'] / med['numba']:>9.1f}x")
    load = os.getloadavg()
    print(f"\nload average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
