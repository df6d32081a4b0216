"""Restores that cannot double-spend: a checkpoint restored twice for use,
fed neighbouring rewards, releases values with independent noise (and the
ledger refuses or charges the second restore); replay=True continues bit for
bit; pickles, copies and forks follow the same rule.

The audit, per learner family: two restores of one checkpoint are fed
neighbouring reward sequences (one reward differs). With shared future noise
(the hazard; ``replay=True``) the difference of their releases is exactly the
data difference, which reveals the reward (epsilon = infinity). Restored for
use, each draws from its own operating-system root, so the difference also
holds the difference of two independent noise draws: it equals the data
difference only if the two draws coincide. The noise is drawn from
operating-system entropy, so the audit repeats ``TRIALS`` times and allows
``ALLOWED`` coincidences: each release's noise is a discrete Laplace or
Gaussian on a lattice whose scale is thousands of lattice steps at these
epsilons, so two independent draws coincide with probability below 1e-2
(sum_z p(z)^2 <= max_z p(z) < 1 / (2 scale)), and ALLOWED + 1 = 3
coincidences in 12 trials have probability below C(12, 3) 1e-6 = 2.2e-4.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _learner_drivers import DRIVERS, FIXED_BUDGET

import dpbandits as dp
from dpbandits.errors import PrivacyBudgetError

TRIALS = 12
ALLOWED = 2
D = 3
X = np.eye(D)


# ----------------------------------------------------------------- families
# Each family: a learner, a warm-up, how to feed it a reward sequence along
# the same decisions in both copies, and what it has released.


def _kl_feed(lrn: Any, rewards: list[float]) -> None:
    # A phased learner commits to an arm for its whole phase: the decisions
    # until the next release are the same in both copies.
    before = len(lrn._engine.releases())
    for r in rewards:
        lrn.select()
        lrn.update(r)
        if len(lrn._engine.releases()) > before:
            return
    raise AssertionError("no phase ended")


def _kl_release(lrn: Any) -> np.ndarray:
    return np.asarray(lrn._engine.releases())[-1:, 4]  # the newest phase's noisy sum


def _ucb_feed(lrn: Any, rewards: list[float]) -> None:
    lrn.select()  # the index is deterministic: the same arm in both copies
    lrn.update(rewards[0])


def _ucb_release(lrn: Any) -> np.ndarray:
    return np.asarray(lrn._engine.sums(), dtype=np.float64)


def _lin_feed(lrn: Any, rewards: list[float]) -> None:
    for i, r in enumerate(rewards[:4]):
        lrn.update(X[i % D], r)  # the explicit form: the same rows in both copies


def _lin_release(lrn: Any) -> np.ndarray:
    return np.asarray(lrn.ucb(X), dtype=np.float64)


def _ftrl_feed(lrn: Any, rewards: list[float]) -> None:
    for r in rewards[:3]:
        lrn.update(np.array([r, 1.0 - r, 0.5]))


def _ftrl_release(lrn: Any) -> np.ndarray:
    return np.asarray(lrn._engine.released(), dtype=np.float64)


def _elim_feed(lrn: Any, rewards: list[float]) -> None:
    # The batch order is a random permutation (re-keyed too); the rewards
    # depend on the action only, so both copies hold the same per-action data
    # but for the first reward, which is shifted in the neighbour.
    shift = rewards[0] - 0.5
    start = lrn._engine.batch_index
    first = True
    while lrn._engine.batch_index == start:
        i = lrn.select()
        lrn.update(0.1 * i + (shift if first else 0.0))
        first = False


def _elim_release(lrn: Any) -> np.ndarray:
    return np.asarray(lrn._engine.history()[-1]["released_sums"], dtype=np.float64)


FAMILIES: dict[str, tuple[Callable[[], Any], int, Callable[[Any, list[float]], None], Callable[[Any], np.ndarray]]] = {
    "DPKLUCB": (lambda: dp.DPKLUCB(k=3, horizon=10_000, epsilon=1.0, seed=1), 20, _kl_feed, _kl_release),
    "PrivateUCB": (lambda: dp.PrivateUCB(k=3, horizon=1000, epsilon=1.0, seed=2), 13, _ucb_feed, _ucb_release),
    "JointDPLinUCB": (lambda: dp.JointDPLinUCB(D, 1000, 1.0, 0.1, seed=3), 9, _lin_feed, _lin_release),
    "PrivateFTRL": (lambda: dp.PrivateFTRL(3, 1000, 1.0, seed=4), 7, _ftrl_feed, _ftrl_release),
    "EliminationLinearBandit": (
        lambda: dp.EliminationLinearBandit(np.vstack([X, -X]), 5000, "central", 1.0, seed=5), 10, _elim_feed,
        _elim_release,
    ),
}


def _warm(name: str) -> Any:
    make, rounds, _, _ = FAMILIES[name]
    lrn = make()
    rng = np.random.default_rng(0)
    if name == "JointDPLinUCB":
        for i in range(rounds):
            lrn.update(X[i % D], float(rng.uniform(-1, 1)))
    elif name == "PrivateFTRL":
        for _ in range(rounds):
            lrn.update(rng.uniform(0, 1, 3))
    else:
        for _ in range(rounds):
            lrn.select()
            lrn.update(float(rng.integers(0, 2)))
    return lrn


REWARDS = [1.0] * 4000
NEIGHBOUR = [0.0] + [1.0] * 3999


def _pair_difference(name: str, b: Any, c: Any) -> np.ndarray:
    _, _, feed, release = FAMILIES[name]
    feed(b, REWARDS)
    feed(c, NEIGHBOUR)
    return release(b) - release(c)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_two_restores_for_use_release_independent_noise(name: str, tmp_path: Path) -> None:
    lrn = _warm(name)
    path = tmp_path / "l.ckpt"
    lrn.save(path)
    cls = type(lrn)
    # The hazard, reproduced with replay=True: the difference of the two
    # copies' releases is the data difference alone (the same in every trial).
    data_difference = _pair_difference(name, cls.load(path, replay=True), cls.load(path, replay=True))
    again = _pair_difference(name, cls.load(path, replay=True), cls.load(path, replay=True))
    np.testing.assert_array_equal(data_difference, again)
    if name in ("DPKLUCB", "PrivateUCB", "PrivateFTRL"):
        # Released sums: the difference is exactly the reward (loss) difference.
        assert np.count_nonzero(data_difference) >= 1
        assert set(np.round(np.abs(data_difference[data_difference != 0]), 12)) <= {1.0, 2.0}
    coincidences = 0
    for _ in range(TRIALS):
        b, c = cls.load(path), cls.load(path)
        assert b.lineage["origin"] == "use" and b.seed is None
        difference = _pair_difference(name, b, c)
        coincidences += bool(np.array_equal(difference, data_difference))
    assert coincidences <= ALLOWED, f"{coincidences} of {TRIALS} restores for use shared their noise"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_replay_continues_bit_identically(name: str, tmp_path: Path) -> None:
    lrn = _warm(name)
    path = tmp_path / "l.ckpt"
    lrn.save(path)
    b = type(lrn).load(path, replay=True)
    assert b.lineage["origin"] == "replay" and b.seed == lrn.seed and repr(b) == repr(lrn)
    _, _, feed, release = FAMILIES[name]
    feed(lrn, NEIGHBOUR)
    feed(b, NEIGHBOUR)
    assert release(lrn).tobytes() == release(b).tobytes()
    assert lrn._engine.to_bytes() == b._engine.to_bytes()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_pickles_and_copies_are_restores_for_use(name: str) -> None:
    lrn = _warm(name)
    _, _, feed, release = FAMILIES[name]
    with dp.research_replay():
        twins = [pickle.loads(pickle.dumps(lrn)), copy.deepcopy(lrn), copy.copy(lrn)]
    shipped = pickle.dumps(lrn)  # pickled outside, unpickled inside: still a replay
    with dp.research_replay():
        twins.append(pickle.loads(shipped))
    with dp.research_replay():
        shipped = pickle.dumps(lrn)  # pickled inside, unpickled anywhere: a replay
    twins.append(pickle.loads(shipped))
    for twin in twins:
        assert twin.lineage["origin"] == "replay"
        feed(twin, REWARDS)
    feed(lrn, REWARDS)
    for twin in twins:
        assert release(twin).tobytes() == release(lrn).tobytes()
    # Outside the context: re-keyed (same data, independent noise).
    copies = [pickle.loads(pickle.dumps(lrn)), copy.deepcopy(lrn), copy.copy(lrn), lrn.fork()]
    for other in copies:
        assert other.lineage["origin"] in ("pickle", "copy", "fork")
        assert other.lineage["parent"] == lrn.lineage["learner_id"]
        assert other.lineage["generation"] == lrn.lineage["generation"] + 1
    base = _warm(name)
    feed(base, REWARDS)
    same = 0
    for other in [pickle.loads(pickle.dumps(_warm(name))) for _ in range(TRIALS)]:
        feed(other, REWARDS)
        same += release(other).tobytes() == release(base).tobytes()
    assert same <= ALLOWED


def test_round_zero_learners_are_configurations() -> None:
    seeded = dp.DPKLUCB(k=3, horizon=1000, epsilon=1.0, seed=7)
    twin = pickle.loads(pickle.dumps(seeded))
    assert twin.seed == 7 and twin._engine.to_bytes() == seeded._engine.to_bytes()
    # seed=None: the root came from the operating system; a copy gets its own.
    entropy = dp.JointDPLinUCB(D, 100, 1.0, 0.1)
    other = copy.deepcopy(entropy)
    for lrn in (entropy, other):
        lrn.update(X[0], 0.5)
    assert entropy.ucb(X).tobytes() != other.ucb(X).tobytes()


def test_checkpoints_record_lineage(tmp_path: Path) -> None:
    from dpbandits.checkpoint import read_checkpoint

    lrn = _warm("PrivateUCB")
    first = lrn.save(tmp_path / "a.ckpt")
    second = lrn.save(tmp_path / "b.ckpt")
    assert first != second and len(first) == 32
    head = read_checkpoint(tmp_path / "a.ckpt").lineage
    assert head["checkpoint_id"] == first and head["generation"] == 0 and head["parent"] is None
    assert head["learner_id"] == lrn.lineage["learner_id"] and head["round"] == 13 and head["ledger"] is None
    restored = dp.PrivateUCB.load(tmp_path / "a.ckpt")
    assert restored.lineage["parent"] == first and restored.lineage["generation"] == 1
    third = restored.save(tmp_path / "c.ckpt")
    child = read_checkpoint(tmp_path / "c.ckpt").lineage
    assert child["checkpoint_id"] == third and child["parent"] == first and child["generation"] == 1
    assert child["origin"] == "use"


def test_second_restore_for_use_is_refused_or_charged(tmp_path: Path) -> None:
    ledger = dp.Ledger(tmp_path / "privacy.db")
    ledger.set_budget("clicks", epsilon=2.5, delta=0.0, model="central")
    lrn = dp.DPKLUCB(k=3, horizon=10_000, epsilon=1.0)
    ledger.register(lrn, dataset="clicks")
    for r in (1.0, 0.0, 1.0, 1.0):
        lrn.select()
        lrn.update(r)
    path = tmp_path / "l.ckpt"
    checkpoint = lrn.save(path)
    first = dp.DPKLUCB.load(path)  # the ledger the file names records it
    assert first.lineage["ledger"]["registration"] == lrn.lineage["ledger"]["registration"]
    assert ledger.restores(checkpoint) == 1 and ledger.spent("clicks").epsilon == 1.0
    with pytest.raises(PrivacyBudgetError, match=r"already restored for use 1 time.*charge=True"):
        dp.DPKLUCB.load(path)
    second = dp.DPKLUCB.load(path, charge=True)
    assert ledger.spent("clicks").epsilon == 2.0 and ledger.restores(checkpoint) == 2
    with pytest.raises(PrivacyBudgetError, match=r"exceed.*\(2.5, 0\)-DP budget"):
        dp.DPKLUCB.load(path, charge=True)
    assert ledger.restores(checkpoint) == 2  # the refused restore recorded nothing
    # A research replay is free and off the ledger.
    replay = dp.DPKLUCB.load(path, replay=True)
    assert replay.lineage["ledger"] is None and ledger.restores(checkpoint) == 2
    with pytest.raises(ValueError, match="research replay"):
        ledger.register(replay, dataset="clicks")
    # Forks and copies of a registered learner are charged (and refused past the budget).
    with pytest.raises(PrivacyBudgetError):
        second.fork()
    with pytest.raises(PrivacyBudgetError):
        copy.deepcopy(first)
    with pytest.raises(ValueError, match="operating-system entropy only"):
        first.fork(seed=3)
    kinds = [s.kind for s in ledger.spends("clicks")]
    assert kinds == ["register", "restore"]


def test_forks_and_pickles_of_a_registered_learner_are_charged(tmp_path: Path) -> None:
    ledger = dp.Ledger(tmp_path / "privacy.db")
    ledger.set_budget("clicks", epsilon=10.0, delta=1e-6, model="joint")
    lrn = dp.JointDPLinUCB(D, 1000, 1.0, 0.1)
    ledger.set_budget("strict", epsilon=10.0, delta=0.5, model="central")
    with pytest.raises(PrivacyBudgetError, match="does not imply central"):
        ledger.register(dp.JointDPLinUCB(D, 1000, 1.0, 0.1), dataset="strict")
    ledger.register(lrn, dataset="clicks")
    lrn.update(X[0], 0.5)
    forked = lrn.fork()
    shipped = pickle.loads(pickle.dumps(lrn))
    copied = copy.copy(lrn)
    assert [s.kind for s in ledger.spends("clicks")] == ["register", "fork", "pickle", "copy"]
    for other in (forked, shipped, copied):
        assert other.lineage["ledger"] == lrn.lineage["ledger"]
    with dp.research_replay():
        replayed = copy.deepcopy(lrn)
    assert replayed.lineage["ledger"] is None and len(ledger.spends("clicks")) == 4


# ----------------------------------------------------- write-ahead autosave


def test_autosave_makes_each_release_durable_before_the_decision(tmp_path: Path) -> None:
    from dpbandits.autosave import release_marker
    from dpbandits.checkpoint import read_checkpoint

    path = tmp_path / "live.ckpt"
    live = dp.PrivateUCB(k=3, horizon=1000, epsilon=1.0).autosave(path)
    ids = {live.checkpoint_id}
    for t in range(40):
        arm = live.select()
        # The file holds every release this decision read.
        on_disk = dp.PrivateUCB.load(path, replay=True)
        assert on_disk.t == live.t == t and on_disk._engine.sums().tobytes() == live._engine.sums().tobytes()
        live.update(float(arm == 0))
        ids.add(live.checkpoint_id)
    assert len(ids) == 41  # a tree learner releases every round
    assert read_checkpoint(path).lineage["checkpoint_id"] == live.checkpoint_id
    # A phased learner releases once per phase: one save per phase.
    phased = dp.DPKLUCB(k=3, horizon=10_000, epsilon=1.0).autosave(tmp_path / "phased.ckpt")
    saves = {phased.checkpoint_id}
    for t in range(200):
        phased.select()
        phased.update(float(t % 2))
        saves.add(phased.checkpoint_id)
        assert release_marker(dp.DPKLUCB.load(tmp_path / "phased.ckpt", replay=True)) == release_marker(phased.learner)
    assert len(saves) == 1 + len(phased._engine.releases()) < 60
    with pytest.raises(AttributeError, match="only through its methods"):
        phased.horizon = 3
    with pytest.raises(TypeError, match="does not pickle"):
        pickle.dumps(phased)


def test_kill_9_never_loses_a_revealed_release(tmp_path: Path) -> None:
    import os
    import signal
    import time

    from dpbandits.autosave import release_marker

    rng = np.random.default_rng(11)
    path = tmp_path / "live.ckpt"
    for kill in range(20):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child decides until killed
            os.close(read)
            try:
                lrn = dp.DPKLUCB.load(path) if path.exists() else dp.DPKLUCB(k=3, horizon=100_000, epsilon=1.0)
                live = lrn.autosave(path)
                while True:
                    arm = live.select()
                    # The decision was returned: report the releases it could reveal.
                    os.write(write, release_marker(live.learner).to_bytes(8, "little"))
                    live.update(float(arm == 1))
            finally:
                os._exit(1)
        os.close(write)
        data = os.read(read, 8)  # the first decision came back: kill it at a random moment from here
        time.sleep(float(rng.uniform(0.0, 0.2)))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        while chunk := os.read(read, 1 << 16):
            data += chunk
        os.close(read)
        revealed = max((int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data) - 7, 8)), default=0)
        saved = release_marker(dp.DPKLUCB.load(path, replay=True))
        assert saved >= revealed, f"kill {kill}: a decision revealed releases up to {revealed}, the file holds {saved}"


def test_restoring_an_older_checkpoint_than_the_newest_is_refused_or_charged(tmp_path: Path) -> None:
    ledger = dp.Ledger(tmp_path / "privacy.db")
    ledger.set_budget("clicks", epsilon=5.0, delta=1e-6, model="joint")
    lrn = dp.JointDPLinUCB(D, 1000, 1.0, 0.1)
    ledger.register(lrn, dataset="clicks")
    lrn.update(X[0], 0.5)
    old = lrn.save(tmp_path / "old.ckpt")
    lrn.update(X[1], -0.5)  # a release after the old checkpoint ...
    lrn.save(tmp_path / "new.ckpt")  # ... made durable in a newer one
    with pytest.raises(PrivacyBudgetError, match=r"holds round 1, but the learner that saved it went on and saved "
                                                 r"round 2"):
        dp.JointDPLinUCB.load(tmp_path / "old.ckpt")
    dp.JointDPLinUCB.load(tmp_path / "new.ckpt")  # the newest, once: free
    charged = dp.JointDPLinUCB.load(tmp_path / "old.ckpt", charge=True)
    assert [s.kind for s in ledger.spends("clicks")] == ["register", "restore"]
    assert ledger.spends("clicks")[-1].checkpoint_id == old and charged.t == 1
    # The moved database: pass it explicitly.
    moved = tmp_path / "moved.db"
    ledger.close()
    (tmp_path / "privacy.db").rename(moved)
    for suffix in ("-wal", "-shm"):
        if (tmp_path / f"privacy.db{suffix}").exists():
            (tmp_path / f"privacy.db{suffix}").rename(tmp_path / f"moved.db{suffix}")
    with dp.Ledger(moved) as there:
        with pytest.raises(PrivacyBudgetError, match="already restored"):
            dp.JointDPLinUCB.load(tmp_path / "new.ckpt", ledger=there)


@pytest.mark.slow
def test_audit_of_two_restores_finds_no_more_than_the_charged_epsilon(tmp_path: Path) -> None:
    # The mechanism audited: restore one checkpoint twice, feed both the same
    # reward except that the second gets the neighbour's on side 1; output
    # the difference of the two copies' releases of the pulled arm. Shared
    # noise (replay) makes it the data difference: eps_lb far above the
    # charge. Re-keyed restores leave eps_lb <= epsilon of one release (the
    # second copy's), below the 2 epsilon the ledger charges for the pair.
    from dpbandits.audit import audit

    lrn = _warm("PrivateUCB")
    path = tmp_path / "l.ckpt"
    lrn.save(path)
    arm = type(lrn).load(path, replay=True).select()

    def restores(replay: bool) -> Callable[[int, int, int], np.ndarray]:
        def mechanism(side: int, count: int, seed: int) -> np.ndarray:
            out = np.empty(count)
            for i in range(count):
                b, c = dp.PrivateUCB.load(path, replay=replay), dp.PrivateUCB.load(path, replay=replay)
                _ucb_feed(b, REWARDS)
                _ucb_feed(c, NEIGHBOUR if side else REWARDS)
                out[i] = b._engine.sums()[arm] - c._engine.sums()[arm]
            return out

        return mechanism

    shared = audit(restores(True), epsilon=1.0, n=1000, seed=1)
    assert shared.epsilon_lower_bound > 4.0  # the hazard: the data difference, exactly
    independent = audit(restores(False), epsilon=1.0, n=1000, seed=2)
    assert independent.epsilon_lower_bound <= 1.0


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_every_learner_class_restores_for_use_re_keyed(name: str, tmp_path: Path) -> None:
    make, step = DRIVERS[name]
    # A fixed-budget learner releases at its phases' ends: a budget of 80
    # ends its first phase inside the window of rounds 20-60 below.
    lrn = make(80 if name in FIXED_BUDGET else 400, 3)
    for t in range(20):
        step(lrn, t)
    path = tmp_path / "l.ckpt"
    lrn.save(path)
    b, c = type(lrn).load(path), type(lrn).load(path)
    replay = type(lrn).load(path, replay=True)
    assert replay._engine.to_bytes() == lrn._engine.to_bytes()
    if lrn.privacy.is_private:  # every generator re-keyed: the engine states differ already
        assert b.seed is None and b._engine.to_bytes() != c._engine.to_bytes() != lrn._engine.to_bytes()
    ours = [step(lrn, t)[1] for t in range(20, 60)]
    assert [step(replay, t)[1] for t in range(20, 60)] == ours
    runs = [[step(x, t)[1] for t in range(20, 60)] for x in (b, c)]
    if lrn.privacy.is_private and "Elimination" not in name:
        # Same rewards, independent noise: the copies' releases part ways
        # (elimination releases at batch ends, past this window). A release
        # that is one choice among few (an expert among K = 3) repeats under
        # independent noise now and then (about one copy in three for
        # PrivateStochasticExperts here), and a copy that reused the noise
        # repeats every time; so further copies are drawn, and at least one
        # must part ways with the original and with the first copy
        # (chance of a false failure below 0.36**16, about 1e-7).
        extra = 0
        while (runs[0] == runs[1] or runs[0] == ours) and extra < 16:
            extra += 1
            fresh = type(lrn).load(path)
            runs = [[step(fresh, t)[1] for t in range(20, 60)], runs[0]]
        assert runs[0] != runs[1] and runs[0] != ours
    else:
        assert runs[0] == runs[1] == ours  # nothing to re-key: no privacy noise
