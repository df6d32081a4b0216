"""Best-arm identification against numba: every BAI learner's Monte-Carlo
path (``learner.simulate``, Rust, replicates in parallel) against the same
algorithm written with numba from the papers, as a user would without the
library, on the same Bernoulli instance; samples (rewards) per CPU-second.

Fixed confidence (dpbandits.learners.bai; delta = 0.01, K = 5 arms
(0.75, 0.625, 0.5, 0.375, 0.25) as in ``benches/bai_simulate.py``, and
K = 10 arms evenly spaced from 0.75 to 0.25 for TopTwoBAI and DPTopTwo):

- ``TopTwoBAI``: EB leader, TCI challenger argmin_b GLR(a, b) + ln N_b
  (Jourdan et al. 2022), leader with probability 1/2, stop when every
  GLR(a, b) >= c0 + 3 (ln(1 + ln N_a) + ln(1 + ln N_b)) (Kaufmann & Koolen
  2021, Thm 7);
- ``CTBTT``: the same Top Two on randomised-response bits (flip
  probability 1 / (1 + e^eps), Azize et al., the local-DP Top Two);
- ``AdaPTT``: doubling episodes with forgetting, Laplace(1 / eps) on each
  episode sum, private-UCB leader, Gaussian challenger with
  kappa_t = 1 / (1 + sqrt t) (Azize et al. 2023), and the shifted GLR stop
  on the last episodes (thresholds per episode index, noise radii);
- ``AdaPTTStar``: AdaP-TT's episodes and leader, challenger and stop on
  the Chernoff exponent of a mean plus one Laplace draw, W(a, b) >= c(s);
- ``DPTopTwo``: geometric batches (first ceil(128 / eps), ratio 1.7, no
  forgetting), EB leader, Chernoff-cost challenger, the
  information-directed leader probability D_a / (D_a + D_b) at the
  minimiser z* (You et al. 2023) and the Chernoff stop W(a, b) >= c(j_a + j_b).

Fixed budget (dpbandits.learners.bai_fixed_budget; halving phases,
M = ceil(log2 k), T_p = T / M round robin over the phase's arms):
``SequentialHalving`` (no noise) with T = 300 and ``DPBAI`` (Laplace(1 / eps)
on each phase sum, Chen et al. 2024, Algorithm 1) with T = 600 on the
K = 5 instance, ``DPBAI`` with T = 20000 on 32 arms evenly spaced from 0.8
to 0.2, and ``LinearDPBAI`` with T = 6000 on 6 arms in R^2 (its docstring's
instance; each phase pulls a Max-Det collection, Definition 3.1: greedy
pivoted Gram-Schmidt, then exchanges while a coefficient exceeds 1).

What the peer takes from the library: the instances and the stopping
thresholds, which are documented public formulas of
:mod:`dpbandits.privacy.bai` (``glr_threshold``: Kaufmann & Koolen 2021,
Thm 7; ``forgetting_thresholds`` and ``noise_radii``: the union bounds over
episode indices of AdaP-TT's shifted rule; ``chernoff_pair_thresholds``:
equation (C5)); everything else (sampling rules, batch schedules, the
Chernoff exponent (C1) by safeguarded Newton, its infimum over z (C3) by
regula falsi on the derivative, the Max-Det collection) is written here.
The peer draws Laplace noise in floating point (``np.random.laplace``);
the library is timed with its default exact discrete Laplace on a fine
lattice (same law up to the lattice step) and, for the learners with a
``sampler``, also with ``sampler="float"`` (the peer's noise). The peer
runs the replicates serially on one thread, the library on its Rayon
pool: CPU seconds (``time.process_time``, every thread) make the two
comparable. The peer draws one uniform per
reward, as the library does (a Binomial draw per fixed-budget phase sum
would be faster for both and is not what is timed).

Per configuration: one warm-up (numba compilation outside the timing),
then ``--repeats`` interleaved rounds of timed runs (each side once a
round) of ``--reps`` replicates (fixed budget: ``--budget-reps``) on
fresh seeds; the median rates and their
ratios. The check that the peer is the same algorithm pools the timed
replicates (``--repeats`` x ``--reps`` per side; each library side
against the peer): fixed confidence, the mean stopping time and the
error rate; fixed budget, the error rate; a difference beyond 4 standard
errors of the difference makes the script exit with status 1. Run:
``PYTHONPATH=python nice -n 10 python3 benches/compare_bai.py``.
"""

# numba compiles numpy's legacy global generator only (np.random.seed / random / laplace):
# ruff: noqa: NPY002

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

import dpbandits as dp
from dpbandits.privacy.bai import chernoff_pair_thresholds, forgetting_thresholds, glr_threshold, noise_radii

MEANS5 = (0.75, 0.625, 0.5, 0.375, 0.25)
MEANS10 = tuple(float(m) for m in np.linspace(0.75, 0.25, 10))
MEANS32 = tuple(float(m) for m in np.linspace(0.8, 0.2, 32))
DELTA = 0.01
MAX_SAMPLES = 10**8
LINEAR_ARMS = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [0.5, 0.2], [0.2, 0.5], [0.9, 0.1]])
LINEAR_THETA = np.array([0.6, 0.3])


# ---------------------------------------------------------------------------
# Shared pieces of the peer


@njit(cache=False)
def _kl(x: float, y: float) -> float:
    y = min(max(y, 1e-15), 1.0 - 1e-15)
    v = 0.0
    if x > 0.0:
        v += x * math.log(x / y)
    if x < 1.0:
        v += (1.0 - x) * math.log((1.0 - x) / (1.0 - y))
    return max(v, 0.0)


@njit(cache=False)
def _glr(x: float, na: float, y: float, nb: float) -> float:
    """Bernoulli GLR of two means x > y over na, nb samples (0 when x <= y)."""
    if x <= y:
        return 0.0
    z = (na * x + nb * y) / (na + nb)
    return na * _kl(x, z) + nb * _kl(y, z)


@njit(cache=False)
def _tie_rank(k: int) -> np.ndarray:
    order = np.random.permutation(k)
    rank = np.empty(k, np.int64)
    for i in range(k):
        rank[order[i]] = i
    return rank


@njit(cache=False)
def _best(m: np.ndarray, rank: np.ndarray) -> int:
    best = 0
    for a in range(1, m.size):
        if m[a] > m[best] or (m[a] == m[best] and rank[a] < rank[best]):
            best = a
    return best


@njit(cache=False)
def _waiting(batches: np.ndarray, selected: np.ndarray, rank: np.ndarray) -> int:
    """The arm without a release with the fewest selections (-1: none)."""
    arm = -1
    for a in range(batches.size):
        if batches[a] == 0 and (
            arm < 0 or selected[a] < selected[arm] or (selected[a] == selected[arm] and rank[a] < rank[arm])
        ):
            arm = a
    return arm


@njit(cache=False)
def _deviation(m: float, n: float, j: float, z: float, b: float) -> tuple[float, float]:
    """D(m; n, j, z) = sup_{|s| < 1/b} s n m - n ln(1 - z + z e^s) + j ln(1 - b^2 s^2)
    (the Chernoff exponent of a mean of n Bernoulli rewards plus j Laplace(b)
    draws) by Newton's method safeguarded by bisection on the concave
    exponent, and its derivative in z at the maximiser (envelope theorem)."""
    if m == z:
        return 0.0, 0.0
    edge = (1.0 / b) * (1.0 - 1e-12)
    up = m > z
    lo, hi = (0.0, edge) if up else (-edge, 0.0)
    mc = min(max(m, 1e-12), 1.0 - 1e-12)
    zc = min(max(z, 1e-12), 1.0 - 1e-12)
    s = math.log(mc / (1.0 - mc)) - math.log(zc / (1.0 - zc))
    if not (lo < s < hi):
        s = 0.5 * (lo + hi)
    for _ in range(100):
        if z <= 0.0:
            p = 0.0
        elif z >= 1.0:
            p = 1.0
        elif s > 0.0:
            p = z / (z + (1.0 - z) * math.exp(-s))
        else:
            es = z * math.exp(s)
            p = es / (1.0 - z + es)
        u = b * s
        q = 1.0 - u * u
        d1 = n * m - n * p - j * 2.0 * b * u / q
        d2 = -n * p * (1.0 - p) - j * 2.0 * b * b * (1.0 + u * u) / (q * q)
        if d1 > 0.0:
            lo = s
        else:
            hi = s
        if d2 < 0.0 and d1 * d1 <= -2e-12 * d2:
            break
        nxt = s - d1 / d2 if d2 < 0.0 else 0.5 * (lo + hi)
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        if abs(nxt - s) <= 1e-13 * (1.0 + abs(s)):
            s = nxt
            break
        s = nxt
    if z <= 0.0:
        psi = 0.0
    elif z >= 1.0:
        psi = s
    else:
        psi = math.log1p(z * math.expm1(s))
    u = b * s
    v = s * n * m - n * psi + j * math.log1p(-u * u)
    if v <= 0.0:
        return 0.0, 0.0
    return v, -n * math.expm1(s) / (1.0 + z * math.expm1(s))


@njit(cache=False)
def _pair_cost(ma: float, na: float, ja: float, mb: float, nb: float, jb: float, b: float) -> float:
    """D_a + D_b at the weighted mean z (the challenger's cost; an upper
    bound of the infimum over z)."""
    if ma <= mb:
        return 0.0
    z = (na * ma + nb * mb) / (na + nb)
    return _deviation(ma, na, ja, z, b)[0] + _deviation(mb, nb, jb, z, b)[0]


@njit(cache=False)
def _pair_inf(ma: float, na: float, ja: float, mb: float, nb: float, jb: float, b: float) -> tuple[float, float]:
    """(D_a(z*), D_b(z*)) at the minimiser z* over [m_b, m_a] of the convex
    D_a + D_b: the root of its derivative by regula falsi (Illinois)."""
    lo, hi = mb, ma
    tol = 1e-10 * (hi - lo)
    da, sa = _deviation(ma, na, ja, lo, b)
    db, sb = _deviation(mb, nb, jb, lo, b)
    glo = sa + sb
    if glo >= 0.0:
        return da, db
    da, sa = _deviation(ma, na, ja, hi, b)
    db, sb = _deviation(mb, nb, jb, hi, b)
    ghi = sa + sb
    if ghi <= 0.0:
        return da, db
    side = 0
    for _ in range(100):
        z = hi - ghi * (hi - lo) / (ghi - glo)
        if not (lo < z < hi):
            z = 0.5 * (lo + hi)
        da, sa = _deviation(ma, na, ja, z, b)
        db, sb = _deviation(mb, nb, jb, z, b)
        g = sa + sb
        if g < 0.0:
            lo, glo = z, g
            if side == -1:
                ghi *= 0.5
            side = -1
        elif g > 0.0:
            hi, ghi = z, g
            if side == 1:
                glo *= 0.5
            side = 1
        else:
            break
        if hi - lo <= tol:
            break
    return da, db


@njit(cache=False)
def _outputs(reps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per replicate: stopping time, recommendation, whether the rule fired."""
    return np.zeros(reps, np.int64), np.zeros(reps, np.int64), np.zeros(reps, np.bool_)


@njit(cache=False)
def _arm_counters(k: int, first: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A replicate's fresh per-arm counters: selections, rewards, the count
    that ends the open batch, batches released, the open batch's sum."""
    return np.zeros(k), np.zeros(k, np.int64), np.full(k, first, np.int64), np.zeros(k, np.int64), np.zeros(k)


@njit(cache=False)
def _ucb_leader(m: np.ndarray, last_len: np.ndarray, t: int, eps: float, rank: np.ndarray) -> int:
    """AdaP-TT's private-UCB leader: argmax m_a + ln t / (eps s_a) + sqrt(ln t / (2 s_a)),
    s_a the last episode's length."""
    lt = math.log(max(t, 1))
    leader, top = 0, -np.inf
    for a in range(m.size):
        idx = m[a] + lt / (eps * last_len[a]) + math.sqrt(lt / (2.0 * last_len[a]))
        if idx > top or (idx == top and rank[a] < rank[leader]):
            leader, top = a, idx
    return leader


@njit(cache=False)
def _episode_release(arm, obs, end, open_sum, last_len, m, batches, scale):
    """The end of a doubling episode of ``arm`` (ends at counts 1, 2, 4, ...):
    its sum with its own Laplace draw over its length is the arm's mean
    (forgetting)."""
    last_len[arm] = obs[arm] - (end[arm] // 2 if end[arm] > 1 else 0)
    m[arm] = min(max((open_sum[arm] + np.random.laplace(0.0, scale)) / last_len[arm], 0.0), 1.0)
    open_sum[arm] = 0.0
    batches[arm] += 1
    end[arm] = max(obs[arm] + 1, 2 * obs[arm])


@njit(cache=False)
def _chernoff_stop(a, m, n, j, index, scale, thresholds, cost_to_a, known_b, known):
    """W(a, b) >= c(index_a + index_b) for every b != a, W of the statistics
    (mean m, n rewards, j noise draws); the pair (a, known_b) has its
    exponents at z* already in ``known`` (known_b = -1: none); the cost at
    the weighted mean (an upper bound of W) screens first."""
    for b in range(m.size):
        if b == a:
            continue
        sidx = int(index[a] + index[b]) - 2
        if sidx >= thresholds.size or not (m[a] > m[b]):
            return False
        c = thresholds[sidx]
        if cost_to_a[b] < c:
            return False
        if b == known_b:
            w = known[0] + known[1]
        else:
            da, db = _pair_inf(m[a], n[a], j[a], m[b], n[b], j[b], scale)
            w = da + db
        if w < c:
            return False
    return True


# ---------------------------------------------------------------------------
# Fixed-confidence peers (one replicate after another; per replicate the
# stopping time, the recommendation and whether the rule fired)


@njit(cache=False)
def peer_top_two(mu, reps, seed, beta, c0, c1, flip, max_samples):
    """TopTwoBAI (flip = 0) and CTBTT (flip = 1 / (1 + e^eps): each reward's
    bit flipped with that probability before the learner sees it)."""
    np.random.seed(seed)
    k = mu.size
    tau, rec, stopped = _outputs(reps)
    n = np.zeros(k)
    s = np.zeros(k)
    m = np.zeros(k)
    glr = np.zeros(k)
    lnn = np.zeros(k)
    lnln = np.zeros(k)
    for r in range(reps):
        rank = _tie_rank(k)
        order = np.argsort(rank)
        n[:] = 0.0
        s[:] = 0.0
        t = 0
        leader, chal, cached = 0, 1, -1
        stop = False
        while not stop and t < max_samples:
            if t < k:
                arm = order[t]  # initialisation: one reward of each arm, in the tie order
            elif np.random.random() < beta:
                arm = leader
            else:
                arm = chal
            y = 1.0 if np.random.random() < mu[arm] else 0.0
            if flip > 0.0 and np.random.random() < flip:
                y = 1.0 - y
            n[arm] += 1.0
            s[arm] += y
            m[arm] = s[arm] / n[arm]
            lnn[arm] = math.log(n[arm])
            lnln[arm] = math.log(1.0 + lnn[arm])
            t += 1
            if t < k:
                continue
            leader = _best(m, rank)
            # Only the pulled arm's pair moved, unless the leader did.
            if leader != cached or arm == leader:
                for b in range(k):
                    glr[b] = 0.0 if b == leader else _glr(m[leader], n[leader], m[b], n[b])
                cached = leader
            else:
                glr[arm] = _glr(m[leader], n[leader], m[arm], n[arm])
            chal, best = -1, 0.0
            stop = True
            for b in range(k):
                if b == leader:
                    continue
                score = glr[b] + lnn[b]
                if chal < 0 or score < best or (score == best and rank[b] < rank[chal]):
                    chal, best = b, score
                if stop and not (m[leader] > m[b] and glr[b] >= c0 + c1 * (lnln[leader] + lnln[b])):
                    stop = False
        tau[r] = t
        rec[r] = _best(m, rank)
        stopped[r] = stop
    return tau, rec, stopped


@njit(cache=False)
def peer_adaptt(mu, reps, seed, eps, thresholds, radii, c1, max_samples):
    """AdaP-TT: doubling episodes (ends at counts 1, 2, 4, ...), the last
    episode's sum plus Laplace(1 / eps) over its length, the private-UCB
    leader and the kappa_t challenger at every selection, the shifted GLR
    stop at every release."""
    np.random.seed(seed)
    k = mu.size
    scale = 1.0 / eps
    tau, rec, stopped = _outputs(reps)
    last_len = np.zeros(k)
    m = np.zeros(k)
    for r in range(reps):
        rank = _tie_rank(k)
        sel, obs, end, batches, open_sum = _arm_counters(k, 1)
        t = 0
        ready = False
        stop = False
        while not stop and t < max_samples:
            if not ready:
                arm = _waiting(batches, sel, rank)
            else:
                leader = _ucb_leader(m, last_len, t, eps, rank)
                kappa = 1.0 / (1.0 + math.sqrt(t))
                nl = max(sel[leader], 1.0)
                chal, best = -1, 0.0
                for b in range(k):
                    if b == leader:
                        continue
                    c = (m[leader] - m[b] + kappa) / math.sqrt(1.0 / nl + 1.0 / max(sel[b], 1.0))
                    if chal < 0 or c < best or (c == best and rank[b] < rank[chal]):
                        chal, best = b, c
                arm = leader if np.random.random() < 0.5 else chal
            sel[arm] += 1.0
            t += 1
            open_sum[arm] += 1.0 if np.random.random() < mu[arm] else 0.0
            obs[arm] += 1
            if obs[arm] < end[arm]:
                continue
            _episode_release(arm, obs, end, open_sum, last_len, m, batches, scale)
            if not ready:
                ready = np.all(batches > 0)
            if not ready:
                continue
            a = _best(m, rank)
            if batches[a] > radii.size:
                continue
            na = last_len[a]
            x = m[a] - radii[batches[a] - 1] / na
            stop = True
            for b in range(k):
                if b == a:
                    continue
                nb = last_len[b]
                j = max(batches[a], batches[b])
                if batches[b] > radii.size or j > thresholds.size:
                    stop = False
                    break
                y = m[b] + radii[batches[b] - 1] / nb
                c = thresholds[j - 1] + c1 * (math.log(1.0 + math.log(na)) + math.log(1.0 + math.log(nb)))
                if not (x > y) or _glr(min(max(x, 0.0), 1.0), na, min(max(y, 0.0), 1.0), nb) < c:
                    stop = False
                    break
        tau[r] = t
        rec[r] = _best(m, rank)
        stopped[r] = stop
    return tau, rec, stopped


@njit(cache=False)
def peer_dp_top_two(mu, reps, seed, eps, first, ratio, thresholds, max_samples):
    """DPTopTwo: geometric batches, each batch sum released with
    Laplace(1 / eps), means of all released batches; at every release the
    EB leader, the Chernoff-cost challenger argmin_b W(a, b) + ln N_b, the
    information-directed leader probability and the Chernoff stop."""
    np.random.seed(seed)
    k = mu.size
    scale = 1.0 / eps
    tau, rec, stopped = _outputs(reps)
    nrel = np.zeros(k)
    rsum = np.zeros(k)
    m = np.zeros(k)
    cost = np.zeros(k)
    for r in range(reps):
        rank = _tie_rank(k)
        sel, obs, end, jrel, open_sum = _arm_counters(k, first)
        nrel[:] = 0.0
        rsum[:] = 0.0
        t = 0
        ready = False
        stop = False
        leader, chal, lead_prob = 0, 1, 0.5
        while not stop and t < max_samples:
            if not ready:
                arm = _waiting(jrel, sel, rank)
            elif np.random.random() < lead_prob:
                arm = leader
            else:
                arm = chal
            sel[arm] += 1.0
            t += 1
            open_sum[arm] += 1.0 if np.random.random() < mu[arm] else 0.0
            obs[arm] += 1
            if obs[arm] < end[arm]:
                continue
            rsum[arm] += open_sum[arm] + np.random.laplace(0.0, scale)
            open_sum[arm] = 0.0
            nrel[arm] = obs[arm]
            jrel[arm] += 1
            m[arm] = min(max(rsum[arm] / nrel[arm], 0.0), 1.0)
            end[arm] = max(obs[arm] + 1, math.ceil(ratio * obs[arm]))
            if not ready:
                ready = np.all(jrel > 0)
            if not ready:
                continue
            leader = _best(m, rank)
            chal, best = -1, 0.0
            for b in range(k):
                if b == leader:
                    continue
                cost[b] = _pair_cost(m[leader], nrel[leader], jrel[leader], m[b], nrel[b], jrel[b], scale)
                score = cost[b] + math.log(nrel[b])
                if chal < 0 or score < best or (score == best and rank[b] < rank[chal]):
                    chal, best = b, score
            lead_prob = 0.5
            known = (0.0, 0.0)
            if m[leader] > m[chal]:
                known = _pair_inf(m[leader], nrel[leader], jrel[leader], m[chal], nrel[chal], jrel[chal], scale)
                if known[0] + known[1] > 0.0:
                    lead_prob = min(max(known[0] / (known[0] + known[1]), 0.0), 1.0)
            stop = _chernoff_stop(leader, m, nrel, jrel, jrel, scale, thresholds, cost, chal, known)
        tau[r] = t
        rec[r] = _best(m, rank)
        stopped[r] = stop
    return tau, rec, stopped


@njit(cache=False)
def peer_adaptt_star(mu, reps, seed, eps, thresholds, max_samples):
    """AdaP-TT*: AdaP-TT's doubling episodes (forgetting) and private-UCB
    leader; challenger argmin_b W(a, b) + ln N_b on the Chernoff cost of
    the last episodes (one Laplace draw each); the Chernoff stop indexed by
    the arms' episode counts."""
    np.random.seed(seed)
    k = mu.size
    scale = 1.0 / eps
    tau, rec, stopped = _outputs(reps)
    last_len = np.zeros(k)
    nrel = np.zeros(k)
    one = np.ones(k)
    m = np.zeros(k)
    cost = np.zeros(k)
    cost_a = np.zeros(k)
    for r in range(reps):
        rank = _tie_rank(k)
        sel, obs, end, batches, open_sum = _arm_counters(k, 1)
        t = 0
        ready = False
        stop = False
        cached, dirty, chal = -1, True, 0
        while not stop and t < max_samples:
            if not ready:
                arm = _waiting(batches, sel, rank)
            else:
                leader = _ucb_leader(m, last_len, t, eps, rank)
                # The costs are functions of released values: recomputed when the leader or a release moves them.
                if leader != cached or dirty:
                    chal, best = -1, 0.0
                    for b in range(k):
                        if b == leader:
                            continue
                        cost[b] = _pair_cost(m[leader], last_len[leader], 1.0, m[b], last_len[b], 1.0, scale)
                        score = cost[b] + math.log(nrel[b])
                        if chal < 0 or score < best or (score == best and rank[b] < rank[chal]):
                            chal, best = b, score
                    cached, dirty = leader, False
                arm = leader if np.random.random() < 0.5 else chal
            sel[arm] += 1.0
            t += 1
            open_sum[arm] += 1.0 if np.random.random() < mu[arm] else 0.0
            obs[arm] += 1
            if obs[arm] < end[arm]:
                continue
            nrel[arm] = obs[arm]
            _episode_release(arm, obs, end, open_sum, last_len, m, batches, scale)
            dirty = True
            if not ready:
                ready = np.all(batches > 0)
            if not ready:
                continue
            a = _best(m, rank)
            for b in range(k):
                cost_a[b] = 0.0 if b == a else _pair_cost(m[a], last_len[a], 1.0, m[b], last_len[b], 1.0, scale)
            # The statistic of an arm: its last episode (n = its length, one draw); thresholds by j_a + j_b.
            stop = _chernoff_stop(a, m, last_len, one, batches, scale, thresholds, cost_a, -1, (0.0, 0.0))
        tau[r] = t
        rec[r] = _best(m, rank)
        stopped[r] = stop
    return tau, rec, stopped


# ---------------------------------------------------------------------------
# Fixed-budget peers


@njit(cache=False)
def _max_det(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A Max-Det collection of the rows of v (n x d) and every row's
    coefficients on it: greedy pivoted Gram-Schmidt (largest residual norm),
    then exchanges while a coefficient exceeds 1 in absolute value."""
    n, d = v.shape
    res = v.copy()
    largest = 0.0
    for i in range(n):
        largest = max(largest, np.dot(v[i], v[i]))
    taken = np.zeros(n, np.bool_)
    chosen = np.empty(min(n, d), np.int64)
    r = 0
    for _ in range(min(n, d)):
        best, norm = -1, 1e-10 * largest
        for i in range(n):
            q = np.dot(res[i], res[i])
            if not taken[i] and q > norm:
                best, norm = i, q
        if best < 0:
            break
        taken[best] = True
        chosen[r] = best
        r += 1
        qv = res[best] / math.sqrt(norm)
        for i in range(n):
            res[i] -= np.dot(res[i], qv) * qv
    chosen = chosen[:r].copy()
    coef = np.linalg.solve(v[chosen] @ v[chosen].T, v[chosen] @ v.T).T
    for _ in range(64 * (r + 1) * (r + 1)):
        bi, bj, ba = -1, -1, 1.0 + 1e-9
        for i in range(n):
            if np.any(chosen == i):
                continue
            for jj in range(r):
                if abs(coef[i, jj]) > ba:
                    bi, bj, ba = i, jj, abs(coef[i, jj])
        if bi < 0:
            break
        chosen[bj] = bi
        coef = np.linalg.solve(v[chosen] @ v[chosen].T, v[chosen] @ v.T).T
    return chosen, coef


@njit(cache=False)
def peer_halving(mu, features, reps, seed, budget, scale):
    """Sequential halving (scale = 0) and DP-BAI (Laplace(scale) on each
    pulled arm's phase sum); with ``features`` (k x d, d > 0) each phase
    pulls a Max-Det collection of the active arms and estimates every active
    arm through its coefficients. Per replicate the recommended arm."""
    np.random.seed(seed)
    k = mu.size
    linear = features.shape[1] > 0
    phases = 0
    s = k
    while s > 1:
        s = (s + 1) // 2
        phases += 1
    rec = np.zeros(reps, np.int64)
    coef = np.zeros((0, 0))
    for r in range(reps):
        rank = _tie_rank(k)
        active = np.arange(k)
        for p in range(phases):
            tp = budget // phases + (1 if p < budget % phases else 0)
            if linear:
                chosen, coef = _max_det(features[active])
                pulled = active[chosen]
            else:
                pulled = active
            npull = pulled.size
            means = np.empty(npull)
            for jj in range(npull):
                q = tp // npull + (1 if jj < tp % npull else 0)
                total = 0.0
                mj = mu[pulled[jj]]
                for _ in range(q):
                    if np.random.random() < mj:
                        total += 1.0
                if scale > 0.0:
                    total += np.random.laplace(0.0, scale)
                means[jj] = total / q
            est = coef @ means if linear else means
            # The ceil(s_p / 2) arms of largest estimate stay (ties: the tie order).
            na = active.size
            idx = np.arange(na)
            for i in range(1, na):
                cur = idx[i]
                jj = i
                while jj > 0 and (est[idx[jj - 1]] < est[cur] or (
                        est[idx[jj - 1]] == est[cur] and rank[active[idx[jj - 1]]] > rank[active[cur]])):
                    idx[jj] = idx[jj - 1]
                    jj -= 1
                idx[jj] = cur
            active = np.sort(active[idx[: (na + 1) // 2]])
        rec[r] = active[0]
    return rec


# ---------------------------------------------------------------------------
# The benchmark


Run = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


@dataclass
class Case:
    """One configuration: its timed sides (the library with its default
    lattice noise, the library with ``sampler="float"`` where the learner
    has one, the numba peer), each ``f(reps, seed) -> (stopping times or
    samples, errors)``."""

    name: str
    k: int
    fixed_budget: bool
    sides: dict[str, Run]


def _batches(first: int, ratio: float, max_samples: int) -> int:
    """Batches an arm can release within max_samples rewards (schedule n -> max(n + 1, ceil(ratio n)))."""
    n, j = first, 1
    while n < max_samples:
        n = max(n + 1, math.ceil(ratio * n))
        j += 1
    return j


def _library(learner: Any, means: tuple[float, ...], fixed_budget: bool) -> Run:
    def run(reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        runs = learner.simulate(means, reps, seed=seed)
        used = runs.samples if fixed_budget else runs.stopping_times
        return used.astype(np.int64), runs.errors

    return run


def _case(name: str, learners: list[Any], means: tuple[float, ...], fixed_budget: bool, peer: Run) -> Case:
    """``learners``: the default learner and, where it has a ``sampler``, the same with ``sampler="float"``."""
    sides = {}
    for label, learner in zip(("dpbandits", "dpbandits float")[: len(learners)], learners, strict=True):
        sides[label] = _library(learner, means, fixed_budget)
    sides["numba"] = peer
    return Case(name, len(means), fixed_budget, sides)


def _confidence(name: str, learners: list[Any], means: tuple[float, ...], peer: Callable[..., Any],
                *args: Any) -> Case:
    mu = np.asarray(means)
    best = int(np.argmax(mu))

    def mine(reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        tau, rec, stopped = peer(mu, reps, seed, *args)
        return tau, (rec != best) | ~stopped

    return _case(name, learners, means, False, mine)


def _budget(name: str, learners: list[Any], means: tuple[float, ...], features: np.ndarray, budget: int,
            scale: float) -> Case:
    mu = np.asarray(means)
    best = int(np.argmax(mu))

    def mine(reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        rec = peer_halving(mu, features, reps, seed, budget, scale)
        return np.full(reps, budget, np.int64), rec != best

    return _case(name, learners, means, True, mine)


def cases(large: bool) -> list[Case]:
    """The benchmarked configurations (every BAI learner; ``large`` adds the larger K)."""
    eps = 1.0
    out = []
    for means in (MEANS5, MEANS10) if large else (MEANS5,):
        k = len(means)
        c0, c1 = glr_threshold(k, DELTA)
        out.append(_confidence("TopTwoBAI", [dp.TopTwoBAI(k, DELTA)], means, peer_top_two, 0.5, c0, c1, 0.0,
                               MAX_SAMPLES))
        first = max(1, math.ceil(128.0 / eps))
        chern = np.asarray(chernoff_pair_thresholds(k, DELTA, 2 * _batches(first, 1.7, MAX_SAMPLES)))
        out.append(_confidence("DPTopTwo eps=1",
                               [dp.DPTopTwo(k, DELTA, eps), dp.DPTopTwo(k, DELTA, eps, sampler="float")],
                               means, peer_dp_top_two, eps, first, 1.7, chern, MAX_SAMPLES))
        if k != 5:
            continue
        flip = 1.0 / (1.0 + math.exp(eps))
        out.append(_confidence("CTBTT eps=1", [dp.CTBTT(k, DELTA, eps)], means, peer_top_two, 0.5, c0, c1, flip,
                               MAX_SAMPLES))
        nb = _batches(1, 2.0, MAX_SAMPLES)
        thr = np.asarray(forgetting_thresholds(k, DELTA / 2.0, nb))
        radii = np.asarray(noise_radii(k, DELTA / 2.0, 1.0 / eps, nb, None, cumulative=False))
        out.append(_confidence("AdaPTT eps=1", [dp.AdaPTT(k, DELTA, eps), dp.AdaPTT(k, DELTA, eps, sampler="float")],
                               means, peer_adaptt, eps, thr, radii, 3.0, MAX_SAMPLES))
        chern = np.asarray(chernoff_pair_thresholds(k, DELTA, 2 * nb))
        out.append(_confidence("AdaPTTStar eps=1",
                               [dp.AdaPTTStar(k, DELTA, eps), dp.AdaPTTStar(k, DELTA, eps, sampler="float")],
                               means, peer_adaptt_star, eps, chern, MAX_SAMPLES))
    none5 = np.zeros((len(MEANS5), 0))
    out.append(_budget("SequentialHalving T=300", [dp.SequentialHalving(5, 300)], MEANS5, none5, 300, 0.0))
    out.append(_budget("DPBAI eps=1 T=600", [dp.DPBAI(5, 600, eps), dp.DPBAI(5, 600, eps, sampler="float")],
                       MEANS5, none5, 600, 1.0 / eps))
    if large:
        out.append(_budget("DPBAI eps=1 T=20000",
                           [dp.DPBAI(32, 20000, eps), dp.DPBAI(32, 20000, eps, sampler="float")],
                           MEANS32, np.zeros((32, 0)), 20000, 1.0 / eps))
    lin_means = tuple(float(m) for m in LINEAR_ARMS @ LINEAR_THETA)
    out.append(_budget("LinearDPBAI eps=1 T=6000",
                       [dp.LinearDPBAI(LINEAR_ARMS, 6000, eps),
                        dp.LinearDPBAI(LINEAR_ARMS, 6000, eps, sampler="float")],
                       lin_means, LINEAR_ARMS, 6000, 1.0 / eps))
    return out


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _agreement(name: str, a: np.ndarray, b: np.ndarray) -> tuple[str, float]:
    """The difference of the two means in standard errors of the difference, printed."""
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    z = abs(a.mean() - b.mean()) / se if se > 0 else (0.0 if a.mean() == b.mean() else math.inf)
    return f"{name}: {a.mean():.6g} vs {b.mean():.6g} ({a.size} + {b.size} replicates) {z:.2f} standard errors", z


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="interleaved timed runs per side (default 5)")
    parser.add_argument("--reps", type=int, default=200, help="replicates per fixed-confidence run (default 200)")
    parser.add_argument("--budget-reps", type=int, default=2000,
                        help="replicates per fixed-budget run (default 2000)")
    parser.add_argument("--no-large", action="store_true", help="only the K = 5 (and linear) instances")
    args = parser.parse_args()
    print(f"load average before: {_load()}")
    rows = []
    failed = []
    for case in cases(not args.no_large):
        reps = args.budget_reps if case.fixed_budget else args.reps
        for run in case.sides.values():
            run(4, 0)  # warm-up (numba compiles here)
        labels = list(case.sides)
        rates: dict[str, list[float]] = {s: [] for s in labels}
        used: dict[str, list[np.ndarray]] = {s: [] for s in labels}
        errors: dict[str, list[np.ndarray]] = {s: [] for s in labels}
        for rep in range(args.repeats):
            for side in labels if rep % 2 == 0 else labels[::-1]:
                # The library sides share seeds; the peer's replicates are independent of them.
                seed = 1_000_001 + rep if side == "numba" else 1 + rep
                c0 = time.process_time()
                tau, err = case.sides[side](reps, seed)
                cpu = time.process_time() - c0
                rates[side].append(float(tau.sum()) / cpu / 1e6)
                used[side].append(tau)
                errors[side].append(err)
        med = {s: statistics.median(rates[s]) for s in labels}
        rows.append((case, med))
        print(f"{case.name:26s} K={case.k:<3d} " + "  ".join(
            f"{s} {med[s]:.1f} ({', '.join(f'{r:.1f}' for r in sorted(rates[s]))})" for s in labels)
            + " M samples/CPU-s", flush=True)
        # The same algorithm: the pooled replicates of each library side agree with the peer's within 4 SE.
        peer_t, peer_e = np.concatenate(used["numba"]).astype(float), np.concatenate(errors["numba"]).astype(float)
        for s in labels[:-1]:
            checks = [("error rate", np.concatenate(errors[s]).astype(float), peer_e)]
            if not case.fixed_budget:
                checks.insert(0, ("mean stopping time", np.concatenate(used[s]).astype(float), peer_t))
            for what, a, b in checks:
                text, z = _agreement(what, a, b)
                print(f"    check {s} vs numba, {text}{'' if z <= 4.0 else '  DISAGREE'}")
                if z > 4.0:
                    failed.append(f"{case.name} K={case.k} ({s}): {what}")
    print(f"load average after: {_load()}")
    print()
    print("| learner | K | dpbandits (M samples/CPU-s) | dpbandits float | numba | dpbandits / numba | float / numba |")
    print("|---|---|---|---|---|---|---|")
    for case, med in rows:
        lib, peer = med["dpbandits"], med["numba"]
        fl = med.get("dpbandits float")
        fl_rate, fl_ratio = ("", "") if fl is None else (f"{fl:.1f}", f"{fl / peer:.2f}")
        print(f"| {case.name} | {case.k} | {lib:.1f} | {fl_rate} | {peer:.1f} | {lib / peer:.2f} | {fl_ratio} |")
    if failed:
        print("the peer disagrees with the library: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
