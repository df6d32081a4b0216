"""Persistent padding of the Wishart tree (``padding="persistent"``).

A release of round t sums the popcount(t) nodes of t's dyadic
decomposition and is topped up to m draws (Shariff & Sheffet Prop. 9 takes
its noise to be W(Ltilde^2 I, m k)). Fresh padding (the default) draws the
missing draws anew every round; persistent padding keeps one draw per tree
level while that level's bit of t is 0, as the pan-private tree of the
authors' code (PrivateBandits.jl) does. Claims checked:

- every release still carries exactly m draws' worth of noise (variance of
  Gaussian releases, mean and second moments of Wishart releases);
- the draws persist: releases of rounds 2 (binary 10) and 3 (11) share
  node 1 and the draws of levels 2..m-1, so their covariance is m - 1 node
  variances (fresh: 1);
- without noise persistent and fresh releases are the same exact sums;
- checkpoints carry the persistent draws: a restored counter or learner
  continues with identical releases;
- the learner names the padding in its guarantee, and refuses it for
  Gaussian noise, which is not padded.

Thresholds: fixed seeds, Z = 5 standard errors from the exact moments.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from dpbandits import _core
from dpbandits.envs import ShariffSheffetEnv
from dpbandits.learners.linucb import JointDPLinUCB
from dpbandits.learners.online import research_replay
from dpbandits.noise import NoiseWire

Z = 5.0
N = 64  # horizon: 7 tree levels, m = 1 + ceil(log2 64) = 7
M = 7


def _runs(noise: NoiseWire, shape: tuple[int, ...], padding: str, runs: int, seed: int = 3) -> np.ndarray:
    """Releases of zero data for ``runs`` independent runs: (runs, N, *shape)."""
    c = _core.TreeCounter(list(shape), N, noise, seed=seed, pad_to=M, padding=padding)
    return c._release_runs(np.zeros((N, *shape)), runs)


@pytest.mark.parametrize("padding", ["persistent", "fresh"])
def test_gaussian_releases_carry_m_draws_and_persistent_ones_share_them(padding: str) -> None:
    runs, sigma = 20_000, 1.5
    r = _runs(("gaussian", sigma), (), padding, runs)
    var = M * sigma**2
    for t in range(1, N + 1):
        # sum x^2 / var ~ chi^2(runs): the variance estimate has sd var sqrt(2 / runs).
        est = float(np.mean(r[:, t - 1] ** 2))
        assert abs(est - var) <= Z * var * math.sqrt(2 / runs), (t, est, var)
    # Rounds 2 and 3: jointly normal, E[XY] = shared, Var[XY] = var^2 + shared^2.
    shared = (M - 1 if padding == "persistent" else 1) * sigma**2
    cov = float(np.mean(r[:, 1] * r[:, 2]))
    assert abs(cov - shared) <= Z * math.sqrt((var**2 + shared**2) / runs), (padding, cov, shared)


def test_persistent_wishart_releases_have_the_law_of_m_draws() -> None:
    # W_2(sI, k) nodes: each release is W_2(sI, m k): diagonal mean m k s,
    # variance 2 m k s^2; the off-diagonal entry has E[W_12^2] = m k s^2 and
    # Var[W_12^2] = (2 (m k)^2 + 6 m k) s^4.
    runs, s, k = 4000, 0.8, 3.0
    r = _runs(("wishart", s, k), (2, 2), "persistent", runs)
    mk = M * k
    for t in range(1, N + 1):
        w = r[:, t - 1]
        assert np.array_equal(w, np.swapaxes(w, 1, 2))
        diag = w[:, [0, 1], [0, 1]].ravel()
        assert abs(diag.mean() - mk * s) <= Z * math.sqrt(2 * mk * s**2 / diag.size), t
        off2 = w[:, 0, 1] ** 2
        assert abs(off2.mean() - mk * s**2) <= Z * math.sqrt((2 * mk**2 + 6 * mk) * s**4 / runs), t


def test_without_noise_persistent_and_fresh_release_the_exact_sums() -> None:
    rng = np.random.default_rng(4)
    xs = rng.normal(size=(N, 3))
    out = {}
    for padding in ("persistent", "fresh"):
        c = _core.TreeCounter([3], N, ("zero",), seed=1, pad_to=M, padding=padding)
        assert c.padding == padding and c.pad_to == M
        rel = []
        for x in xs:
            c.add(x)
            assert c.noise_terms == M
            rel.append(c.release())
        out[padding] = np.array(rel)
    np.testing.assert_array_equal(out["persistent"], out["fresh"])
    np.testing.assert_allclose(out["fresh"], np.cumsum(xs, axis=0), rtol=1e-12, atol=1e-12)


def test_persistent_counter_round_trips_with_its_draws() -> None:
    c = _core.TreeCounter([2, 2], N, ("wishart", 1.0, 3.0), seed=5, pad_to=M, padding="persistent")
    zero = np.zeros((2, 2))
    for _ in range(21):
        c.add(zero)
    for back in (_core.TreeCounter.from_bytes(c.to_bytes()), pickle.loads(pickle.dumps(c))):
        assert back.padding == "persistent"
        np.testing.assert_array_equal(back.release(), c.release())
    back = _core.TreeCounter.from_bytes(c.to_bytes())
    for _ in range(21, N):
        c.add(zero)
        back.add(zero)
        np.testing.assert_array_equal(back.release(), c.release())


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [({"pad_to": 6}, "pad_to"), ({}, "padding"), ({"pad_to": M, "padding": "sticky"}, "padding")],
)
def test_persistent_counter_needs_a_draw_per_level(kwargs: dict, says: str) -> None:
    kw = {"padding": "persistent", **kwargs}
    with pytest.raises(ValueError, match=says):
        _core.TreeCounter([], N, ("gaussian", 1.0), seed=0, **kw)


def _play(learner: JointDPLinUCB, env: ShariffSheffetEnv, rounds: range) -> list[int]:
    chosen = []
    for t in rounds:
        i = learner.select(env.decision_set(t))
        learner.update(env.reward(t, i))
        chosen.append(i)
    return chosen


def test_learner_names_the_padding_and_restores_it() -> None:
    n = 400
    learner = JointDPLinUCB(3, n, 1.0, 0.1, noise="wishart", padding="persistent", seed=2)
    fresh = JointDPLinUCB(3, n, 1.0, 0.1, noise="wishart", seed=2)
    assert learner.padding == "persistent" and fresh.padding == "fresh"
    assert "persistent padding" in learner.privacy.basis
    assert "persistent" not in fresh.privacy.basis
    assert (learner.privacy.epsilon, learner.privacy.delta) == (fresh.privacy.epsilon, fresh.privacy.delta)
    assert "PersistentTree" in learner._engine.noise_parameters()["statistics"]
    assert "Tree" in fresh._engine.noise_parameters()["statistics"]
    env = ShariffSheffetEnv(3, 8, gap=0.1, seed=9)
    _play(learner, env, range(1, 150))
    with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
        back, env2 = pickle.loads(pickle.dumps((learner, env)))
    assert back.privacy == learner.privacy
    probe = np.random.default_rng(3).normal(size=(6, 3)) / 2
    np.testing.assert_array_equal(back.ucb(probe), learner.ucb(probe))
    assert _play(learner, env, range(150, n + 1)) == _play(back, env2, range(150, n + 1))
    # A fork keeps the released draws and draws new ones from its own generator.
    assert learner.fork(7).padding == "persistent"


def test_persistent_padding_differs_from_fresh_with_noise() -> None:
    env = ShariffSheffetEnv(3, 8, gap=0.1, seed=9)
    probe = env.decision_set(1)
    kept = JointDPLinUCB(3, 400, 1.0, 0.1, noise="wishart", padding="persistent", seed=2)
    fresh = JointDPLinUCB(3, 400, 1.0, 0.1, noise="wishart", seed=2)
    assert not np.array_equal(kept.ucb(probe), fresh.ucb(probe))


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [({"padding": "persistent"}, "only Wishart noise"), ({"noise": "wishart", "padding": "sticky"}, "padding")],
)
def test_learner_refuses_padding_it_cannot_apply(kwargs: dict, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        JointDPLinUCB(3, 100, 1.0, 0.1, **kwargs)


def test_public_tree_counter_takes_persistent_padding() -> None:
    """dpbandits.mechanisms.TreeCounter(padded=True, padding="persistent"):
    floor(log2 n) + 1 draws per release, the same as the engine's."""
    from dpbandits.mechanisms import GaussianNoise, TreeCounter

    public = TreeCounter((), N, GaussianNoise(sigma=1.0), seed=3, padded=True, padding="persistent", sampler="float")
    engine = _core.TreeCounter([], N, ("gaussian", 1.0), seed=3, pad_to=M, padding="persistent")
    for t in range(N):
        public.add(float(t % 2))
        engine.add(np.asarray(float(t % 2)).reshape(()))
        assert public.release() == float(engine.release()), t
    assert public.noise_terms == M
    with pytest.raises(ValueError, match="padded=True"):
        TreeCounter((), N, GaussianNoise(sigma=1.0), seed=3, padding="persistent")
    with pytest.raises(ValueError, match="`padding`"):
        TreeCounter((), N, GaussianNoise(sigma=1.0), seed=3, padded=True, padding="sticky")  # type: ignore[arg-type]
