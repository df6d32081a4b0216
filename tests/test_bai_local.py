"""CTB-TT (dpbandits.CTBTT): the epsilon-local-DP Top Two on randomised
responses: the exact randomiser's constants, the Rust simulation against a
step-by-step run, delta-correctness on a small instance, every (epsilon,
delta) of the grid, checkpoints, and an audit of the exact released bits."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.errors import CheckpointError
from dpbandits.privacy.bai import randomised_response

SMALL = [0.7, 0.5, 0.3]


def test_randomised_response_constants_by_hand() -> None:
    """The flip probability 1 / (1 + e^eps) rounded up to the lattice 2^-62:
    at eps = 1, num = ceil(2^62 / (1 + e)) = 1240273392707995214 (by hand
    with 80 digits), and eps' = ln((2^62 - num) / num) <= eps."""
    r = randomised_response(1.0)
    assert (r.num, r.bits) == (1240273392707995214, 62)
    assert r.flip == pytest.approx(1.0 / (1.0 + math.e), rel=1e-15)
    assert 1.0 - 1e-15 < r.epsilon <= 1.0
    assert (2**62 - r.num) <= r.num * math.e * (1 + 1e-15)
    # rounding the flip probability up never raises epsilon, and lowers it
    # by at most ln(1 + 1 / x) + ln(1 + 1 / (2^62 - x - 1)) <= 2 / num
    # (x = 2^62 / (1 + e^eps), num = ceil(x))
    for eps in (1e-12, 1e-3, 0.1, 30.0):
        r = randomised_response(eps)
        assert 0.0 < r.epsilon <= eps and eps - r.epsilon <= 2.0 / r.num + 1e-15
    # a flip probability of at least 2^-62: epsilon' = ln(2^62 - 1) for every large epsilon
    big = randomised_response(2.0**19)
    assert big.num == 1 and big.epsilon == pytest.approx(62 * math.log(2.0), rel=1e-12)
    for bad in (0.0, -1.0, math.inf, math.nan, 2.0**19 * 1.01):
        with pytest.raises(ValueError, match="epsilon"):
            randomised_response(bad)


def _run(learner, env, limit: int = 10**7):  # type: ignore[no-untyped-def]
    while not learner.should_stop and learner.samples < limit:
        arm = learner.select()
        learner.update(arm, env.pull(arm))
    return learner.samples, learner.recommendation


def test_simulate_equals_step_by_step() -> None:
    learner = dp.CTBTT(3, 0.1, 1.0, seed=0)
    runs = learner.simulate(SMALL, reps=6, seed=11)
    for r in range(6):
        twin = learner._replicate(11, r)
        samples, rec = _run(twin, _core.BaiBernoulliRewards(SMALL, 11, r))
        assert samples == int(runs.stopping_times[r]) and rec == int(runs.recommendations[r])


def _binomial_upper_tail(k: int, n: int, p: float) -> float:
    total = 0.0
    for i in range(k, n + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                          + i * math.log(p) + (n - i) * math.log1p(-p))
    return min(total, 1.0)


def test_delta_correct_on_a_small_instance() -> None:
    """2,000 replicates at delta = 0.1, eps = 1: the one-sided binomial test
    of error rate <= delta at level 0.01 does not reject."""
    runs = dp.CTBTT(3, 0.1, 1.0).simulate([0.6, 0.5, 0.4], reps=2000, seed=2024)
    errors = int(runs.errors.sum())
    print(f"CTB-TT: {errors} errors in 2000, mean tau {runs.mean_stopping_time:.0f}")
    assert runs.stopped.all()
    assert _binomial_upper_tail(errors, 2000, 0.1) > 0.01


@pytest.mark.parametrize("epsilon", [1e-12, 1e-3, 1.0, 30.0, 2.0**19])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.5])
def test_every_epsilon_and_delta(epsilon: float, delta: float) -> None:
    learner = dp.CTBTT(3, delta, epsilon, seed=1, max_samples=400)
    g = learner.privacy
    assert g.model == "local" and 0.0 < g.epsilon <= epsilon and g.delta == 0.0
    env = _core.BaiBernoulliRewards([1.0, 0.0, 0.0], 0, 0)
    _run(learner, env, limit=400)
    assert learner.samples <= 400
    means = learner.released_means()
    assert np.all((means >= 0.0) & (means <= 1.0) | np.isnan(means))


def test_rewards_in_the_unit_interval_and_hostile_input() -> None:
    learner = dp.CTBTT(3, 0.1, 2.0, seed=3)
    for y in (0.0, 0.25, 1.0, 0.999999):
        learner.update(learner.select(), y)
    for bad in (-0.1, 1.5, math.nan):
        with pytest.raises(ValueError, match="reward"):
            learner.update(learner.select(), bad)
    with pytest.raises(TypeError, match="secure"):
        dp.CTBTT(3, 0.1, 1.0, secure=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="simulations"):
        dp.CTBTT(3, 0.1, 1.0, secure=True).simulate(SMALL, 2)


def test_checkpoint_round_trip_and_corruption() -> None:
    learner = dp.CTBTT(4, 0.05, 0.5, seed=9)
    env = _core.BaiBernoulliRewards([0.8, 0.6, 0.5, 0.2], 1, 0)
    for _ in range(300):
        learner.update(learner.select(), env.pull(0))
    data = learner.to_bytes()
    twin = dp.CTBTT.from_bytes(data, replay=True)
    assert twin.privacy == learner.privacy
    for _ in range(300):
        arm = learner.select()
        assert twin.select() == arm
        y = env.pull(arm)
        learner.update(arm, y)
        twin.update(arm, y)
    assert twin.to_bytes() == learner.to_bytes()
    for bad in (data[: len(data) // 2], b"junk", data[:-3]):
        with pytest.raises(CheckpointError):
            dp.CTBTT.from_bytes(bad)
    with pytest.raises(CheckpointError, match="CTBTT"):
        dp.DPTopTwo.from_bytes(data)
    # a restore for use re-keys the privatisation
    used, replayed = dp.CTBTT.from_bytes(data), dp.CTBTT.from_bytes(data, replay=True)
    for _ in range(200):
        arm = replayed.select()
        used.select()
        replayed.update(arm, 1.0)
        used.update(arm, 1.0)
    assert used.to_bytes() != replayed.to_bytes()


# ---------------------------------------------------------------------------
# Audit of the exact released bits (slow)

AUDIT_N = 1_000_000
REWARDS = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]


def _released_bit(engine, round_: int):  # type: ignore[no-untyped-def]
    """Neighbouring reward sequences differ in observation ``round_`` (0 vs
    1); the output is that observation's privatised bit (every reward is
    its own release)."""

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        r = list(REWARDS)
        r[round_] = float(side)
        return np.asarray(engine._audit_runs(r, round_, count, seed))

    return mechanism


@pytest.mark.slow
def test_audit_released_bits() -> None:
    learner = dp.CTBTT(3, 0.05, 1.0, seed=0)
    g = learner.privacy
    res = audit(_released_bit(learner._engine, 5), epsilon=g.epsilon, delta=g.delta, n=AUDIT_N, seed=1)
    print(f"[audit] CTB-TT: {res}")
    assert res.epsilon_lower_bound <= g.epsilon
    assert res.epsilon_lower_bound > 0.8 * g.epsilon


@pytest.mark.slow
def test_audit_flags_half_noise() -> None:
    """A planted bug: the randomiser flips at epsilon 2 (half the flip noise
    of epsilon 1's flip probability, about) while claiming 1."""
    r = randomised_response(2.0)
    buggy = _core.BaiEngine(3, rule="top_two", first=1, ratio=1.0, noise=("zero",), thresholds=[10.0],
                            seed=0, local=(r.num, r.bits))
    res = audit(_released_bit(buggy, 5), epsilon=1.0, n=AUDIT_N, seed=2)
    print(f"[audit] CTB-TT half noise: {res}")
    assert res.epsilon_lower_bound > 1.0
