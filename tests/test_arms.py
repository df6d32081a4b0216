"""Arms added and retired during a run, for every K-armed learner: a new arm
has fresh statistics and its own noise and is played; a retired arm is
never selected again (single and batch selections, policies), its later
rewards are accepted and dropped (never fed); phased learners release a
retired arm's running phase at once; checkpoints and pickles carry the arm
set (validated on restore); simulate is unaffected."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _hostile_kinds import KINDS

import dpbandits as dp
from dpbandits.checkpoint import read_checkpoint, write_checkpoint
from dpbandits.errors import CheckpointError, StateError
from dpbandits.learners.mab import KArmedLearner


def _karmed() -> list[str]:
    return [n for n in KINDS if isinstance(KINDS[n][0](100, 1), KArmedLearner) and n != "PrivateThompsonSampling/gap"]


def _make(name: str, horizon: int = 20_000) -> Any:
    return KINDS[name][0](horizon, 1)


def _play(learner: Any, rounds: int, means: dict[int, float], seed: int = 0) -> np.ndarray:
    """Strict alternation with Bernoulli rewards; the arms played."""
    rng = np.random.default_rng(seed)
    played = np.empty(rounds, dtype=np.int64)
    for t in range(rounds):
        a = learner.select()
        played[t] = a
        learner.update(a, float(rng.uniform() < means.get(a, 0.3)))
    return played


def test_every_karmed_class_is_covered() -> None:
    classes = {type(_make(n)) for n in _karmed()}
    expected = {getattr(dp, n) for n in dp.__all__
                if isinstance(getattr(dp, n), type) and issubclass(getattr(dp, n), KArmedLearner)}
    assert classes == expected


@pytest.mark.parametrize("name", _karmed())
def test_a_new_arm_is_played_and_a_retired_arm_never(name: str) -> None:
    learner = _make(name)
    k = learner.k
    _play(learner, 200, {})
    t_before = learner.t
    new = learner.add_arm()
    assert new == k and learner.k == k + 1 and learner.pulls[new] == 0
    assert learner.released_sums()[new] == 0.0 and list(learner.arms) == list(range(k + 1))
    learner.retire_arm(0)
    assert list(learner.retired) == [True] + [False] * k and list(learner.arms) == list(range(1, k + 1))
    played = _play(learner, 4000, {new: 0.95}, seed=1)
    assert not np.any(played == 0)
    assert np.any(played == new)
    batch = learner.select_many(50)
    assert not np.any(batch == 0) and learner.policy().arm != 0 and learner.policy().k == k + 1
    learner.update_many(batch, np.full(50, 0.5))
    assert learner.t + int(learner.queue_lengths().sum()) == t_before + 4050 and learner.dropped == 0


@pytest.mark.parametrize("name", ["PrivateUCB", "DPKLUCB", "UCB1"])
def test_rewards_of_a_retired_arm_are_accepted_and_dropped(name: str) -> None:
    learner = _make(name)
    _play(learner, 50, {})
    arm = learner.select()
    learner.select_many(2)  # three selections of `arm` outstanding
    assert learner.outstanding == 3
    learner.retire_arm(arm)
    assert learner.select() != arm
    t = learner.t
    for _ in range(3):
        learner.update(arm, 1.0)
    assert learner.dropped == 3 and learner.queue_lengths()[arm] == 3 and learner.t == t
    assert learner.outstanding == 1  # the selection made after the retirement
    with pytest.raises(ValueError, match="retired"):
        learner._engine.observe(arm, 1.0)


@pytest.mark.parametrize("name", ["DPKLUCB", "DPSE", "AdaCUCB", "DPTS"])
def test_a_phased_learners_retired_arm_releases_its_running_phase(name: str) -> None:
    learner = _make(name)
    _play(learner, 300, {})
    # Play into a phase: its rewards are fed but not yet released.
    rng = np.random.default_rng(5)
    while int(learner.pulls.sum()) == learner.t:
        arm = learner.select()
        learner.update(arm, float(rng.uniform()))
    held = learner.t - int(learner.pulls.sum())
    arm = learner.policy().arm  # the committed phase's arm
    before = learner._engine.releases()
    learner.retire_arm(arm)
    after = learner._engine.releases()
    assert len(after) == len(before) + 1
    assert int(after[-1, 0]) == arm and 1 <= int(after[-1, 3]) <= held  # (arm, start, end, len, value)
    # The arm's phase is released; the rewards still held are those of the
    # other arms' open phases (DPTS plays uncommitted: every arm has one).
    assert learner.t - int(learner.pulls.sum()) == held - int(after[-1, 3])
    if name != "DPTS":
        assert int(learner.pulls.sum()) == learner.t
    assert not np.any(_play(learner, 500, {}, seed=6) == arm)


def test_the_last_arm_cannot_be_retired_and_arguments_are_checked() -> None:
    learner = dp.UCB1(k=2, horizon=100, seed=0)
    learner.retire_arm(0)
    learner.retire_arm(0)  # again: nothing changes
    with pytest.raises(ValueError, match="last arm"):
        learner.retire_arm(1)
    with pytest.raises(ValueError, match="must be < 2"):
        learner.retire_arm(2)
    with pytest.raises(ValueError, match=">= 0"):
        learner.retire_arm(-1)
    with pytest.raises(TypeError, match="`arm`"):
        learner.retire_arm(True)
    assert learner.select() == 1


def test_gap_estimation_accepts_arms_only_before_the_first_round() -> None:
    make = KINDS["PrivateThompsonSampling/gap"][0]
    learner = make(200_000, 1)
    assert learner.add_arm() == 3 and learner.k == 4
    learner.update(learner.select(), 0.5)
    with pytest.raises(StateError, match="round robin"):
        learner.add_arm()
    with pytest.raises(StateError, match="round robin"):
        learner.retire_arm(0)


@pytest.mark.parametrize("name", ["PrivateUCB", "PrivateThompsonSampling"])
def test_a_new_arm_draws_its_own_noise(name: str) -> None:
    # Restored for use, two copies add an arm and feed it the same rewards:
    # the old arms' releases (no new reward) keep their stored noise and
    # agree, the new arm's tree draws from each copy's own generator and
    # differs; as research replays the copies are one learner (equal).
    learner = _make(name)
    _play(learner, 30, {})

    def fed(copy_: Any) -> np.ndarray:
        new = copy_.add_arm()
        for _ in range(7):
            copy_._engine.observe(new, 0.5)
        return np.asarray(copy_.released_sums())

    a, b = pickle.loads(pickle.dumps(learner)), pickle.loads(pickle.dumps(learner))
    sa, sb = fed(a), fed(b)
    assert np.array_equal(sa[:-1], sb[:-1]) and sa[-1] != sb[-1]
    with dp.research_replay():
        c, d = copy.deepcopy(learner), copy.deepcopy(learner)
    assert np.array_equal(fed(c), fed(d))


@pytest.mark.parametrize("name", _karmed())
def test_checkpoints_carry_the_arm_set(tmp_path: Path, name: str) -> None:
    learner = _make(name)
    _play(learner, 100, {})
    learner.add_arm()
    learner.add_arm()
    learner.retire_arm(1)
    _play(learner, 100, {}, seed=2)
    path = tmp_path / "c.ckpt"
    learner.save(path)
    for restored in (type(learner).load(path, replay=True), type(learner).load(path)):
        assert restored.k == learner.k and list(restored.retired) == list(learner.retired)
        assert restored.policy().k == learner.k
        assert not np.any(_play(restored, 200, {}, seed=3) == 1)
    with dp.research_replay():
        twin = pickle.loads(pickle.dumps(learner))
    assert twin.k == learner.k and list(twin.retired) == list(learner.retired)
    assert np.array_equal(_play(twin, 100, {}, seed=4), _play(learner, 100, {}, seed=4))


def test_a_checkpoint_whose_arm_set_disagrees_is_refused(tmp_path: Path) -> None:
    learner = dp.DPKLUCB(k=3, horizon=2000, epsilon=1.0, seed=0)
    learner.add_arm()
    learner.retire_arm(0)
    path = tmp_path / "c.ckpt"
    learner.save(path)
    ckpt = read_checkpoint(path)
    for arms in ({"k": 5, "retired": [True, False, False, False, False]}, {"k": 4, "retired": [False] * 4},
                 {"k": 4, "retired": [True] * 4}, {"k": "4", "retired": []}, {"k": 2, "retired": [False, False]}):
        write_checkpoint(tmp_path / "bad.ckpt", ckpt.kind, ckpt.config, ckpt.state, {**ckpt.extra, "arms": arms},
                         lineage=ckpt.lineage)
        with pytest.raises(CheckpointError):
            dp.DPKLUCB.load(tmp_path / "bad.ckpt", replay=True)
    # A file without the arm set, whose engine has added arms: its
    # configuration (k) does not match the engine built from the header.
    write_checkpoint(tmp_path / "bare.ckpt", ckpt.kind, ckpt.config, ckpt.state,
                     {k: v for k, v in ckpt.extra.items() if k != "arms"}, lineage=ckpt.lineage)
    with pytest.raises(CheckpointError):
        dp.DPKLUCB.load(tmp_path / "bare.ckpt", replay=True)


def test_simulate_uses_the_constructors_arms() -> None:
    learner = dp.DPKLUCB(k=3, horizon=500, epsilon=1.0, seed=0)
    learner.add_arm()
    result = dp.simulate(learner, dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1), seeds=2)
    assert result.final_regret.shape == (2,)
    baseline = dp.simulate(dp.DPKLUCB(k=3, horizon=500, epsilon=1.0, seed=0),
                           dp.BernoulliBandit([0.9, 0.5, 0.4], seed=1), seeds=2)
    assert np.array_equal(result.final_regret, baseline.final_regret)


@pytest.mark.parametrize("name", _karmed())
def test_a_seeded_fork_after_an_added_arm_saves_and_loads(tmp_path: Path, name: str) -> None:
    # The fork keys every arm, the added one included, as an engine built
    # from its seed and given the same arms does: the header's seed checks.
    learner = _make(name)
    _play(learner, 60, {})
    learner.add_arm()
    _play(learner, 60, {}, seed=1)
    fork = learner.fork(seed=11)
    _play(fork, 40, {}, seed=2)
    path = tmp_path / "fork.ckpt"
    fork.save(path)
    for restored in (type(learner).load(path, replay=True), type(learner).load(path)):
        assert restored.k == learner.k and restored.t == fork.t
    replay = type(learner).load(path, replay=True)
    assert np.array_equal(_play(replay, 50, {}, seed=3), _play(fork, 50, {}, seed=3))


@pytest.mark.parametrize("name", ["PrivateUCB", "PrivateThompsonSampling"])
def test_a_seeded_forks_added_arm_draws_other_noise_than_its_parent(name: str) -> None:
    # An audit of the added arm's release: parent and fork (seeded) feed it
    # neighbouring reward sequences (one reward 1 instead of 0). With the
    # parent's noise the releases' difference would be exactly the data
    # difference, 1, in every trial; re-keyed, it never is (the noise of
    # the two trees differs). Two forks with one seed are one learner.
    for trial in range(20):
        learner = _make(name)
        _play(learner, 30, {}, seed=trial)
        new = learner.add_arm()

        def fed(copy_: Any, first: float, new: int = new) -> float:
            copy_._engine.observe(new, first)
            for _ in range(6):
                copy_._engine.observe(new, 0.5)
            return float(copy_.released_sums()[new])

        a, b = learner.fork(seed=100 + trial), learner.fork(seed=100 + trial)
        parent = fed(learner, 0.0)
        fa, fb = fed(a, 1.0), fed(b, 1.0)
        assert fa - parent != 1.0 and fa == fb
