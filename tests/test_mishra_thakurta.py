"""Mishra & Thakurta 2015 private bandits (``dpbandits.learners.mab``,
``dpbandits.learners.mishra_thakurta``, ``dpbandits.privacy.mishra_thakurta``)
and the Bernoulli / Gaussian K-armed environments.

Claims checked:

- the formulas of ``privacy/mishra_thakurta.py`` equal the appendix's
  expressions evaluated by hand (App. B.1 Lemma 5, App. C.1 Lemma 9, Alg. 3
  line 2) and Shariff & Sheffet Cor. 15's (k - 1) ln n / (200 eps);
- every per-arm tree of PrivateUCB adds Laplace noise of the stated scale
  (E|X| = b, KS test, independent arms; over many fixed seeds), drawn once;
- with zero noise and no noise term, the private engine is UCB1, decision
  for decision;
- regret on an easy instance orders UCB1 < PrivateUCB(eps = 10) <
  PrivateUCB(eps = 1) (one-sided Welch tests at level 1e-3 across seeds);
- the contextual learners take the fallback branch exactly when the
  released A~ is not positive definite (checked by numpy's eigenvalues);
- simulate() equals the online loop; pickling mid-stream continues
  identically; bad inputs raise clear errors.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy import stats

import dpbandits
from dpbandits import _core
from dpbandits.envs import BernoulliBandit, GaussianBandit, ShariffSheffetEnv
from dpbandits.errors import StateError
from dpbandits.learners import (
    UCB1,
    PrivateContextualThompsonSampling,
    PrivateContextualUCB,
    PrivateThompsonSampling,
    PrivateUCB,
    ThompsonSampling,
)
from dpbandits.learners.online import research_replay
from dpbandits.privacy import mishra_thakurta as mt
from dpbandits.sim import simulate, simulate_many

# ------------------------------------------------------------ formulas


def test_private_ucb_node_scale_is_lemma5s_laplace_scale() -> None:
    # Paper: Lap(k log2 T / eps), T = 1024 -> log2 T = 10.
    assert mt.private_ucb_node_scale(10, 1024, 1.0) == pytest.approx(10 * 10 / 1.0)
    assert mt.private_ucb_node_scale(4, 1024, 0.5, width=2.0) == pytest.approx(4 * 2.0 * 10 / 0.5)
    # Tight: tree_levels(1024) = 11 nodes per leaf, no factor k.
    assert mt.private_ucb_node_scale(10, 1024, 1.0, calibration="tight") == pytest.approx(11.0)
    assert mt.private_ucb_node_scale(10, 1000, 2.0, calibration="tight") == pytest.approx(10 / 2.0)


def test_lemma5_bound_is_the_appendix_expression() -> None:
    # App. B.1: k log^2 T log(k T log T / gamma) / eps with b = k log2 T / eps.
    k, T, eps, gamma = 10, 1024, 1.0, 0.01
    b = mt.private_ucb_node_scale(k, T, eps)
    want = k * 10**2 * math.log(k * T * 10 / gamma) / eps
    assert mt.lemma5_noise_bound(b, k, T, gamma) == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(16141.81, abs=0.01)
    # Tight: 11 nodes: 11 * b * ln(k T 11 / gamma).
    assert mt.lemma5_noise_bound(11.0, k, T, gamma, "tight") == pytest.approx(
        11 * 11.0 * math.log(k * T * 11 / gamma), rel=1e-12
    )


def test_lemma9_batch_sizes_and_schedule() -> None:
    # m_i = 192 k log2 T / (eps Delta_i^2): k = 2, T = 1024, eps = 1.
    assert mt.lemma9_batch_size(2, 1024, 1.0, 0.5) == 15360
    assert mt.lemma9_batch_size(2, 1024, 1.0, 0.25) == 61440
    assert mt.lemma9_batch_size(3, 1000, 2.0, 0.5) == math.ceil(192 * 3 * math.log2(1000) / (2.0 * 0.25))
    # T = 2^17: m_1 = 192*2*17*4 = 26112 (2 m_1 <= T), m_2 = 104448 (2 m_2 > T).
    s = mt.gap_estimation_schedule(2, 2**17, 1.0, 1.0, tree_noise_bound=100.0)
    assert s.gaps == (0.5,)
    assert s.batch_sizes == (26112,)
    assert s.batch_scales[0] == pytest.approx(2 * 2 / 26112)  # paper: 2k w / (eps m_i)
    assert s.random_pulls == (200,)  # ceil(100 / 0.5)
    tight = mt.gap_estimation_schedule(2, 2**17, 1.0, 1.0, 100.0, "tight")
    assert tight.batch_scales[0] == pytest.approx(2 / 26112)
    longer = mt.gap_estimation_schedule(2, 2**20, 1.0, 1.0, 10.0)
    # T = 2^20: m_3 = 192*2*20*64 = 491520 (2 m_3 <= T), m_4 does not fit.
    assert longer.gaps == (0.5, 0.25, 0.125)
    assert longer.batch_sizes == (30720, 122880, 491520)


def test_contextual_eps0_and_node_scales() -> None:
    # eps0 = 2 eps / (d^2 + 3d): d = 5 -> 2 / 40.
    assert mt.contextual_entry_epsilon(1.0, 5) == pytest.approx(0.05)
    assert mt.contextual_entry_epsilon(3.0, 1) == pytest.approx(1.5)
    # Paper: Lap(log2 T * sensitivity / eps0); A entries L^2 = 1, b entries 2 L B = 2.
    a, b = mt.contextual_node_scales(5, 1024, 1.0)
    assert (a, b) == (pytest.approx(10 / 0.05), pytest.approx(20 / 0.05))
    a, b = mt.contextual_node_scales(5, 1024, 1.0, L=2.0, B=0.5, calibration="tight")
    assert (a, b) == (pytest.approx(11 * 4 / 0.05), pytest.approx(11 * 2 / 0.05))


def test_cor15_lower_bound() -> None:
    # (k - 1) ln n / (200 eps): k = 10, n = 10^6, eps = 1 -> 9 * 13.8155 / 200.
    assert mt.private_mab_regret_lower_bound(10, 10**6, 1.0) == pytest.approx(0.621698, abs=1e-6)
    assert mt.private_mab_regret_lower_bound(2, 100, 0.1) == pytest.approx(math.log(100) / 20)
    with pytest.raises(ValueError, match="`k`"):
        mt.private_mab_regret_lower_bound(1, 100, 1.0)


def test_formula_inputs_are_checked() -> None:
    with pytest.raises(ValueError, match="`calibration`"):
        mt.private_ucb_node_scale(2, 100, 1.0, calibration="loose")
    with pytest.raises(ValueError, match="`gamma`"):
        mt.lemma5_noise_bound(1.0, 2, 100, 1.5)
    with pytest.raises(ValueError, match="`gap`"):
        mt.lemma9_batch_size(2, 100, 1.0, 0.0)
    with pytest.raises(ValueError, match="`epsilon`"):
        mt.contextual_entry_epsilon(-1.0, 3)


# --------------------------------------------------- per-arm Laplace trees


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_each_arm_tree_adds_laplace_of_the_stated_scale(calibration: str) -> None:
    k, T, eps, n_seeds = 3, 1024, 1.0, 500
    noise = []
    for seed in range(n_seeds):
        learner = PrivateUCB(k, T, eps, calibration=calibration, seed=seed)
        for _ in range(k):  # unpulled arms come first, in order
            learner.select()
            learner.update(0.25)
        assert list(learner.pulls) == [1] * k
        noise.append(learner.released_sums() - 0.25)  # one node: a single Lap(b)
    x = np.asarray(noise)
    b = learner.node_scale
    assert b == pytest.approx(k * 10 / eps if calibration == "paper" else 11 / eps)
    flat = x.ravel()
    n = flat.size
    # E|X| = b and Var|X| = b^2: 5 standard errors.
    assert abs(np.abs(flat).mean() - b) < 5 * b / math.sqrt(n)
    assert abs(flat.mean()) < 5 * math.sqrt(2) * b / math.sqrt(n)
    assert stats.kstest(flat, stats.laplace(scale=b).cdf).pvalue > 1e-3
    # Arms have independent trees: |corr| below 5 / sqrt(n_seeds).
    for i in range(k):
        for j in range(i + 1, k):
            assert abs(np.corrcoef(x[:, i], x[:, j])[0, 1]) < 5 / math.sqrt(n_seeds)


def test_node_noise_is_drawn_once() -> None:
    learner = PrivateUCB(3, 1024, 1.0, seed=1)
    for _ in range(3):
        learner.select()
        learner.update(1.0)
    first = learner.released_sums().copy()
    # More pulls of other arms leave an arm's release unchanged.
    arm = learner.select()
    learner.update(0.0)
    after = learner.released_sums()
    others = [a for a in range(3) if a != arm]
    assert np.array_equal(first[others], after[others])


def test_zero_noise_private_ucb_is_ucb1_decision_for_decision() -> None:
    k, T = 6, 6000
    means = np.linspace(0.8, 0.55, k)
    ucb = UCB1(k, T, seed=0)
    zero = _core.MabEngine(k, T, index="ucb", noise_bound=0.0, noise=("zero",), seed=0)
    env = BernoulliBandit(means, seed=3)
    for t in range(T):
        a = ucb.select()
        assert zero.select() == a, f"round {t}"
        y = env.pull(a)
        ucb.update(y)
        zero.observe(a, y)
    # Both read the same (exact) sums; UCB1 spread its pulls.
    assert np.array_equal(zero.sums(), ucb.released_sums())
    assert ucb.pulls.min() > 10


# --------------------------------------------------------- regret ordering


def _welch_less(a: np.ndarray, b: np.ndarray) -> float:
    return float(stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue)


def test_regret_orders_non_private_then_large_then_small_epsilon() -> None:
    T, seeds = 20_000, 12
    env = BernoulliBandit([0.9, 0.6, 0.5])
    learners = {
        "ucb1": UCB1(3, T),
        "eps10": PrivateUCB(3, T, 10.0),
        "eps1": PrivateUCB(3, T, 1.0),
    }
    res = simulate_many(learners, env, seeds=seeds)
    f = {k: r.final_regret for k, r in res.items()}
    assert _welch_less(f["ucb1"], f["eps10"]) < 1e-3
    assert _welch_less(f["eps10"], f["eps1"]) < 1e-3
    # The App. D.1 interval has no noise term, so no ordering is claimed
    # for it (a strongly negative early node can lock an arm out).


# ------------------------------------------------------ Thompson sampling


def test_thompson_sampling_learns_and_private_phases_run_in_order() -> None:
    T = 20_000
    env = BernoulliBandit([0.9, 0.5, 0.4])
    res = simulate_many(
        {"beta": ThompsonSampling(3, T), "gauss": ThompsonSampling(3, T, prior="gaussian")}, env, seeds=4,
    )
    for name, r in res.items():
        # Far below round-robin's (0.4 + 0.5) / 3 per round.
        assert r.final_regret.max() < 0.1 * T, name
    # The private learner without gap estimation (App. D.1) locks onto a
    # suboptimal arm in some runs (an early negative node of the best arm's
    # tree; measured 12 of 80 runs with lattice noise, 14 of 80 with
    # floating-point noise, at eps = 10, T = 2e4): most runs learn. With a
    # lock-in rate of 0.16, 40 runs have fewer than 26 learning runs with
    # probability 8e-4 (binomial).
    private = simulate_many({"private": PrivateThompsonSampling(3, T, 10.0, gap_estimation=False)}, env,
                            seeds=list(range(1, 41)))["private"]
    assert np.count_nonzero(private.final_regret < 0.1 * T) >= 26
    assert np.median(private.final_regret) < 0.01 * T
    # Phases: round-robin batches, then random pulls, then sampling.
    learner = PrivateThompsonSampling(2, 2**14, 100.0, seed=1)
    s = learner.schedule
    assert s is not None and learner.phase == "gap"
    rng = np.random.default_rng(0)
    pulls = []
    while learner.phase == "gap":
        a = learner.select()
        pulls.append(a)
        learner.update(float(rng.random() < (0.9 if a == 0 else 0.1)))
    assert pulls[:4] == [0, 1, 0, 1]
    means = learner.released_batch_means()
    assert means.shape[1] == 2
    # The first batch of gap 0.5 already separates 0.9 from 0.1.
    assert means.shape[0] == 1 and means[0, 0] - means[0, 1] > s.gaps[0]
    assert len(pulls) == 2 * s.batch_sizes[0]
    assert learner.phase == "random"
    for _ in range(2 * s.random_pulls[0]):
        learner.select()
        learner.update(0.5)
    assert learner.phase == "index"
    assert list(learner.pulls) == [s.random_pulls[0]] * 2


# ------------------------------------------------------ contextual (Alg. 3/4)


@pytest.mark.parametrize("cls", [PrivateContextualUCB, PrivateContextualThompsonSampling])
def test_fallback_exactly_when_release_is_not_positive_definite(cls: type) -> None:
    d, T = 3, 400
    learner = cls(d, T, epsilon=5.0, seed=2)
    env = ShariffSheffetEnv(d, 9, seed=4)
    non_pd = 0
    for t in range(1, T + 1):
        a_tilde, _ = learner.released()
        eig = np.linalg.eigvalsh(a_tilde)
        assert abs(eig.min()) > 1e-9 * max(1.0, np.abs(eig).max()), "borderline release"
        is_pd = eig.min() > 0
        non_pd += not is_pd
        i = learner.select(env.decision_set(t))
        assert learner.last_fallback == (not is_pd), f"round {t}"
        learner.update(env.reward(t, i))
    assert 0 < non_pd < T
    assert learner.fallbacks == non_pd


def test_contextual_learners_simulate_and_report_guarantees() -> None:
    env = ShariffSheffetEnv(3, 9)
    ucb = PrivateContextualUCB(3, 2000, 1.0, calibration="paper")
    res = simulate(ucb, env, seeds=2)
    assert res.final_regret.shape == (2,) and np.all(np.isfinite(res.final_regret))
    g = ucb.privacy
    assert g.model == "joint" and g.protects == "contexts and rewards"
    # Paper calibration counts log2 T nodes; the reported epsilon is exact.
    assert g.epsilon == pytest.approx(1.0 * 11 / math.log2(2000))
    tight = PrivateContextualThompsonSampling(3, 2000, 1.0, calibration="tight")
    assert tight.privacy.epsilon == 1.0 and tight.privacy.calibration == "tight"


# ----------------------------------------------- guarantees and simulate


def test_guarantees() -> None:
    assert not UCB1(2, 10).privacy.is_private
    assert not ThompsonSampling(2, 10).privacy.is_private
    g = PrivateUCB(10, 10**6, 0.5).privacy
    assert (g.model, g.epsilon, g.delta, g.protects) == ("central", 0.5, 0.0, "rewards")
    # k = 1, paper calibration: levels / log2 T > 1, the exact epsilon is reported.
    one = PrivateUCB(1, 1000, 1.0).privacy
    assert one.epsilon == pytest.approx(10 / math.log2(1000))
    ts = PrivateThompsonSampling(4, 10**5, 1.0, calibration="tight")
    assert ts.privacy.epsilon == pytest.approx(1.0)


def test_simulate_equals_the_online_loop() -> None:
    means = [0.7, 0.5, 0.3]
    learner = PrivateUCB(3, 3000, 5.0, confidence="empirical")
    res = simulate(learner, GaussianBandit(means, sigma=0.3), seeds=[11], record_every=3000)
    online = learner.spawn(11)
    env = GaussianBandit(means, sigma=0.3, seed=11)
    regret = 0.0
    for _ in range(3000):
        a = online.select()
        regret += env.regret(a)
        online.update(env.pull(a))
    assert res.final_regret[0] == pytest.approx(regret, rel=1e-12)


# ---------------------------------------------------------------- pickling


@pytest.mark.parametrize(
    "make",
    [
        lambda: PrivateUCB(4, 500, 1.0, seed=3),
        lambda: PrivateThompsonSampling(2, 2**12, 100.0, seed=3),
        lambda: ThompsonSampling(4, 500, seed=3),
    ],
)
def test_k_armed_pickle_round_trip_continues_identically(make) -> None:  # type: ignore[no-untyped-def]
    learner = make()
    env = BernoulliBandit([0.8, 0.4, 0.6, 0.2][: learner.k], seed=1)
    for _ in range(100):
        learner.update(env.pull(learner.select()))
    with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
        back = pickle.loads(pickle.dumps(learner))
    env_back = pickle.loads(pickle.dumps(env._engine))
    for _ in range(200):
        a, b = learner.select(), back.select()
        assert a == b
        y = env.pull(a)
        assert env_back.pull(b) == y
        learner.update(y)
        back.update(y)
    assert np.array_equal(learner.released_sums(), back.released_sums())


def test_contextual_pickle_round_trip_continues_identically() -> None:
    learner = PrivateContextualThompsonSampling(3, 300, 2.0, seed=5)
    env = ShariffSheffetEnv(3, 9, seed=6)
    for t in range(1, 101):
        learner.select(env.decision_set(t))
        learner.update(env.reward(t, 0))
    with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
        back = pickle.loads(pickle.dumps(learner))
    for t in range(101, 200):
        actions = env.decision_set(t)
        assert learner.select(actions) == back.select(actions)
        y = env.reward(t, 0)
        learner.update(y)
        back.update(y)
    assert learner.fallbacks == back.fallbacks
    assert np.array_equal(learner.released()[0], back.released()[0])


def test_fork_draws_independent_future_noise() -> None:
    learner = PrivateUCB(2, 100, 1.0, seed=4)
    learner.select()
    learner.update(0.5)
    twin = learner.fork(seed=9)
    assert np.array_equal(twin.released_sums(), learner.released_sums())  # shared past
    for lrn in (learner, twin):
        for _ in range(3):
            lrn.select()
            lrn.update(0.5)
    assert not np.array_equal(twin.released_sums(), learner.released_sums())


# ------------------------------------------------------------- bad inputs


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="`epsilon`"):
        PrivateUCB(3, 100, 0.0)
    with pytest.raises(ValueError, match="`k`"):
        PrivateUCB(0, 100, 1.0)
    with pytest.raises(ValueError, match="`reward_range`"):
        PrivateUCB(3, 100, 1.0, reward_range=(1.0, 0.0))
    with pytest.raises(ValueError, match="`bounds`"):
        PrivateUCB(3, 100, 1.0, bounds="ignore")
    with pytest.raises(ValueError, match="`confidence`"):
        PrivateUCB(3, 100, 1.0, confidence="hoeffding")
    with pytest.raises(ValueError, match="`calibration`"):
        PrivateThompsonSampling(3, 100, 1.0, calibration="exact")
    with pytest.raises(ValueError, match="`prior`"):
        ThompsonSampling(3, 100, prior="uniform")
    with pytest.raises(ValueError, match="`means`"):
        BernoulliBandit([0.5, 1.5])
    with pytest.raises(ValueError, match="`sigma`"):
        GaussianBandit([0.5], sigma=0.0)
    strict = PrivateUCB(2, 100, 1.0, bounds="error")
    with pytest.raises(StateError):
        strict.update(0.5)
    strict.select()
    with pytest.raises(ValueError, match="reward range"):
        strict.update(1.5)
    with pytest.raises(ValueError, match="`reward`"):
        strict.update(float("nan"))
    # Clipping: a reward of 5 counts as 1.
    clip = PrivateUCB(2, 100, 1.0, seed=0)
    zero = _core.MabEngine(2, 100, noise=("zero",), seed=0)
    clip.select()
    clip.update(5.0)
    zero.observe(0, 5.0)
    assert zero.sums()[0] == 1.0
    # The horizon is enforced.
    short = UCB1(2, 2)
    for _ in range(2):
        short.select()
        short.update(0.0)
    with pytest.raises(StateError):
        short.select()
    ctx = PrivateContextualUCB(3, 10, 1.0)
    with pytest.raises(ValueError, match="decision_set"):
        ctx.select(np.ones((4, 2)))
    with pytest.raises(ValueError, match="`alpha`"):
        PrivateContextualUCB(3, 10, 1.0, alpha=-1.0)
    strict_ctx = PrivateContextualUCB(2, 10, 1.0, bounds="error")
    strict_ctx.select(np.array([[3.0, 4.0]]))
    with pytest.raises(ValueError, match="x"):
        strict_ctx.update(0.5)
    # A K-armed learner refuses a contextual environment and vice versa.
    with pytest.raises(ValueError, match="without features"):
        simulate(UCB1(9, 100), ShariffSheffetEnv(3, 9), seeds=1)
    with pytest.raises(ValueError, match="decision_set"):
        simulate(PrivateContextualUCB(3, 100, 1.0), BernoulliBandit([0.5, 0.4]), seeds=1)
    assert dpbandits.PrivateUCB is PrivateUCB


def test_contextual_realized_epsilon_by_hand() -> None:
    # d = 2, T = 8 (tree_levels = 4), L = 1, B = 0.5, scales 6 and 3:
    # 3 A trees * 4 * 1 / 6 + 2 b trees * 4 * (2 * 1 * 0.5) / 3 = 2 + 8/3.
    from dpbandits.privacy.mishra_thakurta import contextual_realized_epsilon

    assert contextual_realized_epsilon(2, 8, 6.0, 3.0, L=1.0, B=0.5) == pytest.approx(2.0 + 8.0 / 3.0, rel=1e-15)
