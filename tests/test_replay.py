"""Supervised-to-bandit replay (``dpbandits.envs.replay``).

Claims checked:

- arm a's vector is the disjoint encoding e_a ⊗ f_t with ||f_t|| = 1 <= L;
- the reward is 1 for the true class and ``wrong_reward`` otherwise, so the
  pseudo-regret of a run is (1 - wrong_reward) x the number of mistakes;
- one pass visits every sample exactly once, in an order fixed by the seed;
- it runs in Rust through simulate() and sweep() with identical numbers,
  which are exactly those of driving it round by round from Python; it
  pickles mid-stream, and a sweep identifies it by a hash of its data;
- bad inputs (rows outside the unit ball, rewards other than 0/-1, unknown
  data set) raise ValueError naming the argument.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.envs.replay import DATASETS, ReplayEnv, _read_bundled, load_dataset, prepare_features
from dpbandits.sweeps import cell_key, sweep


def toy(n: int = 30, p: int = 3, k: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = prepare_features(rng.normal(size=(n, p)))
    return f, np.arange(n) % k


def test_prepare_features_unit_rows_with_intercept() -> None:
    x = np.random.default_rng(1).normal(5.0, 3.0, size=(40, 6))
    f = prepare_features(x, components=3)
    assert f.shape == (40, 4)
    np.testing.assert_allclose(np.linalg.norm(f, axis=1), 1.0)
    # the intercept column is 1 / ||(pcs, 1)||: positive on every row
    assert np.all(f[:, -1] > 0)


def test_disjoint_encoding_and_rewards() -> None:
    f, y = toy()
    env = ReplayEnv(f, y, wrong_reward=-1.0, seed=4)
    for t in range(1, 31):
        x = env.decision_set(t)
        assert x.shape == (3, 3 * 4)  # 3 features + intercept per class
        blocks = x.reshape(3, 3, 4)
        for a in range(3):
            for b in range(3):
                if a != b:
                    assert not blocks[a, b].any()
        row = blocks[0, 0]
        np.testing.assert_array_equal(blocks[1, 1], row)
        i = int(np.flatnonzero((f == row).all(axis=1))[0])
        rewards = [env.reward(t, a) for a in range(3)]
        assert rewards == [1.0 if a == y[i] else -1.0 for a in range(3)]
        np.testing.assert_array_equal(env.mean_rewards(t), rewards)
        assert np.linalg.norm(x, axis=1).max() <= 1.0 + 1e-12


def test_each_pass_visits_every_sample_once_in_seeded_order() -> None:
    f, y = toy(n=25)

    def order(seed: int, rounds: int) -> list[int]:
        env = ReplayEnv(f, y, seed=seed)
        out = []
        for t in range(1, rounds + 1):
            row = env.decision_set(t).reshape(3, 3, 4)[0, 0]
            out.append(int(np.flatnonzero((f == row).all(axis=1))[0]))
        return out

    a = order(7, 50)
    assert sorted(a[:25]) == list(range(25)) and sorted(a[25:]) == list(range(25))
    assert a[:25] != a[25:]  # a fresh permutation for the second pass
    assert a == order(7, 50)
    assert a != order(8, 50)


def test_regret_counts_mistakes_and_sweep_matches_simulate() -> None:
    f, y = toy(n=60, k=3)
    env = ReplayEnv(f, y, wrong_reward=-1.0, name="toy")
    learner = dp.JointDPLinUCB(env.d, 120, epsilon=4.0, delta=0.1, calibration="tight")
    direct = dp.simulate(learner, env, seeds=[1, 2], record_every=1)
    # each round's regret is 0 or 2 (= 1 - (-1)): a count of mistakes
    steps = np.diff(direct.regret, axis=1, prepend=0.0)
    assert set(np.unique(steps)) <= {0.0, 2.0}
    assert steps.sum() > 0
    res = sweep({"toy": {"learner": learner, "env": env, "record_every": 1}}, seeds=[1, 2], n_jobs=1,
                progress=False).results()
    np.testing.assert_array_equal(res[("toy", "learner")].regret, direct.regret)


def test_simulation_equals_round_by_round_replay() -> None:
    """The Rust loop and the Python protocol see the same rounds: a
    non-private LinUCB driven by hand on ReplayEnv(seed=s) makes exactly the
    mistakes simulate() reports for replicate seed s."""
    f, y = toy(n=40, k=3)
    spec = ReplayEnv(f, y)
    res = dp.simulate(dp.LinUCB(spec.d, 80), spec, seeds=[5], record_every=1)
    env = ReplayEnv(f, y, seed=5)
    learner = dp.LinUCB(spec.d, 80, seed=5)
    regret = 0.0
    curve = []
    for t in range(1, 81):
        i = learner.select(env.decision_set(t))
        regret += 1.0 - env.mean_rewards(t)[i]
        learner.update(env.reward(t, i))
        curve.append(regret)
    np.testing.assert_array_equal(res.regret[0], curve)


def test_env_pickles_mid_stream_and_is_identified_by_its_data() -> None:
    f, y = toy()
    env = ReplayEnv(f, y, name="toy", seed=3)
    for t in range(1, 8):
        env.decision_set(t)
    again = pickle.loads(pickle.dumps(env))
    for t in range(8, 40):
        np.testing.assert_array_equal(again.decision_set(t), env.decision_set(t))
    cfg = {"learner": dp.LinUCB(env.d, 10), "env": ReplayEnv(f, y, name="toy")}
    assert cell_key(cfg, 0) == cell_key({**cfg, "env": ReplayEnv(f.copy(), y.copy(), name="toy")}, 0)
    g = f.copy()
    g[0] = -g[0]
    assert cell_key(cfg, 0) != cell_key({**cfg, "env": ReplayEnv(g, y, name="toy")}, 0)
    assert f.flags.writeable  # the caller's array is left alone (the environment copies)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_bundled_files_equal_scikit_learn_loaders(name: str) -> None:
    import sklearn.datasets

    bunch = getattr(sklearn.datasets, DATASETS[name])()
    raw = _read_bundled(name)
    assert raw is not None, "the bundled file was not found: load_dataset would import scikit-learn"
    np.testing.assert_array_equal(raw[0], bunch.data)
    np.testing.assert_array_equal(raw[1], bunch.target)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_bundled_datasets_load_within_the_norm_bound(name: str) -> None:
    spec = ReplayEnv.from_dataset(name, components=4)
    expected_k = {"digits": 10, "wine": 3, "breast_cancer": 2}[name]
    assert spec.k == expected_k and spec.d == expected_k * 5
    assert np.linalg.norm(spec.features, axis=1).max() <= 1.0 + 1e-12
    assert set(np.unique(spec.labels)) == set(range(expected_k))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ReplayEnv(np.full((4, 2), 1.0), np.arange(4) % 2), "features.*norm <= 1"),
        (lambda: ReplayEnv(*toy(), wrong_reward=0.5), "wrong_reward"),
        (lambda: ReplayEnv(toy()[0], np.arange(5)), "labels"),
        (lambda: ReplayEnv(toy()[0], np.zeros(30, dtype=int)), "two classes"),
        (lambda: load_dataset("iris"), "name.*'digits'"),
        (lambda: prepare_features(np.ones(5)), "x"),
    ],
)
def test_bad_inputs(call, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=match):
        call()


def test_rounds_must_come_in_order() -> None:
    env = ReplayEnv(*toy(), seed=0)
    with pytest.raises(ValueError, match="expected round 1"):
        env.decision_set(2)
    env.decision_set(1)
    with pytest.raises(ValueError, match="current round is 1"):
        env.reward(2, 0)


def test_complex_features_are_refused_not_truncated():
    with pytest.raises(TypeError, match="features"):
        ReplayEnv(np.eye(3) * (1 + 1j), np.array([0, 1, 2]))
