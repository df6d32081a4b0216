"""Batched elimination with core sets (Hanna et al. Alg. 1-3), its
environment (Sec. VI), zeta-nets (Lemma 1) and the contextual reduction
(Sec. III-A).

Claims checked:

- every batch's Frank–Wolfe core set meets the 2d condition (Eq. (5)):
  reported by the engine for every batch and recomputed with NumPy for the
  first one; pull counts are ceil(pi_i(a) q^i) (Alg. 1 line 7);
- on an easy instance the optimal arm survives every batch and is the arm
  played to the horizon, for every one of 10 seeds (Lemma 3: failure
  probability <= 1/T per run);
- the released sums carry Laplace noise of the stated scale: with all
  rewards 0 the central sums are Lap(s) (KS test, level 1e-3), the local
  and shuffle sums of n_a rewards have variance 2 s^2 n_a (mean of z^2
  within 5 standard errors, Var(z^2) <= 20 s^4), non-private sums are 0;
- the no-core-set ablation pulls every surviving action uniformly;
- simulate runs the learners in Rust on LinearBanditEnv, reproducibly;
- zeta-nets are nets (every sampled point within zeta) inside the set, and
  a too-large net is refused;
- bad inputs raise ValueErrors naming the argument; pickling mid-stream
  continues identically.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from dpbandits import ContextualEliminationBandit, EliminationLinearBandit, LinearBanditEnv, simulate
from dpbandits.errors import StateError
from dpbandits.learners.online import research_replay
from dpbandits.nets import zeta_net


def circle(k: int) -> np.ndarray:
    a = 2 * np.pi * np.arange(k) / k
    return np.column_stack([np.cos(a), np.sin(a)])


def play(learner: EliminationLinearBandit, means: np.ndarray, rng: np.random.Generator, rounds: int,
         zero: bool = False) -> list[int]:
    """Online loop with +-1 rewards of the given means (or all rewards 0)."""
    chosen = []
    u = rng.random(rounds)
    for t in range(rounds):
        a = learner.select()
        chosen.append(a)
        learner.update(0.0 if zero else (1.0 if u[t] < 0.5 * (1 + means[a]) else -1.0))
    return chosen


# ------------------------------------------------------------ core sets


def test_core_sets_meet_the_2d_condition_and_pull_counts() -> None:
    rng = np.random.default_rng(0)
    acts = rng.normal(size=(40, 3))
    acts /= np.linalg.norm(acts, axis=1, keepdims=True)
    theta = np.array([0.6, 0.0, 0.8])
    lrn = EliminationLinearBandit(acts, 20_000, "central", 1.0, seed=1)
    play(lrn, acts @ theta, rng, 20_000)
    hist = lrn.history
    assert len(hist) == lrn.schedule.batches
    for i, h in enumerate(hist):
        assert h["design_value"] <= 2 * h["rank"] * (1 + 1e-9)
        q = lrn.schedule.lengths[i]
        assert h["pulls"] == [math.ceil(w * q) for w in h["weights"]]
        assert len(h["support"]) <= h["rank"] * (h["rank"] + 1) // 2
    # Recompute Eq. (5) for batch 1 (A_1 = A): max_a a^T V(pi)^-1 a <= 2d.
    h = hist[0]
    sup = acts[h["support"]]
    v = (sup.T * np.array(h["weights"])) @ sup
    g = np.einsum("ij,jk,ik->i", acts, np.linalg.inv(v), acts)
    assert g.max() <= 6 * (1 + 1e-9)
    assert g.max() == pytest.approx(h["design_value"], rel=1e-9)


def test_optimal_arm_survives_every_batch_on_an_easy_instance() -> None:
    acts = circle(10)
    means = acts @ np.array([1.0, 0.0])  # arm 0 is optimal, gap >= 0.19
    for privacy, kw in [(None, {}), ("central", {"epsilon": 1.0}), ("shuffle", {"epsilon": 1.0, "delta": 1e-6})]:
        for seed in range(10):
            lrn = EliminationLinearBandit(acts, 30_000, privacy, seed=seed, **kw)
            u = np.random.default_rng(100 + seed).random(30_000)
            engine, batch, t = lrn._engine, -1, 0
            while engine.committed is None:
                if engine.batch_index != batch:  # a batch has just started: A_i
                    batch = engine.batch_index
                    assert 0 in set(engine.active().tolist()), (privacy, seed, lrn.history)
                a = engine.select()
                engine.update(a, 1.0 if u[t] < 0.5 * (1 + means[a]) else -1.0)
                t += 1
            assert lrn.committed == 0, (privacy, seed)


def test_no_core_set_ablation_pulls_every_survivor_uniformly() -> None:
    acts = circle(12)
    lrn = EliminationLinearBandit(acts, 5_000, "central", 1.0, exploration="uniform", seed=2)
    play(lrn, acts @ np.array([0.0, 1.0]), np.random.default_rng(2), 2_000)
    first = lrn.history[0]
    assert first["support"] == list(range(12))
    assert np.allclose(first["weights"], 1 / 12)
    core = EliminationLinearBandit(acts, 5_000, "central", 1.0, seed=2)
    play(core, acts @ np.array([0.0, 1.0]), np.random.default_rng(2), 2_000)
    assert len(core.history[0]["support"]) <= 3


# ------------------------------------------------------------ noise scales


def released(privacy: str | None, runs: int, **kw: float) -> tuple[list[float], list[int], list[float]]:
    """Released sums, their pull counts and scales over many runs with rewards 0."""
    sums, pulls, scales = [], [], []
    acts = circle(6)
    for seed in range(runs):
        lrn = EliminationLinearBandit(acts, 200, privacy, seed=seed, **kw)  # type: ignore[arg-type]
        play(lrn, np.zeros(6), np.random.default_rng(0), 200, zero=True)
        for h in lrn.history:
            sums += h["released_sums"]
            pulls += h["pulls"]
            scales += [h["noise_scale"]] * len(h["pulls"])
    return sums, pulls, scales


def test_central_sums_carry_laplace_of_scale_sensitivity_over_epsilon() -> None:
    sums, _, scales = released("central", 300, epsilon=0.5)
    assert set(scales) == {4.0}  # (r_max - r_min) / eps = 2 / 0.5
    assert stats.kstest(np.array(sums), stats.laplace(scale=4.0).cdf).pvalue > 1e-3
    _, _, pscales = released("central", 100, epsilon=0.5, calibration="paper")  # type: ignore[arg-type]
    assert set(pscales) == {2.0}


@pytest.mark.parametrize("privacy,kw", [("local", {"epsilon": 2.0}), ("shuffle", {"epsilon": 1.0, "delta": 1e-3})])
def test_local_and_shuffle_sums_have_variance_2_s2_n(privacy: str, kw: dict[str, float]) -> None:
    sums, pulls, scales = released(privacy, 300, **kw)
    s = np.array(scales)
    z2 = np.array(sums) ** 2 / (np.array(pulls) * 2 * s**2)  # E = 1, Var <= 20 s^4 / (2 s^2)^2 = 5
    assert abs(z2.mean() - 1) < 5 * math.sqrt(5 / z2.size), (z2.mean(), z2.size)
    lrn = EliminationLinearBandit(circle(6), 200, privacy, **kw)  # type: ignore[arg-type]
    if privacy == "local":
        assert lrn.noise_scales == (1.0,) * lrn.schedule.batches  # 2 / eps0
    else:
        assert lrn.noise_scales == tuple(2.0 / e for e in lrn.batch_epsilons)


def test_non_private_sums_are_exact() -> None:
    sums, _, scales = released(None, 5)
    assert set(sums) == {0.0} and set(scales) == {0.0}


# ------------------------------------------------------------ simulate and env


def test_simulate_runs_in_rust_and_is_reproducible() -> None:
    env = LinearBanditEnv(10, d=2, seed=4)
    lrn = EliminationLinearBandit(env.actions, 100_000, "central", 1.0, seed=5)
    a = simulate(lrn, env, seeds=[1, 2])
    b = simulate(lrn, env, seeds=[1, 2])
    assert np.array_equal(a.regret, b.regret)
    assert np.all(np.isfinite(a.regret)) and np.all(a.regret[:, -1] < 100_000)
    assert a.guarantee.model == "central"


def test_environment_rewards_and_pickle() -> None:
    env = LinearBanditEnv(circle(4) * 0.5, seed=3)
    assert np.allclose(env.mean_rewards(1), env.actions @ env.theta)
    assert abs(np.linalg.norm(env.theta) - 1) < 1e-12
    clone = pickle.loads(pickle.dumps(env))
    assert [env.reward(1, 2) for _ in range(20)] == [clone.reward(1, 2) for _ in range(20)]


# ------------------------------------------------------------ zeta-nets and contexts


@pytest.mark.parametrize("kind,d", [("sphere", 2), ("sphere", 3), ("ball", 2), ("ball", 3)])
def test_zeta_nets_cover_the_set(kind: str, d: int) -> None:
    zeta = 0.2
    net = zeta_net(kind, d, zeta)  # type: ignore[arg-type]
    norms = np.linalg.norm(net, axis=1)
    assert np.all(norms <= 1 + 1e-12)
    if kind == "sphere":
        assert np.allclose(norms, 1.0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    if kind == "ball":
        x *= rng.random((2000, 1)) ** (1 / d)
    dist = np.min(np.linalg.norm(x[:, None, :] - net[None, :, :], axis=2), axis=1)
    assert dist.max() <= zeta


def test_continuous_action_sets_use_a_net_and_refuse_huge_ones() -> None:
    lrn = EliminationLinearBandit("sphere", 1000, None, d=2, zeta=0.05, seed=0)
    assert lrn.actions.shape == (math.ceil(math.pi / 0.05), 2)
    with pytest.raises(ValueError, match=r"zeta.*max_actions"):
        EliminationLinearBandit("sphere", 10**7, None, d=2)  # zeta = 1/T: 3.1e7 points


def test_contextual_reduction_plays_the_clients_argmax() -> None:
    feats = np.array([[1.0, 0.0], [0.0, 1.0], [-0.7, 0.7]])

    def sampler(rng: np.random.Generator) -> np.ndarray:
        return feats * rng.choice([0.5, 1.0])

    thetas = circle(8)
    lrn = ContextualEliminationBandit(thetas, sampler, 2000, "central", 1.0, n_samples=200, seed=1)
    # g(theta) = E[phi(a*(theta, c), c)] = 0.75 * feats[argmax feats @ theta].
    best = np.argmax(feats @ thetas.T, axis=0)
    assert np.allclose(lrn.g, 0.75 * feats[best], atol=0.1)
    assert lrn.privacy.model == "joint"
    a = lrn.select(feats)
    assert a == int(np.argmax(feats @ thetas[lrn.linear._pending]))
    lrn.update(1.0)
    with pytest.raises(StateError):
        lrn.update(1.0)


# ------------------------------------------------------------ errors and pickling


def test_bad_inputs_raise_clear_errors() -> None:
    acts = circle(5)
    with pytest.raises(ValueError, match=r"actions.*norm"):
        EliminationLinearBandit(acts * 2, 100)
    with pytest.raises(ValueError, match="delta"):
        EliminationLinearBandit(acts, 100, "shuffle", 1.0)
    with pytest.raises(ValueError, match="delta"):
        EliminationLinearBandit(acts, 100, "central", 1.0, 1e-6)
    with pytest.raises(ValueError, match="epsilon"):
        EliminationLinearBandit(acts, 100, "local")
    with pytest.raises(ValueError, match="delta"):
        EliminationLinearBandit(acts, 100, "shuffle-sum", 1.0)  # Alg. 4: tests/test_elimination_shuffle_sum.py
    with pytest.raises(ValueError, match="privacy"):
        EliminationLinearBandit(acts, 100, "gaussian", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="horizon"):
        EliminationLinearBandit(acts, 1)
    with pytest.raises(ValueError, match="epsilon"):
        EliminationLinearBandit(acts, 100, None, 1.0)
    with pytest.raises(ValueError, match="reward_range"):
        EliminationLinearBandit(acts, 100, reward_range=(1.0, 1.0))
    lrn = EliminationLinearBandit(acts, 100, "central", 1.0, bounds="error", seed=0)
    with pytest.raises(ValueError, match="decision_set"):
        lrn.select(acts[:3])
    lrn.select(acts)
    with pytest.raises(ValueError, match="reward"):
        lrn.update(3.0)
    with pytest.raises(StateError):
        EliminationLinearBandit(acts, 100, seed=0).update(1.0)


def test_pickling_mid_stream_continues_identically() -> None:
    acts = circle(9)
    means = acts @ np.array([0.6, 0.8])
    for privacy, kw in [("central", {"epsilon": 1.0}), ("local", {"epsilon": 1.0}),
                        ("shuffle", {"epsilon": 1.0, "delta": 1e-6})]:
        a = EliminationLinearBandit(acts, 5_000, privacy, seed=11, **kw)  # type: ignore[arg-type]
        play(a, means, np.random.default_rng(1), 700)
        with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
            b = pickle.loads(pickle.dumps(a))
        assert play(a, means, np.random.default_rng(2), 3000) == play(b, means, np.random.default_rng(2), 3000)
        assert a.history == b.history and a.privacy == b.privacy


def test_repr_spawn_and_fork() -> None:
    acts = circle(7)
    lrn = EliminationLinearBandit(acts, 2_000, "local", 1.0, seed=3)
    assert repr(lrn) == (
        "EliminationLinearBandit(actions=<7 x 2 actions>, horizon=2000, privacy='local', epsilon=1.0, seed=3)"
    )
    means = acts @ np.array([1.0, 0.0])
    play(lrn, means, np.random.default_rng(0), 100)
    fresh = lrn.spawn(3)
    assert fresh.t == 0 and fresh.config == lrn.config
    fork = lrn.fork(99)
    assert fork.t == 100 and fork.seed == 99
    # Same rewards, independent future noise: the released sums differ.
    play(lrn, means, np.random.default_rng(1), 300)
    play(fork, means, np.random.default_rng(1), 300)
    assert lrn.history[-1]["released_sums"] != fork.history[-1]["released_sums"]
