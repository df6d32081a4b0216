"""The online protocol of the contextual linear learners, elimination,
EXP2 / SCRiBLe and the experts learners: delayed and out-of-order
updates, outstanding selections, batch calls equal to the loop of single
calls bit for bit, checkpoints with outstanding selections, and policies
served from released values."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.errors import StateError
from dpbandits.serving_linear import LinearUCBPolicy, MishraThakurtaPolicy
from dpbandits.serving_sampled import LaplacePosteriorPolicy

D, K, H = 4, 6, 400

#: name -> make(seed): every contextual linear learner (OnlineLearner).
CONTEXTUAL: dict[str, Callable[[int], Any]] = {
    "LinUCB": lambda s: dp.LinUCB(D, H, seed=s),
    "JointDPLinUCB-gaussian": lambda s: dp.JointDPLinUCB(D, H, 1.0, 0.1, seed=s),
    "JointDPLinUCB-wishart": lambda s: dp.JointDPLinUCB(D, H, 1.0, 0.1, noise="wishart", seed=s),
    "JointDPLinUCB-blt": lambda s: dp.JointDPLinUCB(D, H, 1.0, 0.1, calibration="tight", counter="blt", seed=s),
    "JointDPLinUCB-epoch": lambda s: dp.JointDPLinUCB(
        D, H, 1.0, 0.1, calibration="tight", counter="epoch", first_epoch=4, seed=s),
    "LocalLinUCB": lambda s: dp.LocalLinUCB(D, H, 1.0, 0.1, seed=s),
    "ReweightedLinUCB": lambda s: dp.ReweightedLinUCB(D, H, first_epoch=7, seed=s),
    "JointDPReweightedLinUCB": lambda s: dp.JointDPReweightedLinUCB(D, H, 1.0, 1e-6, first_epoch=7, seed=s),
    "ReweightedLogisticUCB": lambda s: dp.ReweightedLogisticUCB(D, H, first_epoch=7, seed=s),
    "JointDPReweightedLogisticUCB": lambda s: dp.JointDPReweightedLogisticUCB(D, H, 1.0, 1e-6, first_epoch=7,
                                                                              seed=s),
    "LocalDPReweightedLogisticUCB": lambda s: dp.LocalDPReweightedLogisticUCB(D, H, 1.0, 1e-6, first_epoch=7,
                                                                              seed=s),
    "LogisticUCB": lambda s: dp.LogisticUCB(D, H, seed=s),
    "LogisticThompsonSampling": lambda s: dp.LogisticThompsonSampling(D, H, seed=s),
    "ShuffleLinUCB": lambda s: dp.ShuffleLinUCB(D, H, 1.0, 0.1, batch_size=8, seed=s),
    "PrivateContextualUCB": lambda s: dp.PrivateContextualUCB(D, H, 1.0, seed=s),
    "PrivateContextualThompsonSampling": lambda s: dp.PrivateContextualThompsonSampling(D, H, 1.0, seed=s),
}
#: Those whose policy is the Rust LinUCB policy (bit-identical selections).
LINUCB_FAMILY = [n for n in CONTEXTUAL if "Contextual" not in n and not n.startswith("Logistic")]


def sets(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, K, D))
    return x / np.linalg.norm(x, axis=2, keepdims=True)  # ||x|| = 1 = L


def rewards(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=n)


def released(learner: Any) -> list[bytes]:
    """The released statistics the next decision reads, as bytes (for the
    non-private logistic Thompson sampling, its posterior's theta and A)."""
    p = learner.policy()
    if isinstance(p, LaplacePosteriorPolicy):
        return [p.theta.tobytes(), p.precision.tobytes()]
    return [np.asarray(a).tobytes() for a in (p.released() if isinstance(p, MishraThakurtaPolicy)
                                               else p.released()[1:])]


# -------------------------------------------------- delayed and out of order


@pytest.mark.parametrize("name", sorted(CONTEXTUAL))
def test_out_of_order_updates_give_the_statistics_of_the_same_arrival_order(name: str) -> None:
    make = CONTEXTUAL[name]
    a, b = make(3), make(3)
    ds, ys = sets(40, 1), rewards(40, 2)
    chosen = [a.select(s) for s in ds]  # 40 decisions before any reward
    assert a.outstanding.shape == (40, D)
    xs = ds[np.arange(40), chosen]
    arrival = np.random.default_rng(5).permutation(40)
    for j in arrival:
        a.update(xs[j], ys[j])
    for j in arrival:  # the same rows and rewards, in the same arrival order, as logged data
        b.update(xs[j], ys[j])
    assert a.t == b.t == 40 and len(a.outstanding) == 0
    assert released(a) == released(b)


@pytest.mark.parametrize("name", sorted(CONTEXTUAL))
def test_update_reward_with_two_outstanding_selections_raises_naming_them(name: str) -> None:
    learner = CONTEXTUAL[name](0)
    ds = sets(2, 3)
    with pytest.raises(StateError, match="preceding select"):
        learner.update(0.5)
    i = learner.select(ds[0])
    j = learner.select(ds[1])
    with pytest.raises(StateError, match="2 selections are outstanding") as info:
        learner.update(0.5)
    assert "update(x, reward)" in str(info.value)
    assert learner.t == 0  # nothing recorded
    np.testing.assert_array_equal(learner.outstanding, [ds[0][i], ds[1][j]])
    learner.update(ds[0][i], 0.25)  # settles the first; the second is now the only one
    np.testing.assert_array_equal(learner.outstanding, [ds[1][j]])
    learner.update(-0.25)
    assert learner.t == 2 and len(learner.outstanding) == 0


def test_an_update_settles_the_oldest_matching_selection_and_logged_rows_settle_nothing() -> None:
    learner = dp.JointDPLinUCB(D, H, 1.0, 0.1, seed=0)
    s = sets(1, 4)[0]
    same = np.repeat(s[:1], 3, axis=0)  # every row identical: the same row is selected thrice
    for _ in range(3):
        assert learner.select(same) == 0
    other = sets(1, 5)[0][0]
    learner.update(other, 0.1)  # logged data: no outstanding selection matches
    assert len(learner.outstanding) == 3
    learner.update(s[0], 0.2)
    assert len(learner.outstanding) == 2 and learner.t == 2


def test_a_refused_update_leaves_the_outstanding_selection() -> None:
    learner = dp.JointDPLinUCB(D, H, 1.0, 0.1, bounds="error", seed=0)
    s = sets(1, 6)[0]
    learner.select(s)
    with pytest.raises(ValueError, match="reward"):
        learner.update(5.0)
    assert len(learner.outstanding) == 1 and learner.t == 0
    learner.update(0.5)
    assert learner.t == 1


# ---------------------------------------- one selection at a time (documented)


def _elim() -> Any:
    return dp.EliminationLinearBandit(np.eye(3), 2000, "central", 1.0, seed=0)


def test_elimination_exp2_and_scrible_refuse_a_second_outstanding_selection() -> None:
    for learner in (_elim(), dp.EXP2(4, 2000, 1.0, seed=0), dp.SCRiBLe(3, 2000, 1.0, seed=0)):
        first = learner.select()
        with pytest.raises(StateError, match="one selection at a time"):
            learner.select()
        assert len(learner.outstanding) == 1
        learner.update(first, 0.5) if not isinstance(learner, dp.SCRiBLe) else learner.update(first, 0.1)
        assert learner.t == 1 and len(learner.outstanding) == 0
        learner.select()  # free again
    with pytest.raises(ValueError, match="outstanding"):
        lr = _elim()
        i = lr.select()
        lr.update((i + 1) % 3, 0.5)
    with pytest.raises(ValueError, match="outstanding"):
        ex = dp.EXP2(4, 2000, 1.0, seed=0)
        i = ex.select()
        ex.update((i + 1) % 4, 0.5)
    with pytest.raises(ValueError, match="outstanding"):
        sc = dp.SCRiBLe(3, 2000, 1.0, seed=0)
        sc.select()
        sc.update(np.zeros(3), 0.1)


def test_update_index_reward_equals_update_reward_for_elimination_and_exp2() -> None:
    for make in (_elim, lambda: dp.EXP2(4, 2000, 1.0, seed=1)):
        a, b = make(), make()
        for t in range(300):
            i, j = a.select(), b.select()
            assert i == j
            a.update(0.3 + 0.001 * t)
            b.update(j, 0.3 + 0.001 * t)
        assert a._engine.to_bytes() == b._engine.to_bytes()


# --------------------------------------------------- batch = loop, bit for bit


@pytest.mark.parametrize("name", sorted(CONTEXTUAL))
def test_select_many_and_update_many_equal_the_loop_bit_for_bit(name: str) -> None:
    make = CONTEXTUAL[name]
    a, b = make(11), make(11)
    for block, n in enumerate([1, 7, 0, 25, 30]):
        ds, ys = sets(n, 100 + block), rewards(n, 200 + block)
        got = a.select_many(ds)
        want = [b.select(s) for s in ds]
        assert got.dtype == np.int64 and got.tolist() == want
        xs = ds[np.arange(n), got]
        a.update_many(xs, ys)
        for x, y in zip(xs, ys, strict=True):
            b.update(x, y)
        assert a.t == b.t and len(a.outstanding) == len(b.outstanding) == 0
        assert a._engine.to_bytes() == b._engine.to_bytes()


@pytest.mark.parametrize("name", ["JointDPLinUCB-gaussian", "PrivateContextualUCB"])
def test_a_batch_stops_where_the_loop_would_have_raised(name: str) -> None:
    make = CONTEXTUAL[name]
    a, b = make(2), make(2)
    ds, ys = sets(10, 7), rewards(10, 8)
    bad = ds.copy()
    bad[6, 2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        a.select_many(bad)
    for s in bad[:6]:
        b.select(s)
    with pytest.raises(ValueError, match="NaN or infinite"):
        b.select(bad[6])
    np.testing.assert_array_equal(a.outstanding, b.outstanding)
    assert len(a.outstanding) == 6
    xs = a.outstanding
    ys_bad = ys[:6].copy()
    ys_bad[4] = np.inf
    with pytest.raises(ValueError, match="reward"):
        a.update_many(xs, ys_bad)
    for x, y in zip(xs[:4], ys_bad[:4], strict=True):
        b.update(x, y)
    with pytest.raises(ValueError, match="reward"):
        b.update(xs[4], ys_bad[4])
    assert a.t == b.t == 4
    np.testing.assert_array_equal(a.outstanding, b.outstanding)
    assert a._engine.to_bytes() == b._engine.to_bytes()


def test_batch_calls_check_their_shapes() -> None:
    learner = dp.JointDPLinUCB(D, H, 1.0, 0.1, seed=0)
    with pytest.raises(ValueError, match=r"decision_sets.*\(n, k, 4\)"):
        learner.select_many(np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"decision_sets.*\(n, k, 4\)"):
        learner.select_many(np.zeros((3, 0, 4)))
    with pytest.raises(ValueError, match=r"`X`.*\(n, 4\)"):
        learner.update_many(np.zeros((3, 5)), np.zeros(3))
    with pytest.raises(ValueError, match="`rewards`"):
        learner.update_many(np.zeros((3, 4)), np.zeros(2))
    assert learner.t == 0 and len(learner.outstanding) == 0


@pytest.mark.parametrize("cls", [dp.PrivateFTRL, dp.PrivateFTPL])
def test_experts_update_many_equals_the_loop(cls: type) -> None:
    args = (5, 300, 1.0) if cls is dp.PrivateFTRL else (5, 300, 1.0, 1e-3)
    a, b = cls(*args, seed=4), cls(*args, seed=4)
    losses = np.random.default_rng(9).uniform(0.0, 1.0, size=(120, 5))
    a.update_many(losses)
    for row in losses:
        b.update(row)
    assert a.t == b.t == 120
    assert a._engine.to_bytes() == b._engine.to_bytes()
    bad = losses[:3].copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="losses"):
        a.update_many(bad)
    assert a.t == 121  # the row before the refused one is recorded, as in the loop


# ------------------------------------------------------------- checkpoints


@pytest.mark.parametrize("name", sorted(CONTEXTUAL))
def test_outstanding_selections_survive_a_checkpoint_and_a_pickle(name: str, tmp_path: Path) -> None:
    a = CONTEXTUAL[name](21)
    ds, ys = sets(30, 9), rewards(30, 10)
    idx = a.select_many(ds[:20])
    a.update_many(ds[np.arange(10), idx[:10]], ys[:10])  # 10 of 20 rewards arrived
    path = tmp_path / "l.ckpt"
    a.save(path)
    # Research replays: bit-identical continuations (restores for use re-key).
    b = type(a).load(path, replay=True)
    with dp.research_replay():
        c = pickle.loads(pickle.dumps(a))
    for other in (b, c):
        np.testing.assert_array_equal(other.outstanding, a.outstanding)
    for lr in (a, b, c):
        lr.update_many(ds[np.arange(10, 20), idx[10:]], ys[10:20])
        assert len(lr.outstanding) == 0
        lr.select_many(ds[20:])
    assert a._engine.to_bytes() == b._engine.to_bytes() == c._engine.to_bytes()


# ----------------------------------------------------------------- policies


@pytest.mark.parametrize("name", LINUCB_FAMILY)
def test_the_policy_pickles_and_selects_as_the_learner_from_the_same_release(name: str) -> None:
    learner = CONTEXTUAL[name](31)
    ds, ys = sets(60, 12), rewards(60, 13)
    idx = learner.select_many(ds)
    learner.update_many(ds[np.arange(60), idx], ys)
    policy = learner.policy()
    assert isinstance(policy, LinearUCBPolicy) and policy.version == learner.policy_version
    served = pickle.loads(pickle.dumps(policy))
    probe = sets(25, 14)
    for s in probe:
        assert served.scores(s).tobytes() == learner.ucb(s).tobytes()
    assert served.select_many(probe).tolist() == [policy.select(s) for s in probe]
    assert served.select_many(probe).tolist() == learner.select_many(probe).tolist()
    # The policy is frozen: new rewards change the learner, not the policy taken before.
    before = served.scores(probe[0]).tobytes()
    learner.update_many(learner.outstanding, rewards(25, 15))
    assert served.scores(probe[0]).tobytes() == before
    if name != "ShuffleLinUCB":  # a shuffle batch of 8 releases every 8 rewards
        assert learner.policy_version > policy.version


def test_policy_version_moves_with_the_releases_of_a_batched_learner() -> None:
    learner = dp.ShuffleLinUCB(D, H, 1.0, 0.1, batch_size=8, seed=0)
    ds, ys = sets(16, 16), rewards(16, 17)
    versions = []
    for s, y in zip(ds, ys, strict=True):
        i = learner.select(s)
        learner.update(s[i], y)
        versions.append(learner.policy_version)
    assert versions == [0] * 7 + [1] * 8 + [2]


def test_the_policy_holds_only_released_values() -> None:
    learner = dp.LocalLinUCB(D, H, 1.0, 0.1, seed=0)
    for s, y in zip(sets(20, 18), rewards(20, 19), strict=True):
        learner.update(s[0], y)
    kind, v, u = learner.policy().released()
    sums = learner.released_sums()
    tri = [(i, j) for i in range(D) for j in range(i, D)]
    assert kind == "released"
    # V = released upper triangle (symmetrized) + shift I; u~ = the released last D entries.
    off = [v[i, j] for i, j in tri if i != j]
    np.testing.assert_array_equal(off, [sums[p] for p, (i, j) in enumerate(tri) if i != j])
    np.testing.assert_array_equal(u, sums[len(tri):len(tri) + D])


@pytest.mark.parametrize("name", ["PrivateContextualUCB", "PrivateContextualThompsonSampling"])
def test_the_mishra_thakurta_policy_reads_the_release(name: str) -> None:
    learner = CONTEXTUAL[name](41)
    ds, ys = sets(200, 20), rewards(200, 21)
    idx = learner.select_many(ds)
    learner.update_many(ds[np.arange(200), idx], ys)
    policy = pickle.loads(pickle.dumps(learner.policy(seed=0)))
    a, b = learner.released()
    pa, pb = policy.released()
    np.testing.assert_array_equal(pa, a)
    np.testing.assert_array_equal(pb, b)
    probe = sets(50, 22)
    if name == "PrivateContextualUCB":
        # The same released (A~, b~), scored in NumPy: the same rows (no near ties here).
        assert policy.select_many(probe).tolist() == learner.select_many(probe).tolist()
    else:
        got = policy.select_many(probe)
        assert got.shape == (50,) and got.min() >= 0 and got.max() < K


@pytest.mark.parametrize("name", ["LinUCB", "JointDPLinUCB-gaussian", "JointDPLinUCB-wishart"])
def test_the_estimates_of_a_round_are_computed_once_with_the_bits_of_a_fresh_computation(name: str) -> None:
    # The engine keeps a round's released estimates until the next recorded
    # reward; an engine restored from bytes starts without them and computes
    # them afresh: every selection of the round agrees, and so does the state.
    learner = CONTEXTUAL[name](51)
    ds, ys = sets(30, 23), rewards(30, 24)
    learner.update_many(ds[:, 0], ys)
    state = pickle.dumps(learner)
    probe = sets(12, 25)
    batch = learner.select_many(probe)
    for s, i in zip(probe, batch, strict=True):
        fresh = pickle.loads(state)
        assert fresh.select(s) == i
        assert fresh.ucb(s).tobytes() == learner.ucb(s).tobytes()
    assert fresh.t == learner.t == 30
