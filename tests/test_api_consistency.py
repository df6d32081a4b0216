"""One way to spell and to do each thing across the public API.

Claims checked (issue: what a new user tripped over):

- one seed policy: every learner, environment and counter defaults to
  ``seed=None``;
- a learner's ``repr`` shows every argument that changes behaviour, and
  only those that differ from the defaults (besides the required ones);
- copying a private learner warns (its noise generator would be shared),
  ``fork`` gives an independent copy: the copy's future noise differs from
  the original's, its past is the same, and copying the non-private
  learner is silent;
- a 1-d decision set is refused like scikit-learn refuses a 1-d X;
- a scalar tree counter releases a float;
- ``epsilon`` is spelled the same in every public privacy function
  (shuffle functions included), and calibration defaults agree;
- tight calibrations report the per-node figure they actually meet.
"""

from __future__ import annotations

import copy
import inspect
import pickle
import warnings

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import privacy
from dpbandits.mechanisms import LaplaceNoise, TreeCounter

D = 3


def actions(k: int = 4, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(k, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("cls", [dp.LinUCB, dp.JointDPLinUCB, dp.ShariffSheffetEnv, TreeCounter])
def test_every_seeded_object_defaults_to_seed_none(cls) -> None:
    assert inspect.signature(cls).parameters["seed"].default is None


def test_repr_shows_the_options_that_change_behaviour() -> None:
    plain = dp.JointDPLinUCB(D, 100, 1.0, 0.1)
    assert repr(plain) == "JointDPLinUCB(d=3, horizon=100, epsilon=1.0, delta=0.1)"
    tuned = dp.JointDPLinUCB(D, 100, 1.0, 0.1, noise="wishart", shift=False, seed=7)
    assert repr(tuned) == (
        "JointDPLinUCB(d=3, horizon=100, epsilon=1.0, delta=0.1, noise='wishart', shift=False, seed=7)"
    )
    tight = dp.JointDPLinUCB(D, 100, 1.0, 0.1, calibration="tight", shift=5000.0)
    assert "calibration='tight'" in repr(tight) and "shift=5000.0" in repr(tight)
    assert repr(dp.LinUCB(D, 100, regularizer=2.0)) == "LinUCB(d=3, horizon=100, regularizer=2.0)"
    assert "seed=3" in repr(dp.ShariffSheffetEnv(D, seed=3))


def test_config_and_seed_are_the_constructor_arguments() -> None:
    learner = dp.JointDPLinUCB(D, 100, 0.5, 0.01, seed=4)
    assert learner.seed == 4
    assert learner.config["epsilon"] == 0.5 and learner.config["noise"] == "gaussian"
    assert dp.JointDPLinUCB(**learner.config).config == learner.config


def _release_after(learner, rows) -> np.ndarray:
    for x, y in rows:
        learner.update(x, y)
    return learner.ucb(actions(6, seed=1))


def test_copies_and_forks_reseed() -> None:
    learner = dp.JointDPLinUCB(D, 1000, 1.0, 0.1, seed=1)
    rows = [(actions(1, seed=s)[0], 0.5) for s in range(5)]
    _release_after(learner, rows)
    with dp.research_replay():  # a bit-identical copy: research replays only
        duplicate = copy.deepcopy(learner)
    copied = copy.copy(learner)  # a restore for use: re-keyed
    forked = learner.fork()
    assert forked.t == learner.t == 5
    # The past is shared: the same releases right now.
    np.testing.assert_array_equal(forked.ucb(actions(6, seed=1)), learner.ucb(actions(6, seed=1)))
    more = [(actions(1, seed=10 + s)[0], -0.5) for s in range(3)]
    a = _release_after(learner, more)
    b = _release_after(duplicate, more)
    c = _release_after(forked, more)
    d = _release_after(copied, more)
    # A replayed copy adds the same future noise (the hazard); the fork and the copy do not.
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c) and not np.allclose(a, d)
    # A seeded fork is reproducible.
    f1, f2 = learner.fork(seed=9), learner.fork(seed=9)
    np.testing.assert_array_equal(_release_after(f1, more), _release_after(f2, more))
    assert f1.seed == 9


def test_copying_the_non_private_learner_is_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy.deepcopy(dp.LinUCB(D, 100))
        pickle.loads(pickle.dumps(dp.JointDPLinUCB(D, 100, 1.0, 0.1)))  # checkpoints: documented, no warning


def test_a_one_dimensional_decision_set_is_refused() -> None:
    learner = dp.JointDPLinUCB(D, 100, 1.0, 0.1)
    with pytest.raises(ValueError, match=r"`decision_set`.*1-d.*x\[None, :\]"):
        learner.select(np.ones(D))
    assert learner.select(np.ones(D)[None, :]) == 0


def test_a_scalar_counter_releases_a_float() -> None:
    c = TreeCounter((), 8, LaplaceNoise(1.0), seed=0)
    c.add(1.0)
    assert isinstance(c.release(), float)
    v = TreeCounter((2,), 8, LaplaceNoise(1.0), seed=0)
    v.add([1.0, 2.0])
    assert v.release().shape == (2,)


def test_epsilon_is_spelled_the_same_everywhere() -> None:
    for name in privacy.__all__:
        fn = getattr(privacy, name)
        if not callable(fn) or isinstance(fn, type):
            continue
        params = set(inspect.signature(fn).parameters)
        assert not params & {"eps", "eps0", "epsilon0"}, f"{name} spells epsilon as {params & {'eps', 'eps0'}}"
    assert list(inspect.signature(privacy.shuffle_amplification).parameters)[:3] == ["local_epsilon", "n", "delta"]
    assert list(inspect.signature(privacy.shuffle_local_epsilon).parameters)[:3] == ["epsilon", "n", "delta"]


def test_calibration_defaults_agree() -> None:
    # The learners default to the paper's formulas; the tree functions
    # either share that default or take no default at all.
    assert inspect.signature(dp.JointDPLinUCB).parameters["calibration"].default == "paper"
    assert inspect.signature(privacy.laplace_tree_scale).parameters["calibration"].default == "paper"
    assert inspect.signature(privacy.shariff_sheffet_gaussian).parameters["calibration"].default == "paper"
    assert inspect.signature(privacy.gaussian_tree_sigma).parameters["calibration"].default is inspect._empty


def test_tight_calibration_reports_the_node_figure_it_meets() -> None:
    tight = privacy.shariff_sheffet_gaussian(5, 10_000, 1.0, 0.1, calibration="tight")
    paper = privacy.shariff_sheffet_gaussian(5, 10_000, 1.0, 0.1)
    assert paper.node_epsilon == pytest.approx(privacy.tree_node_epsilon(1.0, 0.1, paper.m), rel=1e-15)
    mu_node = tight.L_tilde**2 / tight.sigma
    assert tight.node_epsilon == pytest.approx(privacy.gaussian_epsilon(mu_node, 0.05), rel=1e-12)
    assert tight.node_delta == 0.05
    # One node is a Gaussian mechanism meeting (node_epsilon, node_delta) exactly.
    assert privacy.gaussian_delta(mu_node, tight.node_epsilon) == pytest.approx(0.05, rel=1e-6)
    assert tight.node_epsilon != pytest.approx(paper.node_epsilon, rel=0.01)


def _private_learners() -> dict[str, object]:
    """Every private learner of the catalog built with only its required
    arguments, epsilon = 1 and (where it takes one) delta = 0.1."""
    T = 10_000
    return {
        "JointDPLinUCB": lambda **k: dp.JointDPLinUCB(3, T, 1.0, 0.1, **k),
        "PrivateUCB": lambda **k: dp.PrivateUCB(10, T, 1.0, **k),
        "PrivateThompsonSampling": lambda **k: dp.PrivateThompsonSampling(10, T, 1.0, **k),
        "PrivateContextualUCB": lambda **k: dp.PrivateContextualUCB(3, T, 1.0, **k),
        "PrivateContextualThompsonSampling": lambda **k: dp.PrivateContextualThompsonSampling(3, T, 1.0, **k),
        "EliminationLinearBandit": lambda **k: dp.EliminationLinearBandit(
            np.eye(3), T, privacy="central", epsilon=1.0, **k),
        "PrivateFTRL": lambda **k: dp.PrivateFTRL(10, T, 1.0, **k),
        "PrivateFTPL": lambda **k: dp.PrivateFTPL(10, T, 1.0, delta=0.1, **k),
        "SCRiBLe": lambda **k: dp.SCRiBLe(3, T, 1.0, **k),
        "EXP2": lambda **k: dp.EXP2(10, T, 1.0, **k),
    }


@pytest.mark.parametrize("name", list(_private_learners()))
def test_the_default_calibration_meets_the_requested_guarantee(name: str) -> None:
    # The one rule behind every learner's default: the default calibration
    # meets the (epsilon, delta) asked for. It is "paper" where the published
    # formula does, and "tight" (the least noise that does) where the
    # published formula falls short of its own claim.
    make = _private_learners()[name]
    g = make().privacy
    assert g.is_private
    assert g.epsilon <= 1.0 * (1 + 1e-12) and g.delta <= 0.1
    assert g.calibration in ("paper", "tight")
    params = inspect.signature(type(make())).parameters
    if "calibration" in params:
        assert params["calibration"].default in ("paper", "tight")
        for calibration in ("paper", "tight"):
            if name == "JointDPLinUCB" or calibration == "tight":
                assert make(calibration=calibration).privacy.calibration == calibration
            # The paper variant reports what it truly meets, never less.
            assert make(calibration=calibration).privacy.epsilon >= 1.0 * (1 - 1e-12)
        if params["calibration"].default == "paper":
            assert make(calibration="paper").privacy.epsilon <= 1.0 * (1 + 1e-12)
