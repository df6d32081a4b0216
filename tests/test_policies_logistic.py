"""Policies of the non-private logistic learners: LogisticUCB serves the
UCB-GLM index as a LinearUCBPolicy (its theta_t, V_t^-1 and beta_t, which
select the learner's rows), LogisticThompsonSampling a
LaplacePosteriorPolicy (its theta_t and A_t bit for bit, draws of
N(theta_t, v^2 A_t^-1) from the policy's own generator, the law checked
against the exact probability of a two-row set). Both pickle, are frozen,
and their version moves with every recorded reward."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.serving_linear import LinearUCBPolicy
from dpbandits.serving_sampled import LaplacePosteriorPolicy

D, K, H = 4, 6, 400
DRAWS = 200_000


def _sets(n: int, seed: int, k: int = K) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, k, D))
    return x / np.linalg.norm(x, axis=2, keepdims=True)  # ||x|| = 1 = L: no clipping


def _driven(learner, n: int = 60, seed: int = 1):
    ds = _sets(n, seed)
    ys = (np.random.default_rng(seed + 1).random(n) < 0.6).astype(float)
    xs = []
    for s, y in zip(ds, ys, strict=True):
        x = s[learner.select(s)]
        learner.update(x, y)
        xs.append(x)
    return np.array(xs), ys


def _newton(xs: np.ndarray, ys: np.ndarray, ridge: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The recursive Newton estimate, its precision A and the design V, from scratch."""
    theta, a, v = np.zeros(D), ridge * np.eye(D), ridge * np.eye(D)
    for x, y in zip(xs, ys, strict=True):
        p = 1.0 / (1.0 + math.exp(-float(x @ theta)))
        a = a + max(p * (1.0 - p), 1e-12) * np.outer(x, x)
        v = v + np.outer(x, x)
        theta = theta + np.linalg.solve(a, x) * (y - p)
    return theta, a, v


def _within_binomial(count: int, p: float, n: int) -> None:
    # 5 standard deviations of a binomial count: a false alarm has probability below 1e-6.
    assert abs(count - n * p) <= 5 * math.sqrt(n * p * (1 - p)) + 1e-9, (count, n * p)


def test_logistic_ucb_policy_selects_as_the_learner() -> None:
    learner = dp.LogisticUCB(D, H, beta_scale=0.3, seed=0)
    xs, ys = _driven(learner)
    policy = learner.policy()
    assert isinstance(policy, LinearUCBPolicy) and policy.version == learner.policy_version == 60
    served = pickle.loads(pickle.dumps(policy))
    kind, v_inv, theta = served.released()
    assert kind == "inverse" and theta.tobytes() == learner.theta.tobytes()
    assert served.beta == learner._engine.beta
    _, _, v = _newton(xs, ys)
    np.testing.assert_allclose(v_inv, np.linalg.inv(v), rtol=1e-10, atol=1e-12)
    probe = _sets(40, 9)
    for s in probe:
        np.testing.assert_allclose(served.scores(s), learner.scores(s), rtol=1e-13, atol=1e-13)
    assert served.select_many(probe).tolist() == [policy.select(s) for s in probe]
    assert served.select_many(probe).tolist() == learner.select_many(probe).tolist()
    # Frozen: new rewards move the learner and its version, not the policy taken before.
    before = served.scores(probe[0]).tobytes()
    learner.update_many(learner.outstanding, np.ones(len(probe)))
    assert served.scores(probe[0]).tobytes() == before
    assert learner.policy_version == 100 > policy.version
    assert learner.policy().version == 100


def test_logistic_thompson_policy_holds_the_laplace_posterior() -> None:
    learner = dp.LogisticThompsonSampling(D, H, v=0.7, ridge=2.0, seed=0)
    xs, ys = _driven(learner)
    policy = learner.policy(seed=3)
    assert isinstance(policy, LaplacePosteriorPolicy) and policy.version == learner.policy_version == 60
    assert policy.theta.tobytes() == learner.theta.tobytes() and policy.v == 0.7
    assert not policy.theta.flags.writeable and not policy.precision.flags.writeable
    theta, a, _ = _newton(xs, ys, ridge=2.0)
    np.testing.assert_allclose(policy.theta, theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(policy.precision, a, rtol=1e-10, atol=1e-12)
    # Pickled or rebuilt with the same seed: the same parameters and the same draws.
    again = pickle.loads(pickle.dumps(policy))
    assert again.precision.tobytes() == policy.precision.tobytes()
    probe = _sets(50, 4)
    assert np.array_equal(again.select_many(probe), learner.policy(seed=3).select_many(probe))
    learner.update(probe[0][0], 1.0)
    assert learner.policy_version == 61 > policy.version
    assert learner.policy(seed=0).theta.tobytes() != policy.theta.tobytes()


def test_logistic_thompson_policy_draws_the_posterior_law() -> None:
    learner = dp.LogisticThompsonSampling(D, H, v=0.5, seed=2)
    _driven(learner, n=40, seed=5)
    policy = learner.policy(seed=6)
    pair = _sets(1, 7, k=2)[0]
    # <x0 - x1, theta~> ~ N(<x0 - x1, theta>, v^2 ||x0 - x1||^2_{A^-1}): row 0 with probability Phi(m / s).
    z = pair[0] - pair[1]
    m = float(z @ policy.theta)
    s = 0.5 * math.sqrt(float(z @ np.linalg.solve(policy.precision, z)))
    p0 = 0.5 * (1.0 + math.erf(m / s / math.sqrt(2.0)))
    assert 0.05 < p0 < 0.95  # an informative pair
    served = policy.select_many(np.broadcast_to(pair, (DRAWS, 2, D)))
    _within_binomial(int(np.sum(served == 0)), p0, DRAWS)
    # The learner's own draws follow the same law.
    n = 20_000
    own = sum(int(np.argmax(learner.scores(pair)) == 0) for _ in range(n))
    _within_binomial(own, p0, n)
    # Draws: mean theta and covariance v^2 A^-1 (each entry within 5 standard errors).
    thetas = policy.draw(DRAWS)
    cov = 0.25 * np.linalg.inv(policy.precision)
    se = np.sqrt(np.diag(cov) / DRAWS)
    assert np.all(np.abs(thetas.mean(axis=0) - policy.theta) <= 5 * se)


def test_serving_a_logistic_policy_never_moves_the_learners_generator() -> None:
    learner = dp.LogisticThompsonSampling(D, H, seed=8)
    _driven(learner, n=10, seed=9)
    with dp.research_replay():
        twin = copy.deepcopy(learner)
    before = learner._engine.to_bytes()
    learner.policy(seed=1).select_many(_sets(500, 10))
    assert learner._engine.to_bytes() == before
    probe = _sets(20, 11)
    assert learner.select_many(probe).tolist() == twin.select_many(probe).tolist()


def test_logistic_policy_arguments_are_checked() -> None:
    policy = dp.LogisticThompsonSampling(D, H, seed=0).policy(seed=0)
    for bad in (np.zeros((3, D + 1)), np.zeros(D), np.zeros((0, D)), np.full((2, D), np.nan)):
        with pytest.raises(ValueError, match="decision_set"):
            policy.select(bad)
    with pytest.raises(ValueError, match="decision_sets"):
        policy.select_many(np.zeros((3, D)))
    assert policy.select_many(np.zeros((0, 2, D))).shape == (0,)
    with pytest.raises(ValueError, match="`n`"):
        policy.draw(-1)
    # At the start: theta = 0 and A = ridge I.
    assert not np.any(policy.theta) and np.array_equal(policy.precision, np.eye(D))
    ucb = dp.LogisticUCB(D, H, seed=0).policy()
    assert ucb.version == 0 and np.array_equal(ucb.released()[1], np.eye(D))
