"""Batched elimination with the shuffled scalar sum (Hanna et al. Alg. 4).

Checks, against hand-computed values and the protocol's distribution:
- (g, b, p) of Cheu, Joseph, Mao & Peng 2021 Alg. 1 / Lemma 3.1, in Python
  and as the engine evaluates them for the n_ia it meets;
- the chosen parameters meet (epsilon, delta): the exact privacy curve of
  the binomial mechanism with sensitivity g (what the analyzer sees);
- released sums are unbiased with the stated variance;
- gamma_i of Alg. 4 line 10, the guarantee, clipping/refusal of rewards,
  survival of the optimal arm, pickling, simulate, bad inputs.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy import stats

import dpbandits as dp
from dpbandits import EliminationLinearBandit, LinearBanditEnv, simulate
from dpbandits.privacy.linucb_trust import binomial_shift_delta as binomial_delta
from dpbandits.privacy.shuffle_sum import (
    shuffle_sum_error_variance,
    shuffle_sum_gamma_scale,
    shuffle_sum_parameters,
    shuffle_sum_subgaussian,
)


def circle(k: int) -> np.ndarray:
    a = 2 * np.pi * np.arange(k) / k
    return np.column_stack([np.cos(a), np.sin(a)])


# ------------------------------------------------------------ parameters


def test_parameters_against_hand_values() -> None:
    # eps = 1, delta = 1e-5, n = 100: ln(2/delta) = 12.206073; g = max(ceil(20), 4) = 20;
    # b = ceil(180 * 400 * 12.206073 / 100) = ceil(8788.37) = 8789; p = 4394.19 / 8789 = 0.4999643.
    s = shuffle_sum_parameters(1.0, 1e-5, 100)
    assert (s.n, s.g, s.b) == (100, 20, 8789)
    assert s.p == pytest.approx(0.4999643, abs=1e-7)
    # eps = 10, n = 1: ln(2/delta) / eps^2 = 0.12206073; g = max(2, 4) = 4;
    # b = ceil(180 * 16 * 0.12206073) = ceil(351.53) = 352; p = 175.767 / 352 = 0.4993393.
    s = shuffle_sum_parameters(10.0, 1e-5, 1)
    assert (s.g, s.b) == (4, 352)
    assert s.p == pytest.approx(0.4993393, abs=1e-7)
    # eps = 0.1, delta = 0.01, n = 1e4: ln(200) / 0.01 = 529.83174; g = 200;
    # b = ceil(180 * 40000 * 529.83174 / 1e4) = ceil(381478.85) = 381479.
    s = shuffle_sum_parameters(0.1, 0.01, 10_000)
    assert (s.g, s.b) == (200, 381479)
    assert s.p == pytest.approx(0.4999998, abs=1e-7)
    # Noise variance b n p (1 - p) / g^2 ~ 90 ln(2/delta) / eps^2 (1 - p).
    assert s.noise_variance == pytest.approx(90 * 529.83174 * (1 - s.p), rel=1e-6)
    # Lemma 6's subgaussian parameter 180 ln(2/delta) / eps^2 and gamma's scale.
    assert shuffle_sum_subgaussian(1.0, 1e-5) == pytest.approx(2197.09308, rel=1e-8)
    assert shuffle_sum_gamma_scale(1.0, 1e-5, (-1.0, 1.0)) == pytest.approx(93.746319, rel=1e-7)
    assert shuffle_sum_gamma_scale(1.0, 1e-5, (-1.0, 1.0), "paper") == pytest.approx(46.873159, rel=1e-7)


def test_engine_evaluates_the_same_parameters() -> None:
    for eps, delta in [(1.0, 1e-5), (0.1, 0.01), (15.0, 0.5)]:
        lrn = EliminationLinearBandit(circle(5), 1000, "shuffle-sum", eps, delta, seed=0)
        for n in [1, 2, 3, 4, 5, 17, 100, 12_345, 10**6]:
            s = shuffle_sum_parameters(eps, delta, n)
            g, b, p = lrn._engine.shuffle_sum_parameters(n)
            assert (g, b, p) == (s.g, s.b, s.p), (eps, delta, n)


def test_exact_binomial_delta_matches_brute_force() -> None:
    for n, p, k, eps in [(50, 0.3, 4, 1.0), (200, 0.5, 5, 0.5), (30, 0.1, 3, 2.0)]:
        y = np.arange(n + k + 1)
        a, c = stats.binom.pmf(y, n, p), stats.binom.pmf(y - k, n, p)
        brute = max(np.maximum(a - math.exp(eps) * c, 0).sum(), np.maximum(c - math.exp(eps) * a, 0).sum())
        assert binomial_delta(eps, n, p, k) == pytest.approx(brute, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("eps", [0.05, 0.1, 1.0, 10.0, 15.0])
def test_parameters_meet_epsilon_delta_exactly(eps: float) -> None:
    # The analyzer's view is a function of sum_j xbar_j + Binomial(b n, p);
    # one user moves sum_j xbar_j by an integer in [-g, g] (any mixture of
    # such moves by joint convexity), and the divergence grows with the
    # shift (log-concave binomial), so the exact delta at shift g bounds the
    # protocol's delta(eps).
    for delta in [1e-8, 1e-5, 1e-2, 0.5]:
        for n in [1, 7, 100, 10_000, 10**6]:
            s = shuffle_sum_parameters(eps, delta, n)
            exact = binomial_delta(eps, s.b * n, s.p, s.g)
            assert exact <= delta, (eps, delta, n, exact)


# ------------------------------------------------------------ released sums


def test_released_sums_are_unbiased_with_the_stated_variance() -> None:
    # Two orthogonal actions with fixed rewards 0.3 and -0.55 in [-1, 1]
    # (x = 0.65 and 0.225 on the protocol's scale). Each released sum minus
    # n r, over its standard deviation w sqrt(Var01) (Var01 from the rounding
    # fractions and the binomial), is z with mean 0 and E z^2 = 1; the error
    # is a near-Gaussian binomial plus a few Bernoullis, so Var z^2 ~ 2.
    # Thresholds: 5 standard errors.
    acts = np.eye(2)
    rewards = np.array([0.3, -0.55])
    eps, delta = 1.0, 1e-3
    z = []
    for seed in range(300):
        lrn = EliminationLinearBandit(acts, 200, "shuffle-sum", eps, delta, seed=seed)
        eng = lrn._engine
        while eng.committed is None:
            a = eng.select()
            eng.update(a, float(rewards[a]))
        for h in lrn.history:
            for a, n, s in zip(h["support"], h["pulls"], h["released_sums"], strict=True):
                par = shuffle_sum_parameters(eps, delta, n)
                x = (rewards[a] + 1) / 2
                f = x * par.g - math.floor(x * par.g)
                var = 4.0 * shuffle_sum_error_variance(par, [f] * n)
                z.append((s - n * rewards[a]) / math.sqrt(var))
    z_arr = np.array(z)
    assert z_arr.size >= 1000
    assert abs(z_arr.mean()) < 5 / math.sqrt(z_arr.size), z_arr.mean()
    assert abs((z_arr**2).mean() - 1) < 5 * math.sqrt(2 / z_arr.size), (z_arr**2).mean()


def test_out_of_range_rewards_are_clipped_or_refused() -> None:
    acts = np.eye(2)
    # Range [2, 6]: a reward 9 is clipped to 6 (x = 1), a reward -3 to 2
    # (x = 0); rounding is then exact and the sum is r n + 4 (noise) / g.
    for seed in range(5):
        lrn = EliminationLinearBandit(acts, 300, "shuffle-sum", 2.0, 1e-4, reward_range=(2.0, 6.0), seed=seed)
        eng = lrn._engine
        while eng.committed is None:
            a = eng.select()
            lrn._pending = a
            lrn.update(9.0 if a == 0 else -3.0)
        for h in lrn.history:
            for a, n, s in zip(h["support"], h["pulls"], h["released_sums"], strict=True):
                sd = 4.0 * math.sqrt(shuffle_sum_error_variance(shuffle_sum_parameters(2.0, 1e-4, n), [0.0] * n))
                assert abs(s - (6.0 if a == 0 else 2.0) * n) < 6 * sd, (a, n, s, sd)
    strict = EliminationLinearBandit(acts, 300, "shuffle-sum", 2.0, 1e-4, reward_range=(2.0, 6.0), bounds="error",
                                     seed=0)
    strict.select()
    with pytest.raises(ValueError, match="reward"):
        strict.update(6.5)


# ------------------------------------------------------------ the learner


def test_gamma_follows_alg4_line10_and_the_guarantee() -> None:
    acts = circle(8)
    T, eps, delta = 5_000, 0.5, 1e-6
    for calibration, w in [("tight", 2.0), ("paper", 1.0)]:
        lrn = EliminationLinearBandit(acts, T, "shuffle-sum", eps, delta, calibration=calibration, seed=3)
        eng = lrn._engine
        while eng.batch_index == 0:
            eng.update(eng.select(), 0.0)
        d, B, q = 2, 1.5, lrn.schedule.lengths[0]
        L = math.log(4 * 8 * T**2)
        expected = math.sqrt(4 * d / q * L) + (2 * B * d**2 + 2 * d * L) / (eps * q) * math.sqrt(
            180 * math.log(2 / delta)) * w
        assert lrn.history[0]["gamma"] == pytest.approx(expected, rel=1e-12)
        g = lrn.privacy
        assert (g.model, g.epsilon, g.delta, g.calibration) == ("shuffle", eps, delta, calibration)
        assert "Lemma 3.1" in g.basis and "Thm 4" in g.basis


def test_optimal_arm_survives_every_batch_on_an_easy_instance() -> None:
    # Lemma 6: the good event (|<a, theta_i - theta*>| < gamma_i for every
    # batch and surviving a) fails with probability <= 1/T per run, so arm 0
    # (gap >= 0.19) survives every batch in all 6 runs unless an event of
    # probability <= 6/T = 2e-4 occurs.
    acts = circle(10)
    means = acts @ np.array([1.0, 0.0])
    for seed in range(6):
        lrn = EliminationLinearBandit(acts, 30_000, "shuffle-sum", 1.0, 1e-6, seed=seed)
        u = np.random.default_rng(100 + seed).random(30_000)
        engine, batch, t = lrn._engine, -1, 0
        while engine.committed is None:
            if engine.batch_index != batch:
                batch = engine.batch_index
                assert 0 in set(engine.active().tolist()), (seed, lrn.history)
            a = engine.select()
            engine.update(a, 1.0 if u[t] < 0.5 * (1 + means[a]) else -1.0)
            t += 1


def play(lrn: EliminationLinearBandit, means: np.ndarray, rng: np.random.Generator, rounds: int) -> list[int]:
    u = rng.random(rounds)
    out = []
    for t in range(rounds):
        a = lrn.select()
        out.append(a)
        lrn.update(1.0 if u[t] < 0.5 * (1 + means[a]) else -1.0)
    return out


def test_pickling_and_reseed_continue_identically() -> None:
    acts = circle(9)
    means = acts @ np.array([0.6, 0.8])
    a = EliminationLinearBandit(acts, 5_000, "shuffle-sum", 1.0, 1e-6, seed=11)
    play(a, means, np.random.default_rng(1), 700)
    # Research replays: bit-identical copies (a pickle for use is re-keyed).
    with dp.research_replay():
        b, c, d, e = (pickle.loads(pickle.dumps(a)) for _ in range(4))
    assert play(a, means, np.random.default_rng(2), 3000) == play(b, means, np.random.default_rng(2), 3000)
    assert a.history == b.history and a.privacy == b.privacy
    # Reseeding the restored engines: equal seeds continue equally, another
    # seed draws other protocol noise (rewards and pulls identical).
    c._engine.reseed(5)
    d._engine.reseed(5)
    e._engine.reseed(6)
    for x in (c, d, e):
        play(x, means, np.random.default_rng(2), 3000)
    assert c.history == d.history
    assert c.history[-1]["released_sums"] != e.history[-1]["released_sums"]


def test_simulate_runs_in_rust_and_is_reproducible() -> None:
    env = LinearBanditEnv(10, d=2, seed=4)
    lrn = EliminationLinearBandit(env.actions, 20_000, "shuffle-sum", 1.0, 1e-5, seed=5)
    r1 = simulate(lrn, env, seeds=[1, 2])
    r2 = simulate(lrn, env, seeds=[1, 2])
    assert np.array_equal(r1.regret, r2.regret)
    assert np.all(np.isfinite(r1.regret)) and r1.guarantee.model == "shuffle"


def test_bad_inputs_raise_clear_errors() -> None:
    acts = circle(5)
    with pytest.raises(ValueError, match="`delta`"):
        EliminationLinearBandit(acts, 100, "shuffle-sum", 1.0)
    with pytest.raises(ValueError, match="`delta`"):
        EliminationLinearBandit(acts, 100, "shuffle-sum", 1.0, 1.5)
    with pytest.raises(ValueError, match="`epsilon`"):
        EliminationLinearBandit(acts, 100, "shuffle-sum", 16.0, 1e-5)
    with pytest.raises(ValueError, match="`epsilon`"):
        EliminationLinearBandit(acts, 100, "shuffle-sum", None, 1e-5)
    with pytest.raises(ValueError, match="`epsilon`"):
        shuffle_sum_parameters(0.0, 1e-5, 10)
    with pytest.raises(ValueError, match="`n`"):
        shuffle_sum_parameters(1.0, 1e-5, 0)
