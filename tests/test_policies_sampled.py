"""Policies of the learners that decide by drawing from released state
(EXP2, SCRiBLe, FTRL / FTPL, batched elimination, the private experts
learners): every learner class has ``policy()`` and ``policy_version``;
each policy holds exactly the released distribution, draws from it with
its own generator (draws match the law within binomial bounds, and never
move the learner's own generators), is read-only and picklable, and its
version moves when the learner's release does."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from _hostile_kinds import KINDS

import dpbandits as dp
from dpbandits.errors import StateError
from dpbandits.learners.online import LearnerBase

DRAWS = 200_000


def _driven(name: str, rounds: int, horizon: int = 2000):
    make, step = KINDS[name]
    learner = make(horizon, 3)
    for t in range(rounds):
        step(learner, t)
    return learner, step


def _within_binomial(counts: np.ndarray, p: np.ndarray, n: int) -> None:
    # 5 standard deviations of each binomial count (two-sided, per cell:
    # a false alarm has probability below 1e-6 per cell).
    sd = np.sqrt(n * p * (1 - p))
    assert np.all(np.abs(counts - n * p) <= 5 * sd + 1e-9), (counts, n * p)


def test_every_learner_class_has_a_policy() -> None:
    names = [n for n in dp.__all__ if isinstance(getattr(dp, n), type) and issubclass(getattr(dp, n), LearnerBase)]
    assert len(names) >= 25
    for name in names:
        cls = getattr(dp, name)
        assert callable(getattr(cls, "policy", None)), name
        assert isinstance(cls.__dict__.get("policy_version") or cls.policy_version, property), name


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_serves_a_picklable_policy_at_its_version(name: str) -> None:
    learner, _ = _driven(name, 5, horizon=200)
    policy = learner.policy()
    served = pickle.loads(pickle.dumps(policy))
    assert policy.version == served.version == learner.policy_version, name


def test_exp2_policy_draws_from_the_released_distribution() -> None:
    learner, step = _driven("EXP2", 25)
    policy = learner.policy(seed=1)
    assert policy.version == learner.policy_version == 25
    assert policy.probabilities.tobytes() == learner.probabilities().tobytes()
    assert not policy.probabilities.flags.writeable
    draws = policy.select_many(DRAWS)
    _within_binomial(np.bincount(draws, minlength=policy.k), policy.probabilities, DRAWS)
    assert 0 <= policy.select() < policy.k
    # Seeded: reproducible; pickled: the same distribution and generator state.
    again = pickle.loads(pickle.dumps(dp.EXP2(**learner.config).policy(seed=1)))
    assert np.array_equal(again.select_many(100), dp.EXP2(**learner.config).policy(seed=1).select_many(100))
    step(learner, 25)
    assert learner.policy_version == 26 > policy.version


def test_serving_a_policy_never_moves_the_learners_generators() -> None:
    for name in ("EXP2", "SCRiBLe", "PrivateFTRL", "EliminationLinearBandit"):
        learner, step = _driven(name, 10)
        with dp.research_replay():
            twin = copy.deepcopy(learner)
        learner.policy(seed=5).select_many(1000)
        outputs = [step(learner, t) for t in range(10, 20)]
        assert outputs == [step(twin, t) for t in range(10, 20)], name


def test_scrible_policy_draws_the_engines_dikin_points() -> None:
    learner, _ = _driven("SCRiBLe", 30)
    policy = learner.policy(seed=2)
    assert policy.iterate.tobytes() == learner.iterate().tobytes() and policy.version == 30
    support = policy.support()
    n = policy.n
    assert support.shape == (2 * n, n) and np.all(np.linalg.norm(support, axis=1) <= 1.0)
    # The learner's own next point is one of the policy's 2N points.
    y = learner.select()
    assert np.min(np.max(np.abs(support - y), axis=1)) <= 1e-12
    draws = policy.select_many(DRAWS)
    which = np.argmin(np.max(np.abs(draws[:, None, :] - support[None, :, :]), axis=2), axis=1)
    assert np.max(np.abs(draws - support[which])) <= 1e-12
    _within_binomial(np.bincount(which, minlength=2 * n), np.full(2 * n, 1 / (2 * n)), DRAWS)
    assert policy.select().shape == (n,)


def test_scrible_policy_at_the_centre() -> None:
    policy = dp.SCRiBLe(3, 100, 1.0, seed=0).policy(seed=0)
    assert np.allclose(np.abs(policy.support()), np.vstack([np.eye(3), np.eye(3)]) / np.sqrt(2.0))


@pytest.mark.parametrize("name", ["PrivateFTRL", "PrivateFTRL/smooth"])
def test_ftrl_policy_draws_indices_from_the_decision(name: str) -> None:
    learner, _ = _driven(name, 20)
    policy = learner.policy(seed=3)
    assert policy.decision().tobytes() == learner.decision().tobytes() and policy.version == 20
    _within_binomial(np.bincount(policy.select_many(DRAWS), minlength=policy.k),
                     np.clip(policy.decision(), 0, 1), DRAWS)


def test_ftpl_policy_on_the_ball_plays_points_only() -> None:
    learner = dp.PrivateFTPL(3, 100, 1.0, 1e-3, geometry="ball", seed=0)
    learner.update(np.array([0.1, -0.2, 0.3]))
    policy = learner.policy()
    assert policy.decision().tobytes() == learner.decision().tobytes()
    with pytest.raises(StateError, match="use decision"):
        policy.select()
    with pytest.raises(StateError, match="use decision"):
        policy.select_many(3)


def test_elimination_policy_is_the_batch_design() -> None:
    learner, step = _driven("EliminationLinearBandit", 0, horizon=3000)
    policy = learner.policy(seed=4)
    assert policy.version == learner.policy_version == 0
    # Play the whole batch: the learner's selections are the policy's pulls.
    total = int(policy.pulls.sum())
    played = [step(learner, t)[0] for t in range(total)]
    counts = np.bincount(played, minlength=len(dp.EliminationLinearBandit(**learner.config).active))
    expected = np.zeros_like(counts)
    expected[policy.support] = policy.pulls
    assert np.array_equal(counts, expected)
    assert learner.policy_version == 1 and learner.policy().version == 1
    draws = policy.select_many(DRAWS)
    _within_binomial(np.bincount(draws, minlength=len(policy.probabilities)), policy.probabilities, DRAWS)
    assert set(np.unique(draws)) <= set(policy.support.tolist())


def test_elimination_policy_after_the_commit_is_the_committed_action() -> None:
    learner = dp.EliminationLinearBandit(np.eye(2), 200, seed=0)
    t = 0
    while learner.committed is None:
        i = learner.select()
        learner.update(1.0 if i == 1 else 0.0)
        t += 1
    policy = learner.policy()
    assert policy.committed == learner.committed == 1
    assert np.all(policy.select_many(50) == 1) and policy.select() == 1


def test_contextual_elimination_policy_answers_clients() -> None:
    learner, _ = _driven("ContextualEliminationBandit", 5)
    policy = learner.policy(seed=0)
    assert policy.version == learner.policy_version
    features = np.random.default_rng(0).normal(size=(7, 4, 2))
    chosen = policy.select_many(features)
    assert chosen.shape == (7,) and np.all((chosen >= 0) & (chosen < 4))
    theta = policy.select_theta()
    assert any(np.array_equal(theta, row) for row in learner.thetas)
    assert 0 <= policy.select(features[0]) < 4
    with pytest.raises(ValueError, match="features"):
        policy.select(np.zeros((3, 5)))


def test_experts_policies_serve_the_released_expert() -> None:
    stochastic = dp.PrivateStochasticExperts(3, 64, 1.0, first_batch=4, seed=1)
    lazy = dp.LazyPrivateExperts(3, 64, 1.0, 0.1, seed=1)
    exp3 = dp.BatchedPrivateEXP3(3, 64, 1.0, batch=4, seed=1)
    rng = np.random.default_rng(0)
    for t in range(40):
        for learner in (stochastic, lazy):
            policy = learner.policy()
            assert policy.arm == learner.select()
            learner.update(rng.uniform(size=3))
        policy = exp3.policy()
        assert policy.arm == exp3.select() and policy.version == t // 4
        exp3.update(float(rng.uniform()))
    assert stochastic.policy_version == stochastic.selections >= 1
    assert lazy.policy_version == 40
    assert pickle.loads(pickle.dumps(exp3.policy())) == exp3.policy()


def test_policy_arguments_are_checked() -> None:
    policy = dp.EXP2(3, 100, 1.0, seed=0).policy(seed=0)
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="`n`"):
            policy.select_many(bad)
    assert policy.select_many(0).shape == (0,)


@pytest.mark.parametrize("name", ["PrivateDartboardExperts", "LazyPrivateOCO"])
def test_batched_switching_policies_serve_the_current_batch(name: str) -> None:
    make, step = KINDS[name]
    learner = make(400, 2)
    for t in range(60):
        policy = learner.policy()
        assert policy.version == learner.policy_version == t // learner.batch
        played = learner.select()
        assert np.array_equal(np.asarray(policy.select()), np.asarray(played))
        step(learner, t)
    policy = pickle.loads(pickle.dumps(learner.policy()))
    assert np.array_equal(np.asarray(policy.select()), np.asarray(learner.select()))
    many = policy.select_many(3)
    assert len(many) == 3
