"""Best-arm identification learners (dpbandits.learners.bai): the online
protocol, the Rust simulation against a step-by-step run, delta-correctness
on a small instance, hostile input, checkpoints, and audits of the exact
released batch sums."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.errors import CheckpointError, StateError
from dpbandits.learners.bai import AdaPTT, DPTopTwo, TopTwoBAI
from dpbandits.privacy import bai as bai_bounds

SMALL = [0.7, 0.5, 0.3]


def _learners(delta: float = 0.1, seed: int = 0) -> dict[str, dp.learners.bai.BestArmIdentifier]:
    return {
        "TopTwoBAI": TopTwoBAI(3, delta, seed=seed),
        "DPTopTwo": DPTopTwo(3, delta, 1.0, seed=seed),
        "DPTopTwo float": DPTopTwo(3, delta, 0.5, sampler="float", seed=seed),
        "DPTopTwo eps=0.1": DPTopTwo(3, delta, 0.1, seed=seed),
        "DPTopTwo shifted": DPTopTwo(3, delta, 1.0, challenger="stopping", stopping="shifted", seed=seed),
        "AdaPTT": AdaPTT(3, delta, 1.0, seed=seed),
    }


def _run(learner, env, limit: int = 10**7):  # type: ignore[no-untyped-def]
    while not learner.should_stop and learner.samples < limit:
        arm = learner.select()
        learner.update(arm, env.pull(arm))
    return learner.samples, learner.recommendation


@pytest.mark.parametrize("name", ["TopTwoBAI", "DPTopTwo", "DPTopTwo float", "DPTopTwo shifted", "AdaPTT"])
def test_simulate_equals_step_by_step(name: str) -> None:
    learner = _learners()[name]
    runs = learner.simulate(SMALL, reps=6, seed=11)
    for r in range(6):
        twin = learner._replicate(11, r)
        env = _core.BaiBernoulliRewards(SMALL, 11, r)
        samples, rec = _run(twin, env)
        assert samples == int(runs.stopping_times[r])
        assert rec == int(runs.recommendations[r])
        assert twin.should_stop == bool(runs.stopped[r])


def _binomial_upper_tail(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) >= k), exactly (log-space terms)."""
    total = 0.0
    for i in range(k, n + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                          + i * math.log(p) + (n - i) * math.log1p(-p))
    return min(total, 1.0)


@pytest.mark.parametrize("name", ["TopTwoBAI", "DPTopTwo", "DPTopTwo eps=0.1", "DPTopTwo shifted", "AdaPTT"])
def test_delta_correct_on_a_small_instance(name: str) -> None:
    """Empirical error over 2,000 replicates at delta = 0.1: a one-sided
    binomial test of H0: error rate <= delta at level 0.01 does not reject."""
    delta, reps = 0.1, 2000
    learner = _learners(delta)[name]
    runs = learner.simulate([0.6, 0.5, 0.4], reps=reps, seed=2024)
    errors = int(runs.errors.sum())
    p_value = _binomial_upper_tail(errors, reps, delta)
    print(f"{name}: {errors} errors in {reps}, mean tau {runs.mean_stopping_time:.0f}, p = {p_value:.3g}")
    assert runs.stopped.all()
    assert p_value > 0.01


def test_the_binomial_test_flags_a_broken_stopping_rule() -> None:
    """The error-rate test has power: the same engine with the noise radii
    and the threshold removed (a planted bug) is rejected."""
    learner = DPTopTwo(3, 0.1, 1.0)
    broken = _core.BaiEngine(3, rule="top_two_stopping", epsilon=1.0, first=4, ratio=learner.ratio,
                             noise=learner.noise_wire, thresholds=[0.0], c1=0.0,
                             radii=[0.0] * 64, seed=0)
    _, rec, stopped = broken.simulate([0.6, 0.5, 0.4], 2000, 2024)
    errors = int(((rec != 0) | ~stopped).sum())
    assert _binomial_upper_tail(errors, 2000, 0.1) < 0.01


def test_the_binomial_test_flags_a_broken_chernoff_rule() -> None:
    """The Chernoff rule with the thresholds of (C5) replaced by
    ln(1 / delta) / 4 (a planted bug: no union bound, a quarter of the
    exponent) is rejected by the same test."""
    learner = DPTopTwo(3, 0.1, 1.0)
    cut = [math.log(10.0) / 4] * len(bai_bounds.chernoff_pair_thresholds(3, 0.1, 128))
    broken = _core.BaiEngine(3, rule="top_two_chernoff", epsilon=1.0, first=4, ratio=learner.ratio,
                             noise=learner.noise_wire, thresholds=cut, c1=0.0, seed=0, stop="chernoff")
    _, rec, stopped = broken.simulate([0.6, 0.5, 0.4], 2000, 2024)
    errors = int(((rec != 0) | ~stopped).sum())
    assert _binomial_upper_tail(errors, 2000, 0.1) < 0.01


def test_private_sampling_is_no_worse_than_adap_tt() -> None:
    means = [0.75, 0.625, 0.5, 0.375, 0.25]
    dptt = DPTopTwo(5, 0.01, 1.0).simulate(means, reps=200, seed=5)
    adap = AdaPTT(5, 0.01, 1.0).simulate(means, reps=200, seed=5)
    t1, t2 = dptt.stopping_times.astype(float), adap.stopping_times.astype(float)
    # one-sided Welch test at 1e-3 that DPTopTwo's mean is smaller
    z = (t2.mean() - t1.mean()) / math.sqrt(t1.var(ddof=1) / t1.size + t2.var(ddof=1) / t2.size)
    print(f"DPTopTwo {t1.mean():.0f}, AdaP-TT {t2.mean():.0f}, z = {z:.1f}")
    assert z > 3.1


def test_information_directed_leader_beats_a_fixed_beta_in_the_tv_regime() -> None:
    """At eps = 0.1 on mu1 the pair cost is about eps |m_a - m_b| min(N_a, N_b):
    beta = 1/2 gives the leader half the samples where the optimal allocation
    gives it a quarter; the default (information-directed) probability
    stops sooner (one-sided Welch test at 1e-3)."""
    means = [0.95, 0.9, 0.9, 0.9, 0.5]
    ids = DPTopTwo(5, 0.01, 0.1).simulate(means, reps=100, seed=3)
    fixed = DPTopTwo(5, 0.01, 0.1, beta=0.5).simulate(means, reps=100, seed=3)
    t1, t2 = ids.stopping_times.astype(float), fixed.stopping_times.astype(float)
    z = (t2.mean() - t1.mean()) / math.sqrt(t1.var(ddof=1) / t1.size + t2.var(ddof=1) / t2.size)
    print(f"information-directed {t1.mean():.0f}, beta = 1/2 {t2.mean():.0f}, z = {z:.1f}")
    assert z > 3.1
    assert ids.error_rate == 0.0


# ---------------------------------------------------------------------------
# The online protocol


def test_update_forms_and_outstanding() -> None:
    learner = DPTopTwo(3, 0.05, 1.0, seed=3)
    arm = learner.select()
    assert learner.outstanding == [arm]
    learner.update(1.0)  # exactly one outstanding
    assert learner.outstanding == []
    arms = learner.select_many(4)
    assert arms.dtype == np.int64 and len(learner.outstanding) == 4
    with pytest.raises(StateError, match="outstanding"):
        learner.update(0.0)
    learner.update_many(arms, [1.0, 0.0, 1.0, 0.0])
    assert learner.outstanding == []
    assert learner.samples == 5


def test_update_many_equals_the_loop() -> None:
    a, b = DPTopTwo(3, 0.05, 1.0, seed=4), DPTopTwo(3, 0.05, 1.0, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(50):
        arms = a.select_many(7)
        assert np.array_equal(arms, b.select_many(7))
        rewards = (rng.random(7) < 0.5).astype(float)
        a.update_many(arms, rewards)
        for arm, r in zip(arms, rewards, strict=True):
            b.update(int(arm), float(r))
        assert a.to_bytes() == b.to_bytes()


def test_hostile_input() -> None:
    learner = DPTopTwo(3, 0.05, 1.0, seed=0)
    for bad_arm in (-1, 3, 1.5, True, "0"):
        with pytest.raises((ValueError, TypeError), match="arm"):
            learner.update(bad_arm, 1.0)
    for bad_reward in (float("nan"), 1.5, -0.1, float("inf")):
        with pytest.raises(ValueError, match="reward"):
            learner.update(0, bad_reward)
    with pytest.raises(ValueError, match="arms"):
        learner.update_many([0, 5], [1.0, 1.0])
    with pytest.raises(ValueError, match="rewards"):
        learner.update_many([0, 1], [1.0, float("nan")])
    with pytest.raises(ValueError, match="arm"):
        _core.BaiEngine(3).observe(-1, 1.0)
    with pytest.raises(ValueError, match="reward"):
        _core.BaiEngine(3).observe(0, float("nan"))
    for eps in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            DPTopTwo(3, 0.05, eps)
        with pytest.raises(ValueError, match="epsilon"):
            AdaPTT(3, 0.05, eps)
    for delta in (0.0, 1.0, -0.5):
        with pytest.raises(ValueError, match="delta"):
            TopTwoBAI(3, delta)
    with pytest.raises(ValueError, match="k"):
        TopTwoBAI(1, 0.1)
    with pytest.raises(ValueError, match="beta"):
        TopTwoBAI(3, 0.1, beta=1.0)
    with pytest.raises(ValueError, match="ratio"):
        DPTopTwo(3, 0.1, 1.0, ratio=1.0)
    with pytest.raises(ValueError, match="ratio"):
        DPTopTwo(3, 0.1, 1.0, ratio=1.0001)
    with pytest.raises(ValueError, match="means"):
        learner.simulate([0.5, 0.2], reps=2)
    with pytest.raises(ValueError, match="means"):
        learner.simulate([0.5, 0.2, 1.2], reps=2)
    # the budget: select refuses after max_samples selections
    tiny = TopTwoBAI(2, 0.1, max_samples=3)
    for _ in range(3):
        tiny.update(tiny.select(), 1.0)
    with pytest.raises(StateError, match="max_samples"):
        tiny.select()


def test_checkpoint_round_trip_and_corruption() -> None:
    # first_batch=4: the releases (and the information-directed leader
    # probability recomputed on restore) happen within the 300 rewards.
    learner = DPTopTwo(4, 0.05, 0.5, first_batch=4.0, seed=9)
    env = _core.BaiBernoulliRewards([0.8, 0.6, 0.5, 0.2], 1, 0)
    for _ in range(300):
        arm = learner.select()
        learner.update(arm, env.pull(arm))
    data = learner.to_bytes()
    twin = DPTopTwo.from_bytes(data, replay=True)  # a research replay continues bit-identically
    assert twin.privacy == learner.privacy
    for _ in range(300):
        arm = learner.select()
        assert twin.select() == arm
        y = env.pull(arm)
        learner.update(arm, y)
        twin.update(arm, y)
    assert twin.to_bytes() == learner.to_bytes()
    with pytest.raises(CheckpointError):
        DPTopTwo.from_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError):
        DPTopTwo.from_bytes(b"junk")
    with pytest.raises(CheckpointError, match="DPTopTwo"):
        AdaPTT.from_bytes(data)
    corrupted = bytearray(data)
    corrupted[-5] ^= 0xFF
    try:
        restored = DPTopTwo.from_bytes(bytes(corrupted))
    except CheckpointError:
        pass
    else:  # a flipped byte inside a float sum still decodes: state consistent, sums differ
        assert restored.to_bytes() != data
    # a restore for use re-keys: fed the same rewards, its noise differs
    used = DPTopTwo.from_bytes(data)
    replayed = DPTopTwo.from_bytes(data, replay=True)
    for _ in range(600):
        arm = replayed.select()
        y = env.pull(arm)
        replayed.update(arm, y)
        used.update(arm, y)
    assert used.to_bytes() != replayed.to_bytes()
    # constants that do not match the arguments are refused
    other = DPTopTwo(4, 0.05, 0.25, first_batch=4.0, seed=9).to_bytes()
    head_len = len(b"DPBAI1") + 4 + int.from_bytes(data[6:10], "little")
    other_head_len = len(b"DPBAI1") + 4 + int.from_bytes(other[6:10], "little")
    with pytest.raises(CheckpointError, match="constants"):
        DPTopTwo.from_bytes(data[:head_len] + other[other_head_len:])


def test_fork_and_reseed() -> None:
    learner = DPTopTwo(3, 0.05, 0.5, first_batch=4.0, seed=1)
    for _ in range(50):
        learner.update(learner.select(), 1.0)
    a, b, c = learner.fork(7), learner.fork(7), learner.fork(8)
    seq = [[f.select() for _ in range(200)] for f in (a, b, c)]
    assert seq[0] == seq[1] and seq[0] != seq[2]


def test_privacy_reports() -> None:
    g = DPTopTwo(3, 0.05, 1.0).privacy
    assert g.model == "central" and g.epsilon <= 1.0 and g.delta == 0.0 and g.protects == "rewards"
    assert g.epsilon > 1.0 - 1e-5
    assert "lattice" in g.basis
    assert AdaPTT(3, 0.05, 0.3).privacy.epsilon <= 0.3
    assert DPTopTwo(3, 0.05, 1.0, sampler="float").privacy.sampler == "float"
    assert TopTwoBAI(3, 0.05).privacy.model == "none"
    # the default noise crosses as the exact lattice value
    assert DPTopTwo(3, 0.05, 1.0).noise_wire[0] == "lattice_laplace"


# ---------------------------------------------------------------------------
# Audits of the exact released batch sums (slow)

AUDIT_N = 1_000_000
REWARDS = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0] * 4


def _batch_release(engine, round_: int):  # type: ignore[no-untyped-def]
    """Neighbouring reward sequences differ in observation ``round_`` (0 vs
    1); the output is the released sum of the batch holding it."""

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        r = list(REWARDS)
        r[round_] = float(side)
        return np.nan_to_num(engine._audit_runs(r, round_, count, seed), nan=-1e9)

    return mechanism


@pytest.mark.slow
@pytest.mark.parametrize("name", ["DPTopTwo", "AdaPTT"])
def test_audit_released_batch_sums(name: str) -> None:
    # A first batch of 4 / eps rewards, so that the 48 audited rewards close
    # several batches (the default first batch, 64 / eps, would release none).
    learners = {"DPTopTwo": DPTopTwo(3, 0.05, 1.0, seed=0, first_batch=4.0), "AdaPTT": AdaPTT(3, 0.05, 1.0, seed=0)}
    learner = learners[name]
    g = learner.privacy
    res = audit(_batch_release(learner._engine, 9), epsilon=g.epsilon, delta=g.delta, n=AUDIT_N, seed=1)
    print(f"[audit] {name}: {res}")
    assert res.epsilon_lower_bound <= g.epsilon
    assert res.epsilon_lower_bound > 0.5 * g.epsilon  # the audit sees the release (not vacuous)


@pytest.mark.slow
def test_audit_flags_half_noise() -> None:
    learner = DPTopTwo(3, 0.05, 1.0, seed=0, first_batch=4.0)
    kind, steps, exponent = learner.noise_wire  # type: ignore[misc]
    buggy = _core.BaiEngine(3, rule="top_two", epsilon=1.0, first=learner.first_length, ratio=learner.ratio,
                            noise=(kind, max(1, int(steps) // 2), exponent), thresholds=[10.0], radii=[1.0] * 64,
                            seed=0)
    res = audit(_batch_release(buggy, 9), epsilon=1.0, n=AUDIT_N, seed=2)
    print(f"[audit] half noise: {res}")
    assert res.epsilon_lower_bound > 1.0
