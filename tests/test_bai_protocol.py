"""The best-arm identification learners under the library's protocol: they
are LearnerBase learners (ledger registration at construction, restores,
pickles and forks that re-key), their ``select`` / ``update`` are bound to
the engine in Rust with any number of outstanding selections, and
``policy()`` serves their sampling rule from released values only."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.errors import CheckpointError, PrivacyBudgetError, StateError
from dpbandits.learners.bai import BestArmIdentifier
from dpbandits.learners.online import LearnerBase
from dpbandits.serving_sampled import BAIPolicy

MAKERS = {
    "DPTopTwo": lambda seed=1: dp.DPTopTwo(4, 0.05, 1.0, first_batch=4.0, seed=seed),
    "DPTopTwo/shifted": lambda seed=1: dp.DPTopTwo(4, 0.05, 1.0, first_batch=4.0, stopping="shifted", seed=seed),
    "AdaPTT": lambda seed=1: dp.AdaPTT(4, 0.05, 1.0, seed=seed),
    "AdaPTTStar": lambda seed=1: dp.AdaPTTStar(4, 0.05, 1.0, seed=seed),
    "TopTwoBAI": lambda seed=1: dp.TopTwoBAI(4, 0.05, seed=seed),
    "CTBTT": lambda seed=1: dp.CTBTT(4, 0.05, 1.0, seed=seed),
}
MEANS = [0.8, 0.6, 0.5, 0.2]


def _play(learner: Any, rounds: int, seed: int = 0) -> list[int]:
    env = _core.BaiBernoulliRewards(MEANS, seed, 0)
    arms = []
    for _ in range(rounds):
        arm = learner.select()
        learner.update(arm, env.pull(arm))
        arms.append(arm)
    return arms


def test_every_bai_class_is_a_learner_with_ledger_arguments() -> None:
    classes = {type(m()) for m in MAKERS.values()}
    public = {getattr(dp, n) for n in dp.__all__
              if isinstance(getattr(dp, n), type) and issubclass(getattr(dp, n), BestArmIdentifier)}
    assert classes == public
    for cls in public:
        assert issubclass(cls, LearnerBase) and cls.__name__ in dp.learners.__all__
        assert "ledger:" in (cls.__doc__ or "") and "dataset:" in (cls.__doc__ or "")
    learner = MAKERS["DPTopTwo"]()
    assert "__class__" not in learner.config and learner.spawn(2).seed == 2
    assert repr(learner).startswith("DPTopTwo(k=4")


@pytest.mark.parametrize("name", ["DPTopTwo", "AdaPTT", "AdaPTTStar"])
def test_ledger_registration_at_construction(tmp_path: Path, name: str) -> None:
    with dp.Ledger(tmp_path / "l.db") as ledger:
        ledger.set_budget("d", epsilon=1.5, delta=0.0, model="central")
        cls, config = type(MAKERS[name]()), dict(MAKERS[name]().config)
        learner = cls(**config, ledger=ledger, dataset="d")
        (spend,) = ledger.spends("d")
        assert spend.kind == "register" and spend.epsilon == pytest.approx(learner.privacy.epsilon)
        assert learner.lineage["ledger"]["dataset"] == "d"
        with pytest.raises(PrivacyBudgetError):
            cls(**config, ledger=ledger, dataset="d")  # a second 1.0 exceeds 1.5
        _play(learner, 40)
        learner.save(tmp_path / "c.ckpt")
        cls.load(tmp_path / "c.ckpt")
        with pytest.raises(PrivacyBudgetError, match="already restored"):
            cls.load(tmp_path / "c.ckpt")
        with pytest.raises(PrivacyBudgetError):
            dp.TopTwoBAI(3, 0.1, ledger=ledger, dataset="d")  # not private


@pytest.mark.parametrize("name", list(MAKERS))
def test_select_and_update_are_bound_and_take_delayed_feedback(name: str) -> None:
    learner = MAKERS[name]()
    assert type(learner.select).__name__ == "builtin_function_or_method"  # the Rust call
    twin = MAKERS[name]()
    # Out of order: the same rewards in the same arrival order give the
    # same state, whatever the order of the selections they answer.
    arms = [learner.select() for _ in range(6)]
    assert [twin.select() for _ in range(6)] == arms
    assert sorted(learner.outstanding) == sorted(arms)
    with pytest.raises(StateError, match="exactly one outstanding"):
        learner.update(0.5)
    rewards = np.linspace(0.0, 1.0, 6)
    for a, r in zip(reversed(arms), rewards, strict=True):
        learner.update(a, float(r))
    twin.update_many(np.array(arms[::-1]), rewards)
    assert learner.outstanding == [] and twin.outstanding == []
    assert learner._engine.to_bytes() == twin._engine.to_bytes()
    # Batches equal the loop of single calls bit for bit.
    batch = twin.select_many(50)
    assert [learner.select() for _ in range(50)] == list(batch)
    ys = np.random.default_rng(2).uniform(0, 1, 50)
    for a, y in zip(batch, ys, strict=True):
        learner.update(int(a), float(y))
    twin.update_many(batch, ys)
    assert learner._engine.to_bytes() == twin._engine.to_bytes()
    # Strict alternation, other numeric types and errors.
    arm = learner.select()
    learner.update(np.float64(0.25))
    learner.update(np.int64(arm), 1)  # settles nothing: none outstanding
    with pytest.raises(ValueError, match="reward"):
        learner.update(arm, 1.5)
    with pytest.raises(ValueError, match="arm"):
        learner.update(7, 0.5)
    with pytest.raises(TypeError, match="arm"):
        learner.update(True, 0.5)
    with pytest.raises(TypeError):
        learner.select(3)
    assert learner.outstanding == []


@pytest.mark.parametrize("name", ["DPTopTwo", "AdaPTT", "AdaPTTStar"])
def test_restores_pickles_and_forks_rekey(tmp_path: Path, name: str) -> None:
    learner = MAKERS[name]()
    _play(learner, 120)
    pending = [learner.select() for _ in range(3)]
    path = tmp_path / "c.ckpt"
    learner.save(path)

    def fed(copy_: Any) -> bytes:
        env = _core.BaiBernoulliRewards(MEANS, 5, 0)
        for _ in range(400):
            arm = copy_.select()
            copy_.update(arm, env.pull(arm))
        return bytes(copy_._engine.to_bytes())

    a, b = type(learner).load(path), type(learner).load(path)
    assert sorted(a.outstanding) == sorted(pending) and a.seed is None
    assert fed(a) != fed(b)
    r1, r2 = type(learner).load(path, replay=True), type(learner).load(path, replay=True)
    assert fed(r1) == fed(r2)
    p1, p2 = pickle.loads(pickle.dumps(learner)), copy.deepcopy(learner)
    assert sorted(p1.outstanding) == sorted(pending)
    assert fed(p1) != fed(p2)
    with dp.research_replay():
        q1, q2 = pickle.loads(pickle.dumps(learner)), copy.deepcopy(learner)
    assert fed(q1) == fed(q2)
    f1, f2, f3 = learner.fork(seed=3), learner.fork(seed=3), learner.fork(seed=4)
    assert fed(f1) == fed(f2) != fed(f3)
    f1.save(tmp_path / "f.ckpt")  # a seeded fork's header seed checks
    assert type(learner).load(tmp_path / "f.ckpt", replay=True).seed == 3


def test_a_checkpoint_with_bad_outstanding_counts_is_refused(tmp_path: Path) -> None:
    from dpbandits.checkpoint import read_checkpoint, write_checkpoint

    learner = MAKERS["DPTopTwo"]()
    _play(learner, 20)
    learner.save(tmp_path / "c.ckpt")
    ckpt = read_checkpoint(tmp_path / "c.ckpt")
    for bad in ([1, 2], [-1, 0, 0, 0], "x", [True, 0, 0, 0]):
        write_checkpoint(tmp_path / "bad.ckpt", ckpt.kind, ckpt.config, ckpt.state,
                         {**ckpt.extra, "outstanding": bad}, lineage=ckpt.lineage)
        with pytest.raises(CheckpointError, match="outstanding"):
            dp.DPTopTwo.load(tmp_path / "bad.ckpt", replay=True)


@pytest.mark.parametrize("name", list(MAKERS))
def test_the_policy_is_the_engines_law_from_released_values(name: str) -> None:
    learner = MAKERS[name]()
    first = learner.policy()
    assert isinstance(first, BAIPolicy) and first.version == 0 and first.recommendation is None
    assert np.allclose(first.probabilities, 0.25)  # no arm released yet: uniform over them
    _play(learner, 300)
    policy = learner.policy()
    assert policy.version == learner.policy_version > 0
    p = policy.probabilities
    assert p.sum() == pytest.approx(1.0) and np.count_nonzero(p) in (1, 2)
    assert policy.recommendation == learner.recommendation and policy.should_stop == learner.should_stop
    # The engine's next selection follows the served law: forks of the
    # state with their own coins, one selection each; chi-square with
    # df <= 1 at the 1e-6 level (23.9).
    n = 3000
    counts = np.bincount([learner.fork(seed=i).select() for i in range(n)], minlength=4)
    support = p > 0
    expected = n * p[support]
    assert np.all(counts[~support] == 0)
    chi2 = float(np.sum((counts[support] - expected) ** 2 / expected))
    assert chi2 < 23.9
    # Picklable, read-only, serving from its own generator.
    served = pickle.loads(pickle.dumps(policy))
    assert served.version == policy.version and np.array_equal(served.probabilities, p)
    assert set(np.unique(served.select_many(200))) <= set(np.flatnonzero(support))
    with pytest.raises(ValueError):
        policy.probabilities[0] = 1.0


def test_served_decisions_fed_back_keep_the_protocol() -> None:
    # Decisions drawn from the served policy, their rewards given back with
    # update(arm, reward); the policy refreshed when its version moves.
    learner = MAKERS["DPTopTwo"]()
    env = _core.BaiBernoulliRewards(MEANS, 3, 0)
    policy = learner.policy()
    refreshes = 0
    for _ in range(3000):
        arm = policy.select()
        learner.update(arm, env.pull(arm))
        if learner.policy_version != policy.version:
            policy, refreshes = learner.policy(), refreshes + 1
    assert learner.samples == 3000 and learner.outstanding == [] and refreshes == learner.policy_version
    assert learner.recommendation is not None
