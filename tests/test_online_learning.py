"""Private online learning of Agarwal & Singh 2017: FTRL, FTPL, EXP2, SCRiBLe
and the loss-sequence environments."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.learners.online import research_replay
from dpbandits.privacy.agarwal_singh import ftrl_eta, ftrl_laplace_scale
from dpbandits.privacy.tree import tree_levels

# --- TreeBasedAgg (Alg. 2) -------------------------------------------------------


@pytest.mark.parametrize("horizon", [2, 3, 8, 100, 1000])
def test_every_release_carries_exactly_ceil_log2_t_draws(horizon: int) -> None:
    # The paper's TreeBasedAgg (the default counter under tight calibration
    # is the smooth binary mechanism: tests/test_counter_learners.py).
    learner = dp.PrivateFTRL(3, horizon, 1.0, seed=1, counter="binary")
    want = max(1, math.ceil(math.log2(horizon)))
    assert learner.noise_terms == want  # L~_0 of Alg. 1 lines 2-3
    for _ in range(horizon):
        learner.update(np.full(3, 0.5))
        assert learner.noise_terms == want


def test_release_noise_has_the_variance_of_ceil_log2_t_laplace_draws() -> None:
    # T = 100: every release (L~_0, t = 1 with one tree node, t = 7 with
    # three) is the exact sum plus 7 Laplace(b) draws: variance 7 * 2 b^2.
    # Sample variance of k = 200 * 50 entries: sd ~ var * sqrt(2/k + kurt/k)
    # with excess kurtosis 3/7; the test allows 5 such sd.
    n, T, reps = 50, 100, 200
    b = ftrl_laplace_scale("ball", n, T, 1.0).scale
    var = 7 * 2 * b**2
    k = n * reps
    tol = 5 * var * math.sqrt((2 + 3 / 7) / k)
    for rounds in (0, 1, 7):
        samples = []
        for seed in range(reps):
            eng = _core.FollowTheLeaderEngine(n, T, "ball", ("laplace", b), eta=1.0, seed=seed)
            for _ in range(rounds):
                eng.observe(np.zeros(n))
            samples.append(eng.released())
        v = float(np.var(np.concatenate(samples)))
        assert abs(v - var) < tol, (rounds, v, var)


# --- PrivateFTRL (Alg. 1) --------------------------------------------------------


def _reference_ftrl(geometry: str, eta: float, cum: np.ndarray) -> np.ndarray:
    if geometry == "simplex":
        w = np.exp(-eta * (cum - cum.min()))
        return w / w.sum()
    y = -eta * cum / 2
    if geometry == "ball":
        return y / max(1.0, float(np.linalg.norm(y)))
    return np.clip(y, -1, 1)


@pytest.mark.parametrize("geometry", ["simplex", "ball", "cube"])
def test_ftrl_without_noise_is_the_non_private_ftrl_decision_for_decision(geometry: str) -> None:
    n, T = 5, 300
    rng = np.random.default_rng(0)
    learner = dp.PrivateFTRL(n, T, None, geometry=geometry, seed=3)
    assert not learner.privacy.is_private
    eta = ftrl_eta(geometry, n, T)
    assert learner.eta == eta
    cum = np.zeros(n)
    for _ in range(T):
        np.testing.assert_allclose(learner.decision(), _reference_ftrl(geometry, eta, cum), rtol=1e-12, atol=1e-14)
        if geometry == "simplex":
            loss = rng.uniform(0, 1, n)
        else:
            loss = rng.normal(size=n)
            loss /= np.linalg.norm(loss, ord=2 if geometry == "ball" else 1) * 1.01
        learner.update(loss)
        cum += loss


def test_private_ftrl_reads_the_noisy_release_and_reports_pure_dp() -> None:
    learner = dp.PrivateFTRL(4, 1000, 0.5, seed=2, counter="binary")
    g = learner.privacy
    assert (g.model, g.epsilon, g.delta) == ("central", 0.5, 0.0)
    assert g.protects == "the loss sequence (one round's loss vector)"
    assert learner.noise_scale == pytest.approx(4 * tree_levels(1000) / 0.5)
    released = learner._engine.released()
    np.testing.assert_allclose(learner.decision(), _reference_ftrl("simplex", learner.eta, released), rtol=1e-12)
    assert np.any(released != 0)


def _weighted_fit(x: np.ndarray, m: np.ndarray, se: np.ndarray) -> float:
    """Chi-square of the weighted least-squares fit m ~ a x + b."""
    design = np.stack([x, np.ones_like(x)], axis=1) / se[:, None]
    coef, *_ = np.linalg.lstsq(design, m / se, rcond=None)
    return float(np.sum(((m - design @ coef * se) / se) ** 2))


def test_regret_grows_like_sqrt_t_plus_an_epsilon_term() -> None:
    # Stochastic experts: N = 10, expert 0 has mean loss 0.4, the rest 0.5.
    # Model (Thm 3.1): regret(T) = a sqrt(T) + b(eps). Means over 16
    # replicates at T in {1e3, 1e4, 1e5}; a fit with 1 degree of freedom
    # is accepted when its chi-square is below 10.83 (level 0.001).
    n, seeds = 10, 16
    env = dp.StochasticLosses([0.4] + [0.5] * 9)
    Ts = np.array([1_000, 10_000, 100_000])
    stats: dict[str, tuple[list[float], list[float]]] = {"none": ([], []), "10": ([], []), "1": ([], [])}
    for T in Ts:
        learners = {
            "none": dp.PrivateFTRL(n, int(T), None),
            "10": dp.PrivateFTRL(n, int(T), 10.0),
            "1": dp.PrivateFTRL(n, int(T), 1.0),
        }
        res = dp.simulate_many(learners, env, seeds=seeds)
        for key, r in res.items():
            stats[key][0].append(float(r.final_regret.mean()))
            stats[key][1].append(float(r.final_regret.std(ddof=1) / math.sqrt(seeds)))
        # Thm 3.1: regret <= 2 sqrt(T log N) + D_Lap with D_Lap = E[max Z - min Z]
        # over the simplex, Z the sum of ceil(log2 T) Lap(lambda)^N draws
        # (Monte Carlo, 4000 draws, plus 4 standard errors of both estimates).
        for key in ("10", "1"):
            lam = learners[key].noise_scale
            rng = np.random.default_rng(5)
            z = rng.laplace(0, lam, size=(4000, math.ceil(math.log2(T)), n)).sum(axis=1)
            rng_range = z.max(axis=1) - z.min(axis=1)
            d_lap = rng_range.mean() + 4 * rng_range.std() / math.sqrt(4000)
            bound = 2 * math.sqrt(T * math.log(n)) + d_lap
            assert stats[key][0][-1] <= bound + 4 * stats[key][1][-1], (T, key, stats[key][0][-1], bound)
    # Thm 3.1 bounds the regret by O(sqrt(T)); on this stochastic instance
    # it grows more slowly still (the learner settles on expert 0), so the
    # claim tested is the exponent: the log-log slope of the mean regret
    # from T = 1e3 to 1e5 is at most 1/2 (plus 3 standard errors by the
    # delta method). (An exact fit a sqrt(T) + b, tested before, is not
    # what the theorem says; it failed at chi-square 11.6 when the lattice
    # sampler's draws changed, with the same noise law.)
    for key in ("none", "10"):
        m, se = np.array(stats[key][0]), np.array(stats[key][1])
        slope = math.log(m[-1] / m[0]) / math.log(Ts[-1] / Ts[0])
        slope_se = math.hypot(se[0] / m[0], se[-1] / m[-1]) / math.log(Ts[-1] / Ts[0])
        assert slope <= 0.5 + 3 * slope_se, (key, m, se, slope)
    # Linear growth in T is rejected for the non-private learner.
    m, se = np.array(stats["none"][0]), np.array(stats["none"][1])
    assert _weighted_fit(Ts.astype(float), m, se) > 10.83
    # The privacy term is additive: at T = 1e5 eps = 1 pays more than eps = 10.
    assert stats["1"][0][-1] - stats["10"][0][-1] > 4 * math.hypot(stats["1"][1][-1], stats["10"][1][-1])


def test_simulated_regret_equals_regret_against_the_best_expert_in_hindsight() -> None:
    rng = np.random.default_rng(1)
    losses = rng.uniform(0, 1, size=(400, 3))
    env = dp.LossArray(losses)
    learner = dp.PrivateFTRL(3, 400, 2.0, seed=9)
    res = dp.simulate(learner, env, seeds=[4], record_every=400)
    # Replay the same learner online (replicate seed as simulate derives it).
    from dpbandits.sim import replicate_seed

    online = learner.spawn(replicate_seed(9, 4))
    played = 0.0
    for row in losses:
        played += row[online.select()]
        online.update(row)
    assert res.final_regret[0] == pytest.approx(played - losses.sum(axis=0).min(), abs=1e-9)


def test_ftrl_regret_on_the_switching_best_expert_meets_thm_3_1() -> None:
    # An oblivious adversary: Thm 3.1's bound 2 sqrt(T log N) (+ D_Lap when
    # private) holds for every loss sequence, so for every replicate.
    env = dp.SwitchingBestExpert(3, first_phase=3)
    T = 3 * (2**11 - 1)  # phases of 3, 6, ..., 3072 rounds
    res = dp.simulate_many({"none": dp.PrivateFTRL(3, T, None), "5": dp.PrivateFTRL(3, T, 5.0)}, env, seeds=4)
    assert res["none"].final_regret.mean() <= 2 * math.sqrt(T * math.log(3))
    # D_Lap = E[max_i Z_i - min_i Z_i] <= 2 E max_i |Z_i| <= 2 sqrt(3 E Z_1^2) = 2 sqrt(3 * 12 * 2) lambda
    # (Z_i: the sum of ceil(log2 T) = 13 Lap(lambda) draws; Jensen and max <= sum).
    lam = dp.PrivateFTRL(3, T, 5.0).noise_scale
    assert res["5"].final_regret.mean() <= 2 * math.sqrt(T * math.log(3)) + 2 * math.sqrt(3 * 13 * 2) * lam


# --- PrivateFTPL (Alg. 3) --------------------------------------------------------


def test_ftpl_plays_the_leader_of_the_noisy_release() -> None:
    learner = dp.PrivateFTPL(6, 500, 1.0, 1e-5, seed=4)
    assert (learner.privacy.epsilon, learner.privacy.delta) == (1.0, 1e-5)
    rng = np.random.default_rng(2)
    for _ in range(50):
        x = learner.decision()
        released = learner._engine.released()
        assert x[int(np.argmin(released))] == 1.0 and x.sum() == 1.0
        assert learner.select() == int(np.argmin(released))
        learner.update(rng.uniform(0, 1, 6))
    ball = dp.PrivateFTPL(3, 500, 1.0, 1e-5, geometry="ball", seed=4)
    ball.update([0.3, -0.4, 0.0])
    r = ball._engine.released()
    np.testing.assert_allclose(ball.decision(), -r / np.linalg.norm(r))
    with pytest.raises(ValueError, match="`delta`"):
        dp.PrivateFTPL(3, 500, 1.0)


# --- EXP2 with exploration (Alg. 4 / 5) ------------------------------------------


def test_exp2_probabilities_are_distributions_with_the_exploration_floor() -> None:
    learner = dp.EXP2(8, 5000, 0.5, seed=3)
    floor = learner.gamma / 8
    rng = np.random.default_rng(3)
    for _ in range(2000):
        p = learner.probabilities()
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all(p >= floor * (1 - 1e-12))
        i = learner.select()
        learner.update(float(rng.uniform(0, 1)) * (i != 3))
    assert learner.privacy.epsilon == 0.5 and learner.privacy.is_pure


def test_exp2_sampling_follows_p_t() -> None:
    # The empirical frequency of i_t ~ p_t at a fixed state (no update):
    # 20000 draws of a fresh engine reseeded each time from the same state;
    # 5 binomial standard errors per arm.
    learner = dp.EXP2(4, 1000, None, seed=1)
    for _ in range(40):
        learner.select()
        learner.update(1.0 if learner._pending == 0 else 0.2)
    p = learner.probabilities()
    state = learner._engine.to_bytes()
    counts = np.zeros(4)
    k = 20000
    for s in range(k):
        eng = _core.Exp2Engine.from_bytes(state)
        eng.reseed(s)
        counts[eng.select()] += 1
    assert np.all(np.abs(counts / k - p) < 5 * np.sqrt(p * (1 - p) / k))


def test_exp2_regret_on_a_stochastic_instance_is_below_thm_4_1s_bound() -> None:
    env = dp.StochasticLosses([0.3] + [0.6] * 4)
    T = 20_000
    res = dp.simulate_many({"np": dp.EXP2(5, T, None), "1": dp.EXP2(5, T, 1.0)}, env, seeds=8)
    for key, r in res.items():
        lam = 0.0 if key == "np" else 1.0
        # Lemma 4.4 with Thm 4.1's parameters: log N / eta + 2 eta T N (1 + lambda^2 log^2 NT) + 2 T gamma.
        learner = dp.EXP2(5, T, None if key == "np" else 1.0)
        bound = (
            math.log(5) / learner.eta
            + 2 * learner.eta * T * 5 * (1 + lam**2 * math.log(5 * T) ** 2)
            + 2 * T * learner.gamma
        )
        assert r.final_regret.mean() < bound
        assert r.final_regret.mean() < 0.3 * T  # far below uniform play (0.24 T)... and learning
    assert res["np"].final_regret.mean() < 0.1 * T


# --- SCRiBLe (Thm 4.5) -----------------------------------------------------------


def test_scrible_iterates_stay_strictly_inside_the_ball() -> None:
    learner = dp.SCRiBLe(3, 3000, 1.0, seed=5)
    theta = np.array([0.6, -0.8, 0.0])
    for _ in range(3000):
        y = learner.select()
        assert np.linalg.norm(y) <= 1 + 1e-12
        learner.update(float(theta @ y))
        assert np.linalg.norm(learner.iterate()) < 1


# --- online API, pickling, errors ------------------------------------------------


def _drive(learner: object, rounds: int, rng: np.random.Generator) -> list[float]:
    out = []
    for _ in range(rounds):
        if isinstance(learner, dp.SCRiBLe):
            y = learner.select()
            out.extend(y.tolist())
            learner.update(0.3 * float(y[0]))
        elif isinstance(learner, dp.EXP2):
            i = learner.select()
            out.append(i)
            learner.update(0.1 * i)
        else:
            x = learner.decision()  # type: ignore[attr-defined]
            out.extend(x.tolist())
            if learner.geometry == "simplex":  # type: ignore[attr-defined]
                out.append(learner.select())  # type: ignore[attr-defined]
                learner.update(rng.uniform(0, 1, 4))  # type: ignore[attr-defined]
            else:
                learner.update(rng.uniform(-0.2, 0.2, 4))  # type: ignore[attr-defined]
    return out


@pytest.mark.parametrize(
    "make",
    [
        lambda: dp.PrivateFTRL(4, 200, 1.0, seed=7),
        lambda: dp.PrivateFTRL(4, 200, 1.0, geometry="cube", seed=7),
        lambda: dp.PrivateFTPL(4, 200, 1.0, 1e-5, seed=7),
        lambda: dp.EXP2(4, 200, 1.0, seed=7),
        lambda: dp.SCRiBLe(4, 200, 1.0, seed=7),
    ],
)
def test_pickling_continues_identically(make) -> None:  # type: ignore[no-untyped-def]
    a = make()
    _drive(a, 37, np.random.default_rng(0))
    with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
        b = pickle.loads(pickle.dumps(a))
    assert repr(a) == repr(b) and a.privacy == b.privacy
    assert _drive(a, 50, np.random.default_rng(1)) == _drive(b, 50, np.random.default_rng(1))
    c = a.fork(99)
    assert c.t == a.t and c.seed == 99


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="`geometry`"):
        dp.PrivateFTRL(3, 100, 1.0, geometry="sphere")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`epsilon`"):
        dp.PrivateFTRL(3, 100, 0.0)
    with pytest.raises(ValueError, match="`horizon`"):
        dp.PrivateFTRL(3, 1, 1.0)
    with pytest.raises(ValueError, match="`bounds`"):
        dp.EXP2(3, 100, 1.0, bounds="ignore")  # type: ignore[arg-type]
    strict = dp.PrivateFTRL(3, 100, 1.0, bounds="error", seed=0)
    with pytest.raises(ValueError, match="`losses`"):
        strict.update([0.2, 1.5, 0.0])
    with pytest.raises(ValueError, match="`losses`"):
        strict.update([0.2, 0.5])
    with pytest.raises(ValueError, match="`losses`"):
        strict.update([0.2, np.nan, 0.0])
    ball = dp.PrivateFTRL(3, 100, 1.0, geometry="ball", bounds="error", seed=0)
    with pytest.raises(ValueError, match="losses"):
        ball.update([1.0, 1.0, 0.0])
    with pytest.raises(dp.errors.StateError):
        ball.select()
    with pytest.raises(ValueError, match="points of the ball"):  # an experts environment
        dp.simulate(ball, dp.StochasticLosses([0.5] * 3), seeds=1)
    bandit = dp.EXP2(3, 100, 1.0, bounds="error", seed=0)
    with pytest.raises(dp.errors.StateError):
        bandit.update(0.5)
    bandit.select()
    with pytest.raises(ValueError, match="`loss`"):
        bandit.update(2.0)
    scr = dp.SCRiBLe(2, 10, 1.0, bounds="error", seed=0)
    scr.select()
    with pytest.raises(ValueError, match="`loss`"):
        scr.update(3.0)
    with pytest.raises(ValueError, match="`means`"):
        dp.StochasticLosses([0.5, 1.5])
    with pytest.raises(ValueError, match="`losses`"):
        dp.LossArray([[0.5, -0.1]])
    short = dp.LossArray(np.full((10, 2), 0.5))
    with pytest.raises(ValueError, match="loss array has 10 rounds"):
        dp.simulate(dp.PrivateFTRL(2, 20, 1.0), short, seeds=1)
    # A full-information learner on a reward-only environment is refused.
    with pytest.raises(dp.errors.StateError, match="loss vectors"):
        dp.simulate(dp.PrivateFTRL(25, 20, 1.0), dp.ShariffSheffetEnv(5, 25), seeds=1)
