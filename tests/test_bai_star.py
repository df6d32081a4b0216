"""AdaP-TT* (dpbandits.AdaPTTStar): AdaP-TT's doubling episodes with the
Chernoff transportation costs of one noise draw per statistic in the
challenger and the stopping rule. The Rust simulation against a
step-by-step run, delta-correctness over 2,000 replicates (and the power of
that test on a planted bug), the noise scale against hand-computed values,
and audits of the exact released episode sums (slow)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.learners.bai import AdaPTT, AdaPTTStar
from dpbandits.privacy.bai import batch_sum_laplace_scale, chernoff_pair_thresholds

SMALL = [0.7, 0.5, 0.3]
HARD = [0.6, 0.5, 0.4]


def _binomial_upper_tail(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) >= k), exactly (log-space terms)."""
    total = 0.0
    for i in range(k, n + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                          + i * math.log(p) + (n - i) * math.log1p(-p))
    return min(total, 1.0)


def _run(learner, env, limit: int = 10**7):  # type: ignore[no-untyped-def]
    while not learner.should_stop and learner.samples < limit:
        arm = learner.select()
        learner.update(arm, env.pull(arm))
    return learner.samples, learner.recommendation


@pytest.mark.parametrize("sampler", ["lattice", "float"])
def test_simulate_equals_step_by_step(sampler: str) -> None:
    learner = AdaPTTStar(3, 0.1, 1.0, sampler=sampler)  # type: ignore[arg-type]
    runs = learner.simulate(SMALL, reps=6, seed=11)
    for r in range(6):
        twin = learner._replicate(11, r)
        env = _core.BaiBernoulliRewards(SMALL, 11, r)
        samples, rec = _run(twin, env)
        assert samples == int(runs.stopping_times[r])
        assert rec == int(runs.recommendations[r])
        assert twin.should_stop == bool(runs.stopped[r])


def test_means_are_the_last_episode() -> None:
    """Forgetting: after arm a's episodes of 1, 1, 2, 4 rewards its released
    statistic is the last episode's (4 rewards of value 1: mean near 1),
    whatever the earlier episodes held; episodes end at 1, 2, 4, 8."""
    learner = AdaPTTStar(2, 0.1, 1000.0, seed=0)
    for arm in (0, 1):
        for n in range(8):
            learner.update(arm, 0.0 if n < 4 else 1.0)
    assert learner.policy_version == 8
    assert np.all(np.abs(learner.released_means() - 1.0) < 0.05)


def test_delta_correct_on_a_small_instance() -> None:
    """Empirical error over 2,000 replicates at delta = 0.1: a one-sided
    binomial test of H0: error rate <= delta at level 0.01 does not reject."""
    delta, reps = 0.1, 2000
    runs = AdaPTTStar(3, delta, 1.0).simulate(HARD, reps=reps, seed=2024)
    errors = int(runs.errors.sum())
    p_value = _binomial_upper_tail(errors, reps, delta)
    print(f"AdaPTTStar: {errors} errors in {reps}, mean tau {runs.mean_stopping_time:.0f}, p = {p_value:.3g}")
    assert runs.stopped.all()
    assert p_value > 0.01


@pytest.mark.slow
def test_delta_correct_in_the_high_privacy_regime() -> None:
    """The same test at epsilon = 0.1 (the noise dominates the cost)."""
    delta, reps = 0.1, 2000
    runs = AdaPTTStar(3, delta, 0.1).simulate(SMALL, reps=reps, seed=2025)
    errors = int(runs.errors.sum())
    p_value = _binomial_upper_tail(errors, reps, delta)
    print(f"AdaPTTStar eps=0.1: {errors} errors in {reps}, mean tau {runs.mean_stopping_time:.0f}, p = {p_value:.3g}")
    assert runs.stopped.all()
    assert p_value > 0.01


def _engine(learner: AdaPTTStar, thresholds: list[float], noise: object = None) -> _core.BaiEngine:
    return _core.BaiEngine(3, rule="adap_chernoff", epsilon=learner.epsilon, first=1, ratio=2.0, forget=True,
                           noise=learner.noise_wire if noise is None else noise, thresholds=thresholds, c1=0.0,
                           seed=0, stop="chernoff")


def test_the_learner_is_its_engine_with_the_c5_thresholds() -> None:
    learner = AdaPTTStar(3, 0.1, 1.0)
    same = _engine(learner, chernoff_pair_thresholds(3, 0.1, 2 * 28))
    assert same.config_json() == learner._engine.config_json()


def test_the_binomial_test_flags_a_broken_stopping_rule() -> None:
    """The error-rate test has power: the thresholds of (C5) replaced by
    ln(1 / delta) / 4 (a planted bug: no union over the episode indices, a
    quarter of the exponent) are rejected by the same test."""
    learner = AdaPTTStar(3, 0.1, 1.0)
    broken = _engine(learner, [math.log(10.0) / 4] * 56)
    _, rec, stopped = broken.simulate(HARD, 2000, 2024)
    errors = int(((rec != 0) | ~stopped).sum())
    assert _binomial_upper_tail(errors, 2000, 0.1) < 0.01


def test_adapted_costs_stop_sooner_than_adap_tt() -> None:
    """The point of the adapted transportation costs: on I1 at epsilon = 1,
    AdaP-TT* needs fewer samples than AdaP-TT (one-sided Welch test at 1e-3)."""
    means = [0.75, 0.625, 0.5, 0.375, 0.25]
    star = AdaPTTStar(5, 0.01, 1.0).simulate(means, reps=100, seed=5)
    adap = AdaPTT(5, 0.01, 1.0).simulate(means, reps=100, seed=5)
    t1, t2 = star.stopping_times.astype(float), adap.stopping_times.astype(float)
    z = (t2.mean() - t1.mean()) / math.sqrt(t1.var(ddof=1) / t1.size + t2.var(ddof=1) / t2.size)
    print(f"AdaP-TT* {t1.mean():.0f}, AdaP-TT {t2.mean():.0f}, z = {z:.1f}")
    assert z > 3.1
    assert star.error_rate == 0.0


def test_noise_scale_and_exact_lattice_epsilon_by_hand() -> None:
    """Laplace(1 / eps) per episode sum of rewards in [0, 1] (sensitivity 1);
    at eps = 0.3 the lattice is 2^-18 and the scale ceil(2^18 / 0.3) =
    873814 steps, so the exact epsilon is 2^18 / 873814 = 0.29999977..."""
    assert batch_sum_laplace_scale(0.3) == pytest.approx(10.0 / 3.0, rel=1e-15)
    assert batch_sum_laplace_scale(4.0) == 0.25
    learner = AdaPTTStar(3, 0.1, 0.3)
    assert learner.noise_wire == ("lattice_laplace", 873814, 18)
    assert learner.privacy.epsilon == pytest.approx(262144 / 873814, rel=1e-12)
    assert learner.privacy.epsilon <= 0.3
    g = learner.privacy
    assert g.model == "central" and g.delta == 0.0 and g.protects == "rewards" and "lattice" in g.basis
    assert AdaPTTStar(3, 0.1, 0.3, sampler="float").privacy.sampler == "float"


def test_hostile_arguments() -> None:
    for eps in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            AdaPTTStar(3, 0.05, eps)
    for delta in (0.0, 1.0):
        with pytest.raises(ValueError, match="delta"):
            AdaPTTStar(3, delta, 1.0)
    with pytest.raises(ValueError, match="beta"):
        AdaPTTStar(3, 0.1, 1.0, beta=0.0)
    with pytest.raises(ValueError, match="secure"):
        AdaPTTStar(3, 0.1, 1.0, secure=True, sampler="float")
    with pytest.raises(TypeError, match="secure"):
        AdaPTTStar(3, 0.1, 1.0, secure=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="secure"):
        AdaPTTStar(3, 0.1, 1.0, secure=True).simulate(SMALL, 2)
    with pytest.raises(ValueError, match="epsilon"):
        _core.BaiEngine(3, rule="adap_chernoff", first=1, ratio=2.0, forget=True, stop="chernoff")
    with pytest.raises(dp.errors.CheckpointError, match="AdaPTTStar"):
        AdaPTT.from_bytes(AdaPTTStar(3, 0.1, 1.0, seed=0).to_bytes())


# ---------------------------------------------------------------------------
# Audits of the exact released episode sums (slow)

AUDIT_N = 1_000_000
REWARDS = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0] * 4


def _episode_release(engine, round_: int):  # type: ignore[no-untyped-def]
    """Neighbouring reward sequences differ in observation ``round_`` (0 vs
    1); the output is the released sum of the episode holding it."""

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        r = list(REWARDS)
        r[round_] = float(side)
        return np.nan_to_num(engine._audit_runs(r, round_, count, seed), nan=-1e9)

    return mechanism


@pytest.mark.slow
def test_audit_released_episode_sums() -> None:
    learner = AdaPTTStar(3, 0.05, 1.0, seed=0)
    g = learner.privacy
    res = audit(_episode_release(learner._engine, 9), epsilon=g.epsilon, delta=g.delta, n=AUDIT_N, seed=1)
    print(f"[audit] AdaPTTStar: {res}")
    assert res.epsilon_lower_bound <= g.epsilon
    assert res.epsilon_lower_bound > 0.5 * g.epsilon  # the audit sees the release (not vacuous)


@pytest.mark.slow
def test_audit_flags_half_noise() -> None:
    learner = AdaPTTStar(3, 0.05, 1.0, seed=0)
    kind, steps, exponent = learner.noise_wire  # type: ignore[misc]
    buggy = _engine(learner, chernoff_pair_thresholds(3, 0.05, 56), noise=(kind, max(1, int(steps) // 2), exponent))
    res = audit(_episode_release(buggy, 9), epsilon=1.0, n=AUDIT_N, seed=2)
    print(f"[audit] half noise: {res}")
    assert res.epsilon_lower_bound > 1.0
