"""Out-of-range input under the default bounds policy (``bounds="clip"``):
every learner family counts it in ``clipped_rewards`` (saved with the
state), warns once (:class:`dpbandits.errors.ClippedRewardWarning`, naming
the learner, the value, the declared range and the policy), refuses it with
``bounds="error"``, and the batch forms count exactly as the loop of single
calls does."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.errors import ClippedRewardWarning

DS = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])


def _ctx(rng: np.random.Generator) -> np.ndarray:
    x = rng.normal(size=(3, 2))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@dataclass
class Family:
    """A learner and one round of it fed an in-range or an out-of-range input."""

    name: str
    make: Callable[..., Any]
    good: Callable[[Any], None]
    bad: Callable[[Any], None]
    shown: str  # the clipped value as the warning names it


def _karmed(cls: Callable[..., Any], **kw: Any) -> Family:
    def good(lr: Any) -> None:
        lr.update(lr.select(), 0.5)

    def bad(lr: Any) -> None:
        lr.update(lr.select(), 1.7)

    return Family(cls.__name__, lambda **o: cls(k=3, horizon=200, seed=0, **kw, **o), good, bad, "reward 1.7")


def _linear(cls: Callable[..., Any], long_x: bool = False, **kw: Any) -> Family:
    """``long_x``: the bad input is a feature vector of norm 3 > L (LinUCB
    bounds no reward), else a reward 5 > B."""

    def good(lr: Any) -> None:
        lr.select(DS)
        lr.update(0.5)

    def bad(lr: Any) -> None:
        if long_x:
            lr.update(3.0 * DS[0], 0.5)  # logged data: a row that was not selected
        else:
            lr.select(DS)
            lr.update(5.0)

    shown = "x with ||x|| = 3.0" if long_x else "reward 5.0"
    return Family(cls.__name__, lambda **o: cls(d=2, horizon=200, seed=0, **kw, **o), good, bad, shown)


def _losses(cls: Callable[..., Any], select: bool, **kw: Any) -> Family:
    def good(lr: Any) -> None:
        if select:
            lr.select()
        lr.update([0.2, 0.5, 0.9])

    def bad(lr: Any) -> None:
        if select:
            lr.select()
        lr.update([0.2, 1.5, 0.9])

    return Family(cls.__name__, lambda **o: cls(n=3, horizon=200, seed=0, **kw, **o), good, bad, "losses[1] = 1.5")


def _ball_losses(cls: Callable[..., Any], **kw: Any) -> Family:
    def good(lr: Any) -> None:
        lr.update([0.6, 0.0, 0.0])

    def bad(lr: Any) -> None:
        lr.update([0.0, 2.0, 0.0])

    return Family(cls.__name__, lambda **o: cls(n=3, horizon=200, seed=0, **kw, **o), good, bad,
                  "losses of norm 2.0")


def _scalar_loss(cls: Callable[..., Any], value: float, size: str, **kw: Any) -> Family:
    def good(lr: Any) -> None:
        lr.select()
        lr.update(0.0)

    def bad(lr: Any) -> None:
        lr.select()
        lr.update(value)

    return Family(cls.__name__, lambda **o: cls(**{size: 3}, horizon=200, seed=0, **kw, **o), good, bad,
                  f"loss {value}")


def _elimination() -> Family:
    def good(lr: Any) -> None:
        lr.select()
        lr.update(0.5)

    def bad(lr: Any) -> None:
        lr.select()
        lr.update(5.0)

    return Family("EliminationLinearBandit",
                  lambda **o: dp.EliminationLinearBandit(np.eye(2), horizon=1000, privacy="central", epsilon=1.0,
                                                         seed=0, **o), good, bad, "reward 5.0")


def _contextual_elimination() -> Family:
    rng = np.random.default_rng(5)

    def good(lr: Any) -> None:
        lr.select(_ctx(rng))
        lr.update(0.5)

    def bad(lr: Any) -> None:
        lr.select(_ctx(rng))
        lr.update(5.0)

    return Family("ContextualEliminationBandit",
                  lambda **o: dp.ContextualEliminationBandit("sphere", _ctx, horizon=1000, privacy="central",
                                                             epsilon=1.0, d=2, n_samples=50, seed=0, **o),
                  good, bad, "reward 5.0")


FAMILIES = [
    _karmed(dp.PrivateUCB, epsilon=1.0),
    _karmed(dp.PrivateThompsonSampling, epsilon=1.0, gap_estimation=False),
    _karmed(dp.KLUCB),
    _karmed(dp.DPSE, epsilon=1.0),
    _karmed(dp.DPTS, epsilon=1.0),
    _karmed(dp.DPKLUCB, epsilon=1.0),
    _karmed(dp.DPIMED, epsilon=1.0),
    _karmed(dp.AdaPUCB, epsilon=1.0),
    _karmed(dp.AdaPKLUCB, epsilon=1.0),
    _karmed(dp.AdaCUCB, rho=0.5),
    _karmed(dp.AdaCKLUCB, rho=0.5),
    _linear(dp.JointDPLinUCB, epsilon=1.0, delta=0.1),
    _linear(dp.LinUCB, long_x=True),
    _linear(dp.LocalLinUCB, epsilon=1.0, delta=0.1),
    _linear(dp.ShuffleLinUCB, epsilon=1.0, delta=0.1),
    _linear(dp.PrivateContextualUCB, epsilon=1.0),
    _linear(dp.PrivateContextualThompsonSampling, epsilon=1.0),
    _linear(dp.ReweightedLinUCB),
    _linear(dp.JointDPReweightedLinUCB, epsilon=1.0, delta=0.1),
    _linear(dp.LogisticUCB),
    _linear(dp.LogisticThompsonSampling),
    _linear(dp.ReweightedLogisticUCB),
    _linear(dp.JointDPReweightedLogisticUCB, epsilon=1.0, delta=0.1),
    _linear(dp.LocalDPReweightedLogisticUCB, epsilon=1.0, delta=0.1),
    _elimination(),
    _contextual_elimination(),
    _losses(dp.PrivateFTRL, False, epsilon=1.0),
    _losses(dp.PrivateFTPL, False, epsilon=1.0, delta=1e-6),
    _losses(dp.PrivateStochasticExperts, False, epsilon=1.0),
    _losses(dp.LazyPrivateExperts, False, epsilon=1.0),
    _losses(dp.PrivateDartboardExperts, False, epsilon=1.0),
    _ball_losses(dp.LazyPrivateOCO, epsilon=1.0),
    _scalar_loss(dp.EXP2, 1.5, "n", epsilon=1.0),
    _scalar_loss(dp.BatchedPrivateEXP3, 1.5, "k", epsilon=1.0),
    _scalar_loss(dp.SCRiBLe, 5.0, "n", epsilon=1.0),
]

# ThompsonSampling (Beta prior) clips through the Bernoulli trick; it takes no `bounds`.
TS_BETA = _karmed(dp.ThompsonSampling)


def _clip_warnings(record: list[warnings.WarningMessage]) -> list[warnings.WarningMessage]:
    return [w for w in record if issubclass(w.category, ClippedRewardWarning)]


@pytest.mark.parametrize("fam", [*FAMILIES, TS_BETA], ids=lambda f: f.name)
def test_warns_once_and_counts(fam: Family) -> None:
    lr = fam.make()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fam.good(lr)
        assert lr.clipped_rewards == 0
        assert not _clip_warnings(record)
        fam.bad(lr)
        fam.good(lr)
        fam.bad(lr)
    caught = _clip_warnings(record)
    assert lr.clipped_rewards == 2
    assert len(caught) == 1, [str(w.message) for w in caught]
    msg = str(caught[0].message)
    assert msg.startswith(f"{fam.name}: {fam.shown} lies outside the declared "), msg
    assert "bounds='clip'" in msg
    # The warning points at this file (the line that called update).
    assert caught[0].filename == __file__


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_bounds_error_refuses_and_counts_nothing(fam: Family) -> None:
    lr = fam.make(bounds="error")
    fam.good(lr)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippedRewardWarning)
        with pytest.raises(ValueError, match=r"reward|loss|`x`"):
            fam.bad(lr)
    assert lr.clipped_rewards == 0


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_count_survives_save_load_fork_and_copies(fam: Family, tmp_path: Any) -> None:
    lr = fam.make()
    with pytest.warns(ClippedRewardWarning):
        fam.bad(lr)
    fam.good(lr)
    path = tmp_path / "learner.ckpt"
    lr.save(path)
    restored = [type(lr).load(path), type(lr).load(path, replay=True), lr.fork(seed=3),
                pickle.loads(pickle.dumps(lr)), copy.deepcopy(lr)]
    for other in restored:
        assert other.clipped_rewards == 1
        with warnings.catch_warnings():
            # A learner that has clipped does not warn again, restored or not.
            warnings.simplefilter("error", ClippedRewardWarning)
            fam.bad(other)
        assert other.clipped_rewards == 2
    assert lr.clipped_rewards == 1


def test_update_many_counts_as_the_loop_karmed() -> None:
    arms = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    rewards = np.array([0.5, 1.7, -0.2, 0.3, 0.0, 1.0, 2.5, 0.9])
    loop = dp.PrivateUCB(k=3, horizon=100, epsilon=1.0, seed=4)
    batch = dp.PrivateUCB(k=3, horizon=100, epsilon=1.0, seed=4)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for a, r in zip(arms, rewards, strict=True):
            loop.update(int(a), float(r))
        batch.update_many(arms, rewards)
    caught = _clip_warnings(record)
    assert len(caught) == 2  # one per learner
    assert "rewards[1] = 1.7" in str(caught[1].message)
    assert caught[1].filename == __file__
    assert loop.clipped_rewards == batch.clipped_rewards == 3
    assert loop._engine.to_bytes() == batch._engine.to_bytes()


def test_update_many_counts_as_the_loop_linear() -> None:
    xs = np.array([[1.0, 0.0], [0.0, 3.0], [0.6, 0.6], [0.0, 1.0]])
    ys = np.array([0.5, 0.5, -4.0, 0.1])
    loop = dp.JointDPLinUCB(d=2, horizon=100, epsilon=1.0, delta=0.1, seed=4)
    batch = dp.JointDPLinUCB(d=2, horizon=100, epsilon=1.0, delta=0.1, seed=4)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for x, y in zip(xs, ys, strict=True):
            loop.update(x, float(y))
        batch.update_many(xs, ys)
    caught = _clip_warnings(record)
    assert len(caught) == 2
    assert "x with ||x|| = 3.0" in str(caught[1].message)
    assert loop.clipped_rewards == batch.clipped_rewards == 2
    assert loop._engine.to_bytes() == batch._engine.to_bytes()


@pytest.mark.parametrize("cls", [dp.PrivateFTRL, dp.PrivateStochasticExperts])
def test_update_many_counts_as_the_loop_losses(cls: Any) -> None:
    rows = np.array([[0.2, 0.5, 0.9], [0.2, 1.5, 0.9], [0.0, 0.0, -1.0], [0.1, 0.1, 0.1]])
    loop, batch = cls(n=3, horizon=100, epsilon=1.0, seed=4), cls(n=3, horizon=100, epsilon=1.0, seed=4)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for row in rows:
            loop.update(row)
        batch.update_many(rows)
    caught = _clip_warnings(record)
    assert len(caught) == 2
    assert "losses[1, 1] = 1.5" in str(caught[1].message)
    assert loop.clipped_rewards == batch.clipped_rewards == 2
    assert loop._engine.to_bytes() == batch._engine.to_bytes()


def test_features_longer_than_L_are_counted() -> None:
    lr = dp.LinUCB(d=2, horizon=100, seed=0)
    with pytest.warns(ClippedRewardWarning, match=r"LinUCB: x with \|\|x\|\| = 2.0 lies outside"):
        lr.update(np.array([2.0, 0.0]), 0.5)
    # A unit vector built in floating point (norm 1 + 1 ulp) is not a clip.
    x = np.array([0.6, 0.8]) * (1.0 + 2.0**-52)
    lr.update(x, 0.5)
    assert lr.clipped_rewards == 1


def test_unchecked_and_refusing_learners_never_count() -> None:
    ucb = dp.UCB1(k=2, horizon=10, seed=0)  # UCB1 takes any finite reward
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippedRewardWarning)
        ucb.update(ucb.select(), 7.0)
    assert ucb.clipped_rewards == 0
    bai = dp.TopTwoBAI(k=2, delta=0.1, seed=0)  # refuses rewards outside [0, 1]
    with pytest.raises(ValueError, match="reward"):
        bai.update(bai.select(), 1.5)
    assert bai.clipped_rewards == 0


def test_warning_as_error_still_records_the_round() -> None:
    lr = dp.DPKLUCB(k=2, horizon=50, epsilon=1.0, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippedRewardWarning)
        with pytest.raises(ClippedRewardWarning):
            lr.update(lr.select(), 3.0)
    # The clipped reward was recorded before the warning was raised.
    assert lr.clipped_rewards == 1
    assert lr.t + int(lr.queue_lengths().sum()) == 1


# --- a saved count that no run can reach ------------------------------------------

def _edge_inputs(fam: Family, lr: Any) -> tuple[Callable[[Any], None], Callable[[Any], None]]:
    """Two first rounds that record the same value, one of them clipped:
    an input at the edge of the declared bounds and one beyond it."""
    name = fam.name
    if name in {"EXP2", "BatchedPrivateEXP3"}:
        return (lambda x: (x.select(), x.update(1.0))), (lambda x: (x.select(), x.update(1.5)))
    if name == "SCRiBLe":
        def edge(x: Any) -> None:
            y = x.select()
            x.update(float(np.sqrt(sum(float(v) * float(v) for v in y))))  # |loss| = ||y||, the bound
        return edge, (lambda x: (x.select(), x.update(5.0)))
    if fam.name == "LazyPrivateOCO":
        return (lambda x: x.update([0.0, 1.0, 0.0])), (lambda x: x.update([0.0, 2.0, 0.0]))
    if "losses" in fam.shown:
        return (lambda x: x.update([0.2, 1.0, 0.9])), (lambda x: x.update([0.2, 1.5, 0.9]))
    if name == "LinUCB":
        return (lambda x: x.update(DS[0], 0.5)), (lambda x: x.update(3.0 * DS[0], 0.5))
    if name in {"EliminationLinearBandit", "ContextualEliminationBandit"}:
        ds = _ctx(np.random.default_rng(9))
        sel = (lambda x: x.select(ds)) if name.startswith("Contextual") else (lambda x: x.select())
        return (lambda x: (sel(x), x.update(1.0))), (lambda x: (sel(x), x.update(5.0)))
    if hasattr(lr, "k"):  # K-armed
        return (lambda x: x.update(x.select(), 1.0)), (lambda x: x.update(x.select(), 1.7))
    return (lambda x: (x.select(DS), x.update(1.0))), (lambda x: (x.select(DS), x.update(5.0)))


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_an_impossible_saved_count_is_a_checkpoint_error(fam: Family, tmp_path: Any) -> None:
    from dpbandits.checkpoint import read_checkpoint, write_checkpoint
    from dpbandits.errors import CheckpointError

    edge, beyond = _edge_inputs(fam, fam.make())
    a, b = fam.make(), fam.make()
    edge(a)
    with pytest.warns(ClippedRewardWarning):
        beyond(b)
    assert (a.clipped_rewards, b.clipped_rewards) == (0, 1)
    sa, sb = bytes(a._engine.to_bytes()), bytes(b._engine.to_bytes())
    # The same recorded value: the states differ only in the count (a varint 0 -> 1).
    diff = [i for i in range(len(sb)) if len(sa) == len(sb) and sa[i] != sb[i]]
    assert len(sa) == len(sb) and len(diff) == 1 and (sa[diff[0]], sb[diff[0]]) == (0, 1)
    path = tmp_path / "b.ckpt"
    b.save(path)
    ckpt = read_checkpoint(path)
    for count in (2, 100):  # one round recorded: at most one clipped
        forged = bytearray(sb)
        forged[diff[0]] = count
        write_checkpoint(path, ckpt.kind, ckpt.config, bytes(forged), ckpt.extra, lineage=ckpt.lineage)
        with pytest.raises(CheckpointError):
            type(b).load(path)
    write_checkpoint(path, ckpt.kind, ckpt.config, sb, ckpt.extra, lineage=ckpt.lineage)
    assert type(b).load(path).clipped_rewards == 1
