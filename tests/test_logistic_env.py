"""The logistic-reward contextual environment and the d = 20, K = 100 instance."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dpbandits as dp


def _mu(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def test_decision_sets_are_appendix_d_and_means_are_logistic() -> None:
    env = dp.LogisticContextualEnv(d=5, gap=0.1, scale=3.0, seed=4)
    twin = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=4)
    for t in range(1, 20):
        x = env.decision_set(t)
        np.testing.assert_array_equal(x, twin.decision_set(t))
        np.testing.assert_allclose(env.mean_rewards(t), _mu(3.0 * (x @ env.theta)), rtol=1e-12)
        assert env.mean_rewards(t).max() == pytest.approx(_mu(np.array(2.25)))


def test_reward_frequencies_match_the_link() -> None:
    env = dp.LogisticContextualEnv(d=3, k=4, scale=2.0, seed=1)
    n, hits, expected = 20_000, 0.0, 0.0
    for t in range(1, n + 1):
        env.decision_set(t)
        expected += float(env.mean_rewards(t)[2])
        y = env.reward(t, 2)
        assert y in (0.0, 1.0)
        hits += y
    # A sum of n independent Bernoullis: sd <= sqrt(n) / 2; 5 sd.
    assert abs(hits - expected) < 5 * math.sqrt(n) / 2


def test_pickle_mid_stream_continues_identically() -> None:
    env = dp.LogisticContextualEnv(d=4, seed=2)
    env.decision_set(1)
    twin = pickle.loads(pickle.dumps(env))
    for t in range(2, 6):
        np.testing.assert_array_equal(env.decision_set(t), twin.decision_set(t))
        assert env.reward(t, 1) == twin.reward(t, 1)


@pytest.mark.parametrize("kwargs,name", [({"scale": 0.0}, "scale"), ({"scale": float("nan")}, "scale"),
                                         ({"scale": 2e6}, "scale"), ({"d": 1}, "d"), ({"k": 0}, "k"),
                                         ({"gap": 1.6}, "gap")])
def test_bad_parameters_name_the_argument(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dp.LogisticContextualEnv(**{"d": 3, **kwargs})  # type: ignore[arg-type]


def test_simulate_runs_both_in_rust() -> None:
    res = dp.simulate(dp.LinUCB(5, 2000, seed=0), dp.LogisticContextualEnv(d=5, seed=0), seeds=2)
    final = res.final_regret
    assert final.shape == (2,) and np.all(np.isfinite(final)) and np.all(final >= 0)
    # Per-round regret is at most mu(1.5) - mu(-1.5) < 0.64.
    assert np.all(final <= 0.64 * 2000)
    env = dp.envs.d20_instance(seed=0)
    assert env.decision_set(1).shape == (100, 20)
    res = dp.simulate(dp.LinUCB(20, 500, seed=0), dp.envs.d20_instance(seed=0), seeds=2)
    assert np.all(np.isfinite(res.final_regret))
