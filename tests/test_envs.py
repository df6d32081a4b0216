"""The App. D environment of Shariff & Sheffet, seen from Python."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dpbandits.envs import Environment, ShariffSheffetEnv


def test_decision_sets_follow_appendix_d() -> None:
    env = ShariffSheffetEnv(5, gap=0.1, seed=3)
    theta = env.theta
    assert np.isclose(np.linalg.norm(theta), 1.0)
    for t in range(1, 201):
        actions = env.decision_set(t)
        assert actions.shape == (25, 5)
        np.testing.assert_allclose(np.linalg.norm(actions, axis=1), 1.0, atol=1e-12)
        means = actions @ theta
        np.testing.assert_allclose(env.mean_rewards(t), means, atol=1e-12)
        best = np.isclose(means, 0.75, atol=1e-12)
        assert best.sum() == 1
        assert np.all((means[~best] >= -0.75) & (means[~best] <= 0.65 + 1e-12))
        assert env.reward(t, int(np.argmax(means))) in (-1.0, 1.0)
    assert isinstance(env, Environment)


def test_pickle_mid_stream_continues_identically() -> None:
    env = ShariffSheffetEnv(4, k=9, gap=0.0, seed=1)
    for t in range(1, 11):
        env.decision_set(t)
        env.reward(t, 0)
    twin = pickle.loads(pickle.dumps(env))
    for t in range(11, 31):
        np.testing.assert_array_equal(env.decision_set(t), twin.decision_set(t))
        assert env.reward(t, t % 9) == twin.reward(t, t % 9)


def test_same_seed_same_stream_other_seed_other_stream() -> None:
    a, b, c = ShariffSheffetEnv(5, seed=7), ShariffSheffetEnv(5, seed=7), ShariffSheffetEnv(5, seed=8)
    np.testing.assert_array_equal(a.decision_set(1), b.decision_set(1))
    assert not np.array_equal(a.theta, c.theta)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"d": 1}, "d"),
        ({"d": 5, "k": 0}, "k"),
        ({"d": 5, "gap": 2.0}, "gap"),
        ({"d": 5, "gap": float("nan")}, "gap"),
        ({"d": 5, "optimal_reward": 1.5}, "optimal_reward"),
        ({"d": 5, "reward": "bernoulli"}, "reward"),
        ({"d": 5, "seed": -1}, "seed"),
    ],
)
def test_bad_parameters_name_the_argument(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ShariffSheffetEnv(**kwargs)  # type: ignore[arg-type]


def test_rounds_must_come_in_order() -> None:
    env = ShariffSheffetEnv(3, seed=0)
    with pytest.raises(ValueError, match="`t`"):
        env.decision_set(2)
    env.decision_set(1)
    with pytest.raises(ValueError, match="`index`"):
        env.reward(1, 9)
    with pytest.raises(ValueError, match="`t`"):
        env.reward(2, 0)
