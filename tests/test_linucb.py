"""LinUCB and joint-DP LinUCB of Shariff & Sheffet 2018 (``dpbandits.learners.linucb``).

Claims checked:

- non-private LinUCB (Alg. 1 with H_t = rho I, h_t = 0) makes exactly the
  decisions of a straightforward NumPy LinUCB with the Prop. 4 radius
  (rho_min = rho_max = rho, gamma = 0), in both radius forms, ties to the
  lowest index;
- the tree-released engine with zero node noise and shift rho is that same
  learner, decision for decision (§4: V_t = top-left block of the release
  + shift I);
- the released noise at round t is the noise of exactly the dyadic nodes of
  t, plus the shift once (not popcount(t) times, the known trap);
- the shifted Gaussian release is positive definite except with
  probability alpha/2n per round (Prop. 11), and when a release is not the
  learner falls back to the last one that was, as documented;
- on App. D.2 (d = 5, K = 25, gap 0.1) regret orders
  non-private < Gaussian < shifted Wishart (§D.2, Fig. 4);
- guarantees are reported (joint DP, Claim 7; Wishart scale Ltilde^2);
- inputs the proof bounds (Assumption 6) are clipped or refused; bad input
  raises a clear error; pickling mid-stream changes nothing.

Statistical thresholds: the ordering test is a one-sided two-sample t test
at level 1e-3 on the across-seed spread; the PSD bound comes from Prop. 11
by a union bound. Every seed is fixed.
"""

from __future__ import annotations

import math
import pickle
import sys

import numpy as np
import pytest
from scipy import stats

import dpbandits as dp
from dpbandits import _core
from dpbandits.envs import ShariffSheffetEnv
from dpbandits.errors import StateError
from dpbandits.learners.linucb import JointDPLinUCB, LinUCB
from dpbandits.learners.online import research_replay
from dpbandits.mechanisms import SymmetricGaussianNoise, TreeCounter, ZeroNoise
from dpbandits.privacy import ConfidenceRadius
from dpbandits.privacy.secure import LatticeNoise
from dpbandits.sim import simulate

# ---------------------------------------------------------------- helpers


def popcount(t: int) -> int:
    return bin(t).count("1")


def dyadic(t: int) -> list[tuple[int, int, int]]:
    """(level, first, last) of the dyadic decomposition of [1, t], highest first."""
    out, start = [], 0
    for level in reversed(range(t.bit_length())):
        if t >> level & 1:
            out.append((level, start + 1, start + 2**level))
            start += 2**level
    return out


def ucb_of(v: np.ndarray, u: np.ndarray, beta: float, actions: np.ndarray) -> np.ndarray:
    """<theta, x> + beta ||x||_{V^-1} for every row x (Eq. (1)), theta = V^-1 u."""
    theta = np.linalg.solve(v, u)
    v_inv = np.linalg.inv(v)
    widths = np.sqrt(np.einsum("ij,jk,ik->i", actions, v_inv, actions))
    return actions @ theta + beta * widths


# Two implementations of the same UCB agree to ~1e-13 (floating point);
# rows whose UCBs are within this of the maximum are mathematical ties
# (e.g. round 1: theta = 0, V = rho I and unit-norm actions).
TIE = 1e-9


def check_same_choice(t: int, got: int, scores: np.ndarray) -> bool:
    """``got`` is the first argmax of ``scores`` up to floating-point ties;
    returns whether the round was such a tie."""
    best = float(scores.max())
    tied = np.flatnonzero(scores >= best - TIE * max(1.0, abs(best)))
    assert got in tied, (
        f"round {t}: chose {got} (UCB {scores[got]!r}), the reference {int(np.argmax(scores))} "
        f"(UCB {best!r})"
    )
    if tied.size == 1:
        assert got == int(np.argmax(scores))
    return tied.size > 1


class NumpyLinUCB:
    """A straightforward LinUCB, written from the paper and nothing else.

    V_t = rho I + sum_s x_s x_s^T, u_t = sum_s y_s x_s, theta_t = V_t^-1 u_t,
    beta_t = sigma sqrt(2 ln(2/alpha) + ln det V_t - d ln rho) + S sqrt(rho)
    (Prop. 4, first line, with rho_min = rho_max = rho and gamma = 0), or the
    constant sigma sqrt(2 ln(2/alpha) + d ln(1 + n L^2/(d rho))) + S sqrt(rho)
    (second line); play the first argmax of <theta_t, x> + beta_t ||x||_{V_t^-1}.
    """

    def __init__(self, d: int, horizon: int, rho: float, alpha: float, sigma: float,
                 S: float, L: float, form: str) -> None:
        self.d, self.n, self.rho, self.alpha = d, horizon, rho, alpha
        self.sigma, self.S, self.L, self.form = sigma, S, L, form
        self.v = rho * np.eye(d)
        self.u = np.zeros(d)

    def beta(self) -> float:
        base = 2.0 * math.log(2.0 / self.alpha)
        if self.form == "log_det":
            sign, log_det = np.linalg.slogdet(self.v)
            assert sign > 0
            arg = base + log_det - self.d * math.log(self.rho)
        else:
            arg = base + self.d * math.log(1.0 + self.n * self.L**2 / (self.d * self.rho))
        return self.sigma * math.sqrt(arg) + self.S * math.sqrt(self.rho)

    def ucb(self, actions: np.ndarray) -> np.ndarray:
        return ucb_of(self.v, self.u, self.beta(), actions)

    def select(self, actions: np.ndarray) -> int:
        return int(np.argmax(self.ucb(actions)))  # argmax: first maximum

    def update(self, x: np.ndarray, y: float) -> None:
        self.v += np.outer(x, x)
        self.u += y * x


def radius_kwargs(radius: ConfidenceRadius) -> dict[str, float]:
    """The radius constants of a learner, as the engine takes them."""
    if radius.log_det_coefficient == 0.0:
        return {"beta_constant": radius.beta()}
    return {"beta_noise_sd": radius.noise_sd, "beta_log_offset": radius.log_offset,
            "beta_offset": radius.offset}


class ReleasedLinUCB:
    """The engine's decision rule recomputed in NumPy from the release of an
    identically seeded :class:`TreeCounter` over the rows (x, y) of §4.

    The engine's tree draws from the ``"tree"`` stream of the seed, as does a
    TreeCounter with that seed; its first leaf is the zero row (A_1 = 0).
    V_t = (top-left d x d block of the release) + shift * I, applied
    ``shift_copies(t)`` times (once is right), u~_t = last column. When V_t is
    not positive definite, the last positive definite (V, u~) is used, or
    (|shift| I, 0) before any (the documented fallback).
    """

    def __init__(self, d: int, horizon: int, noise, shift: float, radius: ConfidenceRadius,
                 seed: int, per_node_shift: bool = False) -> None:
        self.d, self.shift, self.radius, self.per_node_shift = d, shift, radius, per_node_shift
        # The engine's own noise, drawn as the engine draws it: a lattice
        # noise value crosses unchanged (sampler "lattice"), a floating-point
        # spec is drawn in floating point (not moved onto a lattice).
        sampler = "lattice" if isinstance(noise, LatticeNoise) else "float"
        self.counter = TreeCounter(shape=(d + 1, d + 1), horizon=horizon, noise=noise, seed=seed,
                                   sampler=sampler)
        assert self.counter._inner.noise == noise.wire()
        self.counter.add(np.zeros((d + 1, d + 1)))  # A_1 = 0
        self.rows: list[np.ndarray] = [np.zeros(d + 1)]
        self.last_good: tuple[np.ndarray, np.ndarray] | None = None
        self.failures = 0

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        d = self.d
        r = self.counter.release()
        copies = popcount(self.counter.t) if self.per_node_shift else 1
        v = r[:d, :d] + copies * self.shift * np.eye(d)
        u = r[:d, d].copy()
        try:
            np.linalg.cholesky(v)
        except np.linalg.LinAlgError:
            self.failures += 1
            if self.last_good is None:
                return abs(self.shift) * np.eye(d), np.zeros(d)
            return self.last_good
        self.last_good = (v, u)
        return v, u

    def ucb(self, actions: np.ndarray) -> np.ndarray:
        v, u = self.statistics()
        log_det = np.linalg.slogdet(v)[1]
        return ucb_of(v, u, self.radius.beta(log_det), actions)

    def observe(self, x: np.ndarray, y: float) -> None:
        row = np.append(x, y)
        self.rows.append(row)
        if self.counter.t < self.counter.horizon:
            self.counter.add(np.outer(row, row))


def unit_rows(rng: np.random.Generator, k: int, d: int, norm: float = 1.0) -> np.ndarray:
    x = rng.standard_normal((k, d))
    return norm * x / np.linalg.norm(x, axis=1, keepdims=True)


# ------------------------------------------- non-private LinUCB vs NumPy

LINUCB_CONFIGS = [
    {"regularizer": 1.0, "radius": "log_det"},
    {"regularizer": 1.0, "radius": "upper_bound"},
    {"regularizer": 2.5, "radius": "log_det", "alpha": 0.05, "sigma": 0.5, "S": 2.0},
]


@pytest.mark.parametrize(
    "config", LINUCB_CONFIGS, ids=lambda c: f"{c['radius']}-rho{c['regularizer']}"
)
def test_linucb_chooses_exactly_as_a_numpy_linucb_with_the_prop_4_radius(config) -> None:
    d, k, n = 5, 25, 2500
    learner = LinUCB(d, n, **config, seed=0)
    ref = NumpyLinUCB(
        d, n, rho=config["regularizer"], alpha=config.get("alpha", 1.0 / n),
        sigma=config.get("sigma", 1.0), S=config.get("S", 1.0), L=1.0, form=config["radius"],
    )
    env = ShariffSheffetEnv(d, k, gap=0.1, seed=21)
    chosen = np.empty(n, dtype=int)
    ties = 0
    for t in range(1, n + 1):
        actions = env.decision_set(t)
        want = ref.ucb(actions)
        got = learner.select(actions)
        ties += check_same_choice(t, got, want)
        np.testing.assert_allclose(learner.ucb(actions), want, rtol=1e-9, atol=1e-12)
        chosen[t - 1] = got
        y = env.reward(t, got)
        learner.update(y)
        ref.update(actions[got], y)
    assert learner.t == n
    # The stream is informative: the learner did not just play one row.
    assert len(np.unique(chosen)) > 1
    # Ties (decided by rounding) are the exception: round 1 and little else.
    assert ties <= n // 100, f"{ties} tied rounds"


@pytest.mark.parametrize("make", [
    lambda: LinUCB(2, 100, seed=0),
    lambda: JointDPLinUCB(2, 100, 1.0, 0.1, seed=0),
    lambda: JointDPLinUCB(2, 100, 1.0, 0.1, noise="wishart", seed=0),
])
def test_ties_go_to_the_lowest_index(make) -> None:
    learner = make()
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = unit_rows(rng, 1, 2, 0.9)[0]
        learner.update(x, float(rng.choice([-1.0, 1.0])))
    rows = unit_rows(rng, 4, 2, 0.9)
    best = int(np.argmax(learner.ucb(rows)))
    worst = int(np.argmin(learner.ucb(rows)))
    # The best row three times, after a worse one: the first copy wins.
    actions = np.stack([rows[worst], rows[best], rows[best], rows[best]])
    assert learner.select(actions) == 1
    # Identical rows in round 1 of LinUCB (theta = 0): index 0.
    fresh = LinUCB(2, 10, seed=0)
    assert fresh.select(np.tile([[0.6, 0.0]], (3, 1))) == 0


# ---------------------------------- zero-noise tree engine == exact LinUCB


@pytest.mark.parametrize("form", ["log_det", "upper_bound"])
@pytest.mark.parametrize("rho", [1.0, 3.0])
def test_zero_noise_tree_with_shift_rho_is_linucb_with_regularizer_rho(
    form: str, rho: float
) -> None:
    d, k, n = 5, 25, 2500
    exact = LinUCB(d, n, regularizer=rho, radius=form, seed=0)
    tree = _core.LinUcbEngine(
        d, n, noise=("zero",), shift=rho, l=1.0, b_tilde=1.0, clip=True,
        seed=4, **radius_kwargs(exact.radius),
    )
    env = ShariffSheffetEnv(d, k, gap=0.1, seed=22)
    distinct, ties = set(), 0
    for t in range(1, n + 1):
        actions = env.decision_set(t)
        a = exact.select(actions)
        b = tree.select(actions)
        want = exact.ucb(actions)
        np.testing.assert_allclose(tree.ucb(actions), want, rtol=1e-9, atol=1e-12)
        ties += check_same_choice(t, b, want)
        distinct.add(a)
        # Both learn from the same row and reward (the exact learner's).
        y = env.reward(t, a)
        exact.update(y)
        tree.observe(actions[a], y)
    assert tree.psd_failures == 0 and tree.t == exact.t == n
    assert len(distinct) > 1
    assert ties <= n // 100, f"{ties} tied rounds"


# ------------------------------------ the released noise: nodes + one shift


def test_release_noise_is_the_sum_of_exactly_the_dyadic_nodes_of_t() -> None:
    # Tree level: release - exact M_t = sum over the live nodes of
    # (noisy node - exact node), and the live nodes are t's dyadic nodes.
    d, n = 3, 100
    rng = np.random.default_rng(5)
    counter = TreeCounter(
        shape=(d + 1, d + 1), horizon=n, noise=SymmetricGaussianNoise(0.5), seed=5
    )
    leaves = []
    for t in range(1, n + 1):
        row = np.append(unit_rows(rng, 1, d, 0.8)[0], rng.choice([-1.0, 1.0]))
        leaf = np.outer(row, row) if t > 1 else np.zeros((d + 1, d + 1))
        leaves.append(leaf)
        counter.add(leaf)
        nodes = counter.live_nodes()
        assert [(lv, a, b) for lv, a, b, _ in nodes] == dyadic(t)
        node_noise = sum(noisy - np.sum(leaves[a - 1 : b], axis=0) for _, a, b, noisy in nodes)
        noise = counter.release() - np.sum(leaves, axis=0)
        np.testing.assert_allclose(noise, node_noise, rtol=0, atol=1e-12)
        assert counter.noise_terms == popcount(t)


def _engine_and_reconstruction(d: int, n: int, sigma: float, shift: float, seed: int):
    radius = ConfidenceRadius(form="log_det", noise_sd=1.0, log_offset=2.0 * math.log(2.0 * n),
                              log_det_coefficient=1.0, offset=1.0)
    engine = _core.LinUcbEngine(
        d, n, noise=("symmetric_gaussian", sigma), shift=shift,
        l=1.0, b_tilde=1.0, clip=True, seed=seed, **radius_kwargs(radius),
    )
    once = ReleasedLinUCB(d, n, SymmetricGaussianNoise(sigma), shift, radius, seed)
    per_node = ReleasedLinUCB(d, n, SymmetricGaussianNoise(sigma), shift, radius, seed,
                              per_node_shift=True)
    return engine, once, per_node


def test_engine_adds_the_shift_once_per_release_not_once_per_node() -> None:
    # The engine's UCBs equal those recomputed from an identically seeded
    # TreeCounter with V_t = block + shift I; with popcount(t) * shift I (the
    # per-node trap) they differ at every round whose t has >= 2 nodes.
    d, n, sigma, shift, seed = 3, 128, 0.1, 1.5, 6
    engine, once, per_node = _engine_and_reconstruction(d, n, sigma, shift, seed)
    rng = np.random.default_rng(6)
    basis = np.vstack([np.eye(d), -np.eye(d)])
    multi_node_rounds = 0
    for _ in range(1, n):
        actions = np.vstack([basis, unit_rows(rng, 6, d, 0.9)])
        got = engine.ucb(actions)
        np.testing.assert_allclose(got, once.ucb(actions), rtol=1e-9, atol=1e-12)
        wrong = per_node.ucb(actions)
        if popcount(once.counter.t) >= 2:
            multi_node_rounds += 1
            assert not np.allclose(got, wrong, rtol=1e-6, atol=0.0), f"tree t = {once.counter.t}"
        i = engine.select(actions)
        y = float(rng.choice([-1.0, 1.0]))
        engine.observe(actions[i], y)
        once.observe(actions[i], y)
        per_node.observe(actions[i], y)
    assert engine.psd_failures == 0 and once.failures == 0
    assert multi_node_rounds > n // 2


def test_public_gaussian_learner_reads_only_the_release_plus_one_shift() -> None:
    # JointDPLinUCB end to end: its UCBs are recomputed from a TreeCounter
    # with the calibration's noise, the calibration's shift once, and the
    # learner's Prop. 4 radius.
    d, n, seed = 3, 200, 11
    learner = JointDPLinUCB(d, n, epsilon=1.0, delta=0.1, seed=seed)
    c = learner.calibration
    once = ReleasedLinUCB(d, n, c.noise, c.shift, learner.radius, seed)
    per_node = ReleasedLinUCB(d, n, c.noise, c.shift, learner.radius, seed, per_node_shift=True)
    rng = np.random.default_rng(11)
    for _ in range(1, n):
        actions = unit_rows(rng, 8, d, 0.9)
        got = learner.ucb(actions)
        np.testing.assert_allclose(got, once.ucb(actions), rtol=1e-9, atol=1e-12)
        wrong = per_node.ucb(actions)
        if popcount(once.counter.t) >= 2:
            assert not np.allclose(got, wrong, rtol=1e-6, atol=0.0)
        i = learner.select(actions)
        y = float(rng.choice([-1.0, 1.0]))
        learner.update(y)
        once.observe(actions[i], y)
        per_node.observe(actions[i], y)
    assert learner.psd_failures == 0


# ------------------------------------------------------------ PSD failures


def test_shifted_gaussian_release_is_positive_definite_over_1e5_rounds() -> None:
    # Prop. 11: each round's noise block has norm <= Upsilon except with
    # probability alpha/2n, and then V_t >= G_t + (2 Upsilon - Upsilon) I > 0.
    # Union bound over n rounds: P(any failure) <= alpha/2 = 1/(2n) = 5e-6
    # with the default alpha = 1/n, so a correct learner fails this test with
    # probability at most 5e-6.
    d, k, n = 5, 25, 100_000
    learner = JointDPLinUCB(d, n, epsilon=1.0, delta=0.1, seed=12)
    env = ShariffSheffetEnv(d, k, gap=0.1, seed=12)
    for t in range(1, n + 1):
        actions = env.decision_set(t)
        learner.update(env.reward(t, learner.select(actions)))
    rate = learner.psd_failures / n
    print(f"\nshifted Gaussian (d={d}, n={n}, shift 2 Upsilon = {learner.calibration.shift:.4g}): "
          f"PSD failure rate {rate:.3g} ({learner.psd_failures} of {n} rounds); "
          f"Prop. 11 bound per round alpha/2n = {learner.alpha / (2 * n):.3g}")
    assert learner.psd_failures == 0
    assert learner.t == n


def test_shift_barely_above_upsilon_keeps_prop_11s_guarantee() -> None:
    # shift = Upsilon (1 + 1e-9): rho_min = shift - Upsilon > 0, and the
    # same event (noise block norm <= Upsilon, probability >= 1 - alpha/2n
    # per round) keeps V_t positive definite; union bound alpha/2 = 2.5e-5.
    d, k, n = 5, 25, 20_000
    upsilon = JointDPLinUCB(d, n, 1.0, 0.1, seed=0).calibration.upsilon
    learner = JointDPLinUCB(d, n, 1.0, 0.1, shift=upsilon * (1.0 + 1e-9), seed=13)
    assert learner.calibration.rho_min > 0.0
    env = ShariffSheffetEnv(d, k, gap=0.1, seed=13)
    for t in range(1, n + 1):
        actions = env.decision_set(t)
        learner.update(env.reward(t, learner.select(actions)))
    assert learner.psd_failures == 0


def test_tiny_shift_fails_psd_and_falls_back_to_the_last_positive_definite_release() -> None:
    # Shift 0.5 against node noise sigma = 1 (the noise block's norm is about
    # 2 sqrt(d) sigma sqrt(popcount t) >> 0.5): early releases are indefinite.
    # Each round the engine's UCBs must equal those of the last positive
    # definite release (or |shift| I, u = 0 before any), recomputed in NumPy,
    # and select() must return a valid row.
    d, k, n, sigma, shift, seed = 5, 25, 2048, 1.0, 0.5, 14
    radius = ConfidenceRadius(form="log_det", noise_sd=1.0, log_offset=2.0 * math.log(2.0 * n),
                              log_det_coefficient=1.0, offset=1.0)
    def make():
        return _core.LinUcbEngine(
            d, n, noise=("symmetric_gaussian", sigma), shift=shift,
            l=1.0, b_tilde=1.0, clip=True, seed=seed, **radius_kwargs(radius),
        )

    # `engine` only selects; its twin (same seed, same rows) only shows UCBs.
    engine, inspect = make(), make()
    ref = ReleasedLinUCB(d, n, SymmetricGaussianNoise(sigma), shift, radius, seed)
    env = ShariffSheffetEnv(d, k, gap=0.1, seed=seed)
    for t in range(1, n):
        actions = env.decision_set(t)
        i = engine.select(actions)
        want = ref.ucb(actions)
        assert 0 <= i < k
        check_same_choice(t, i, want)
        np.testing.assert_allclose(inspect.ucb(actions), want, rtol=1e-9, atol=1e-12)
        y = env.reward(t, i)
        for learner in (engine, inspect, ref):
            learner.observe(actions[i], y)
    rate = ref.failures / (n - 1)
    print(f"\ntiny shift {shift} with sigma {sigma}: PSD failure rate {rate:.3g} "
          f"({ref.failures} of {n - 1} rounds)")
    assert ref.failures > 0
    assert engine.psd_failures == inspect.psd_failures == ref.failures


def test_psd_failures_count_rounds_not_calls() -> None:
    # `psd_failures` is documented as the number of *rounds* whose release
    # was not positive definite. Inspecting a round with ucb() before
    # select() must not count that round twice.
    # Regression: estimates() once counted every call, so ucb() + select() counted 2.
    engine = _core.LinUcbEngine(2, 10, noise=("zero",), shift=-1.0,
                                beta_constant=1.0, seed=0)
    actions = np.array([[0.6, 0.0], [0.0, 1.0]])
    # V_1 = -I is not positive definite; no earlier release, so the fallback
    # is V = |shift| I, u = 0: UCB = ||x||, the longer row wins.
    np.testing.assert_allclose(engine.ucb(actions), [0.6, 1.0], rtol=1e-12)
    assert engine.select(actions) == 1
    assert engine.psd_failures == 1


# ------------------------------------------------------ D.2 regret ordering


def test_d2_regret_orders_nonprivate_below_gaussian_below_shifted_wishart() -> None:
    # App. D.2, right panel (gap 0.1), at a short horizon; each learner is
    # calibrated for that horizon. Margins: one-sided Welch t test at level
    # 1e-3 on the final regrets over the seeds (the same seeds for all three:
    # common random numbers), critical value from Student t with the Welch
    # degrees of freedom.
    d, k, n, seeds = 5, 25, 20_000, 8
    env = ShariffSheffetEnv(d, k, gap=0.1)
    learners = {
        "non-private": LinUCB(d, n),
        "Gaussian": JointDPLinUCB(d, n, epsilon=1.0, delta=0.1),
        "Wishart": JointDPLinUCB(d, n, epsilon=1.0, delta=0.1, noise="wishart", shift=True),
    }
    final = {name: simulate(lrn, env, seeds=seeds).final_regret for name, lrn in learners.items()}
    print()
    for name, f in final.items():
        print(f"D.2 n={n} {name}: regret {f.mean():.1f} +- {f.std(ddof=1):.1f} "
              f"(sd over {seeds} seeds)")
    for lo, hi in [("non-private", "Gaussian"), ("Gaussian", "Wishart")]:
        a, b = final[lo], final[hi]
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        se = math.sqrt(va + vb)
        df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
        k_crit = stats.t.ppf(1.0 - 1e-3, df)
        diff = b.mean() - a.mean()
        print(f"  {hi} - {lo}: {diff:.1f} = {diff / se:.1f} SE (needs > {k_crit:.2f})")
        assert diff > k_crit * se, f"{hi} - {lo} = {diff:.1f}, {k_crit:.2f} SE = {k_crit * se:.1f}"


# ------------------------------------------------------- privacy reporting


def test_joint_dp_learners_report_their_guarantee() -> None:
    g = JointDPLinUCB(5, 1000, epsilon=0.7, delta=0.05).privacy
    assert g.model == "joint" and g.is_private
    assert (g.epsilon, g.delta) == (0.7, 0.05)
    assert "Claim 7" in g.basis and "§4.2" in g.basis
    assert "contexts" in g.protects and "rewards" in g.protects
    w = JointDPLinUCB(5, 1000, epsilon=0.7, delta=0.05, noise="wishart").privacy
    assert w.model == "joint" and (w.epsilon, w.delta) == (0.7, 0.05)
    assert "Claim 7" in w.basis and "Thm 8" in w.basis
    lin = LinUCB(5, 1000).privacy
    assert not lin.is_private and lin.model == "none" and math.isinf(lin.epsilon)


@pytest.mark.parametrize(("L", "B_tilde"), [(1.0, 1.0), (1.0, 2.0), (2.0, 0.5)])
def test_wishart_calibration_scale_is_l_tilde_squared(L: float, B_tilde: float) -> None:
    learner = JointDPLinUCB(3, 500, 1.0, 0.1, noise="wishart", L=L, B_tilde=B_tilde)
    assert learner.calibration.scale == pytest.approx(L**2 + B_tilde**2, rel=1e-15)
    assert learner.calibration.noise.scale == learner.calibration.scale


def test_wishart_engine_noise_has_l_tilde_squared_scale() -> None:
    # Behavioural check of the engine (not only the calibration): before any
    # data, the unshifted release's block is V ~ W_d(s I, N), N = m k (padded
    # to m draws, Prop. 9), s = Ltilde^2 = 5. Davidson-Szarek: the singular
    # values of the N x d Gaussian factor lie in sqrt(N) -+ (sqrt(d) + r)
    # except with probability 2 exp(-r^2 / 2); r = 6 gives 3e-8. So
    # (UCB(e_i) + UCB(-e_i)) / 2 = beta sqrt((V^-1)_ii) lies in an interval
    # computed below under s; under s = Ltilde (the trap) it would not.
    d, n, L, B = 2, 64, 1.0, 2.0
    learner = JointDPLinUCB(d, n, 1.0, 0.1, noise="wishart", shift=False, L=L, B_tilde=B, seed=15)
    c = learner.calibration
    N = c.m * c.k
    a = math.sqrt(d) + 6.0
    ucb = learner.ucb(np.vstack([np.eye(d), -np.eye(d)]))
    half_width = (ucb[:d] + ucb[d:]) / 2.0

    def interval(s: float) -> tuple[float, float]:
        lo_eig, hi_eig = s * (math.sqrt(N) - a) ** 2, s * (math.sqrt(N) + a) ** 2
        beta_lo = learner.radius.beta(d * math.log(lo_eig))
        beta_hi = learner.radius.beta(d * math.log(hi_eig))
        return beta_lo / math.sqrt(hi_eig), beta_hi / math.sqrt(lo_eig)

    lo, hi = interval(L**2 + B**2)
    assert np.all((lo <= half_width) & (half_width <= hi)), (half_width, lo, hi)
    lo_wrong, _ = interval(math.sqrt(L**2 + B**2))
    assert hi < lo_wrong  # the check can tell the two scales apart
    assert np.all(half_width < lo_wrong)


# ---------------------------------------------------------------- clipping


@pytest.mark.parametrize("noise", ["gaussian", "wishart"])
def test_clip_policy_behaves_like_the_clipped_row(noise: str) -> None:
    d, n, seed = 3, 50, 16
    rng = np.random.default_rng(16)
    probe = unit_rows(rng, 6, d)

    def make() -> JointDPLinUCB:
        return JointDPLinUCB(d, n, 1.0, 0.1, noise=noise, L=1.0, B_tilde=1.0, seed=seed)

    x = np.array([3.0, 4.0, 12.0])  # ||x|| = 13 > L
    clipped_x = x * (1.0 / math.sqrt(float(np.sum(x * x))))
    big, clipped, other = make(), make(), make()
    big.update(x, 0.5)
    clipped.update(clipped_x, 0.5)
    other.update(0.5 * clipped_x, 0.5)
    np.testing.assert_allclose(big.ucb(probe), clipped.ucb(probe), rtol=1e-12, atol=0.0)
    assert not np.allclose(big.ucb(probe), other.ucb(probe), rtol=1e-9, atol=0.0)

    big, clipped, other = make(), make(), make()
    big.update(clipped_x, 7.0)  # |y| > B_tilde
    clipped.update(clipped_x, 1.0)
    other.update(clipped_x, 0.5)
    np.testing.assert_allclose(big.ucb(probe), clipped.ucb(probe), rtol=1e-12, atol=0.0)
    assert not np.allclose(big.ucb(probe), other.ucb(probe), rtol=1e-9, atol=0.0)
    big.update(-20.0 * clipped_x, -3.0)
    clipped.update(-clipped_x, -1.0)
    np.testing.assert_allclose(big.ucb(probe), clipped.ucb(probe), rtol=1e-12, atol=0.0)


def test_linucb_clips_x_to_l() -> None:
    probe = unit_rows(np.random.default_rng(17), 6, 3)
    big, clipped = LinUCB(3, 50, L=2.0), LinUCB(3, 50, L=2.0)
    x = np.array([3.0, 4.0, 12.0])
    big.update(x, 0.5)
    clipped.update(x * (2.0 / 13.0), 0.5)
    np.testing.assert_allclose(big.ucb(probe), clipped.ucb(probe), rtol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: JointDPLinUCB(3, 50, 1.0, 0.1, bounds="error", seed=0),
    lambda: JointDPLinUCB(3, 50, 1.0, 0.1, noise="wishart", bounds="error", seed=0),
])
def test_error_policy_refuses_out_of_bounds_rows_and_does_not_advance(make) -> None:
    learner = make()
    with pytest.raises(ValueError, match="`x`"):
        learner.update(np.array([3.0, 4.0, 12.0]), 0.5)
    with pytest.raises(ValueError, match="`reward`"):
        learner.update(np.array([0.6, 0.0, 0.0]), 1.5)
    assert learner.t == 0
    # The same happens through select()/update(reward).
    actions = np.array([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    learner.select(actions)
    with pytest.raises(ValueError, match="`x`"):
        learner.update(0.5)
    assert learner.t == 0
    learner.update(np.array([0.6, 0.8, 0.0]), 1.0)  # on the bounds: accepted
    assert learner.t == 1


def test_linucb_error_policy_refuses_long_x() -> None:
    learner = LinUCB(3, 50, bounds="error")
    with pytest.raises(ValueError, match="`x`"):
        learner.update(np.array([3.0, 4.0, 12.0]), 0.5)
    assert learner.t == 0


# ------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(("kwargs", "exc", "name"), [
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"epsilon": math.nan}, ValueError, "epsilon"),
    ({"delta": 0.0}, ValueError, "delta"),
    ({"delta": 1.0}, ValueError, "delta"),
    ({"delta": 1.5}, ValueError, "delta"),
    ({"delta": -0.1}, ValueError, "delta"),
    ({"noise": "laplace"}, ValueError, "noise"),
    ({"noise": "gaussian", "shift": False}, ValueError, "shift"),
    ({"d": 2.5}, TypeError, "d"),
    ({"d": 0}, ValueError, "d"),
    ({"horizon": 10.5}, TypeError, "horizon"),
    ({"bounds": "ignore"}, ValueError, "bounds"),
    ({"radius": "wide"}, ValueError, "radius"),
    ({"seed": -1}, ValueError, "seed"),
])
def test_bad_constructor_arguments_raise_naming_the_argument(kwargs, exc, name: str) -> None:
    args = {"d": 3, "horizon": 100, "epsilon": 1.0, "delta": 0.1, **kwargs}
    with pytest.raises(exc, match=f"`{name}`"):
        JointDPLinUCB(**args)


@pytest.mark.parametrize(("kwargs", "exc", "name"), [
    ({"d": 2.5}, TypeError, "d"),
    ({"regularizer": 0.0}, ValueError, "regularizer"),
    ({"alpha": 1.0}, ValueError, "alpha"),
    ({"horizon": 1}, ValueError, "alpha"),
    ({"refactor_every": 0}, ValueError, "refactor_every"),
])
def test_bad_linucb_arguments_raise_naming_the_argument(kwargs, exc, name: str) -> None:
    args = {"d": 3, "horizon": 100, **kwargs}
    with pytest.raises(exc, match=f"`{name}`"):
        LinUCB(**args)


LEARNERS = {
    "linucb": lambda n: LinUCB(3, n, seed=0),
    "gaussian": lambda n: JointDPLinUCB(3, n, 1.0, 0.1, seed=0),
    "wishart": lambda n: JointDPLinUCB(3, n, 1.0, 0.1, noise="wishart", seed=0),
    "wishart-persistent": lambda n: JointDPLinUCB(3, n, 1.0, 0.1, noise="wishart", padding="persistent", seed=0),
}


@pytest.mark.parametrize("kind", LEARNERS)
def test_bad_round_inputs_raise_and_leave_the_learner_usable(kind: str) -> None:
    learner = LEARNERS[kind](20)
    good = unit_rows(np.random.default_rng(18), 4, 3, 0.9)
    with pytest.raises(StateError):
        learner.update(0.5)  # update before select
    for bad in (np.zeros((0, 3)), np.ones((4, 2)), np.ones((2, 3, 3)), np.ones(4)):
        with pytest.raises(ValueError, match="`decision_set`"):
            learner.select(bad)
    nan_set = good.copy()
    nan_set[1, 2] = np.nan
    with pytest.raises(ValueError, match="`decision_set`"):
        learner.select(nan_set)
    i = learner.select(good)
    for reward in (math.nan, math.inf):
        with pytest.raises(ValueError, match="`reward`"):
            learner.update(reward)
    with pytest.raises(ValueError, match="`reward`"):
        learner.update(good[0], math.nan)
    with pytest.raises(ValueError, match="`x`"):
        learner.update(np.array([np.nan, 0.0, 0.0]), 0.5)
    with pytest.raises(ValueError, match="`x`"):
        learner.update(np.ones(4) * 0.1, 0.5)
    assert learner.t == 0
    learner.update(0.5)  # the pending selection survives the refused updates
    assert learner.t == 1
    assert 0 <= i < 4
    with pytest.raises(StateError):
        learner.update(0.5)  # that selection was consumed


@pytest.mark.parametrize("kind", LEARNERS)
def test_selecting_or_updating_past_the_horizon_raises_state_error(kind: str) -> None:
    n = 5
    learner = LEARNERS[kind](n)
    actions = unit_rows(np.random.default_rng(19), 3, 3, 0.9)
    for _ in range(n):
        learner.select(actions)
        learner.update(0.25)
    assert learner.t == n
    with pytest.raises(StateError, match="horizon"):
        learner.select(actions)
    with pytest.raises(StateError, match="horizon"):
        learner.update(actions[0], 0.25)
    with pytest.raises(StateError, match="horizon"):
        learner.ucb(actions)
    assert learner.t == n


# ---------------------------------------------------------------- pickling


@pytest.mark.parametrize("kind", ["gaussian", "wishart"])
def test_pickle_round_trip_mid_stream_changes_nothing(kind: str) -> None:
    # Node noise travels with the checkpoint and is never redrawn (DESIGN.md).
    _pickle_mid_stream(kind)


def test_linucb_pickle_round_trip_mid_stream_changes_nothing() -> None:
    # Regression: the inverse and its refactor schedule travel with the state.
    _pickle_mid_stream("linucb")


def _pickle_mid_stream(kind: str) -> None:
    d, k, n = 3, 8, 120
    learner = LEARNERS[kind](n)
    env = ShariffSheffetEnv(d, k, gap=0.1, seed=20)
    for t in range(1, 61):
        learner.update(env.reward(t, learner.select(env.decision_set(t))))
    # Pickle between select() and update(): the pending action travels too.
    actions = env.decision_set(61)
    i = learner.select(actions)
    with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
        back = pickle.loads(pickle.dumps(learner))
    assert type(back) is type(learner) and back.t == learner.t == 60
    if kind != "linucb":
        assert back.psd_failures == learner.psd_failures
        assert back.calibration == learner.calibration
    assert back.privacy == learner.privacy
    y = env.reward(61, i)
    learner.update(y)
    back.update(y)
    for t in range(62, n + 1):
        actions = env.decision_set(t)
        np.testing.assert_array_equal(back.ucb(actions), learner.ucb(actions))
        a, b = learner.select(actions), back.select(actions)
        assert a == b
        y = env.reward(t, a)
        learner.update(y)
        back.update(y)
    assert back.t == learner.t == n


def test_spawn_keeps_the_configuration_and_changes_the_noise() -> None:
    learner = JointDPLinUCB(3, 100, 1.0, 0.1, seed=1)
    probe = unit_rows(np.random.default_rng(21), 5, 3, 0.9)
    same, other = learner.spawn(1), learner.spawn(2)
    assert same.calibration == other.calibration == learner.calibration
    np.testing.assert_array_equal(same.ucb(probe), learner.ucb(probe))
    assert not np.array_equal(other.ucb(probe), learner.ucb(probe))


def test_reconstruction_helper_reads_the_exact_gram_matrix_without_noise() -> None:
    # Sanity of the reconstruction helper itself: with zero noise the
    # release is the exact Gram matrix of the rows, whatever the seed.
    d = 2
    radius = ConfidenceRadius(form="upper_bound", noise_sd=1.0, log_offset=1.0,
                              log_det_coefficient=0.0, offset=0.0)
    a = ReleasedLinUCB(d, 10, ZeroNoise(), 1.0, radius, seed=0)
    b = ReleasedLinUCB(d, 10, ZeroNoise(), 1.0, radius, seed=99)
    for r in ([0.6, 0.8, 1.0], [0.0, 1.0, -1.0]):
        a.observe(np.array(r[:2]), r[2])
        b.observe(np.array(r[:2]), r[2])
    rows = np.array(a.rows)
    np.testing.assert_allclose(a.counter.release(), rows.T @ rows, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(a.counter.release(), b.counter.release())


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-s"]))


CONTEXTUAL = {
    **LEARNERS,
    "local": lambda n: dp.LocalLinUCB(3, n, 1.0, 0.1, seed=0),
    "mishra-thakurta": lambda n: dp.PrivateContextualUCB(3, n, 1.0, seed=0),
}


@pytest.mark.parametrize("kind", CONTEXTUAL)
def test_the_engine_checks_a_float64_decision_set_with_the_python_messages(kind: str) -> None:
    # float64 arrays reach the engine binding unchecked (one pass there):
    # every layout gets the messages the Python check gave, in its order.
    learner = CONTEXTUAL[kind](20)
    good = unit_rows(np.random.default_rng(3), 5, 3, 0.9)
    nan_f = np.asfortranarray(good)
    nan_f[4, 2] = np.nan
    strided_inf = np.repeat(good, 2, axis=0)[::2]
    strided_inf[2, 0] = -np.inf
    cases = {
        "contains NaN or infinite entries": [nan_f, strided_inf, np.full((2, 3, 3), np.nan), np.full(3, np.inf)],
        r"expected shape \(k, 3\) with k >= 1, got \(0, 3\)": [np.zeros((0, 3))],
        r"expected shape \(k, 3\) with k >= 1, got \(5, 2\)": [good[:, :2]],
        r"expected shape \(k, 3\) with k >= 1, got \(\)": [np.float64(1.0), np.array(2.0)],
        r"expected shape \(k, 3\) with k >= 1, got \(1, 1, 3\)": [good[None, :1]],
        r"expected a 2-d \(k, 3\) array, got a 1-d array of shape \(3,\); a single action is x\[None, :\]": [
            good[0]],
        "complex values are not accepted": [good.astype(complex)],
    }
    for message, arrays in cases.items():
        for bad in arrays:
            for method in ("select", "ucb") if hasattr(learner, "ucb") else ("select",):
                with pytest.raises(ValueError, match=f"^invalid argument `decision_set`: {message}$"):
                    getattr(learner, method)(bad)
    # A non-finite entry anywhere in a C-contiguous set: each lane of the
    # binding's blocked test, the remainder, both sides of a block edge.
    rows = unit_rows(np.random.default_rng(4), 2000, 3, 0.9)
    for position in (0, 1, 7, 8, 13, 4095, 4096, 4103, 5991, 5999):
        for value in (np.nan, np.inf, -np.inf):
            bad = rows.copy()
            bad.flat[position] = value
            with pytest.raises(ValueError, match=r"^invalid argument `decision_set`: contains NaN or infinite"):
                learner.select(bad)
    # Every layout of a good set (and its list, or other byte order) plays the same action.
    layouts = [good, np.asfortranarray(good), np.repeat(good, 2, axis=0)[::2], good.tolist(), good.astype(">f8")]
    picks = {CONTEXTUAL[kind](20).select(a) for a in layouts}
    assert len(picks) == 1
    # The pending row is a copy: the caller may reuse its array before update().
    arr = good.copy()
    i = learner.select(arr)
    arr[:] = 0.0
    np.testing.assert_array_equal(learner._pending, good[i])
    learner.update(1)  # an int reward (not a float): converted as before
    assert learner.t == 1
