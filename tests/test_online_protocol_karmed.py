"""The online protocol of every K-armed learner (the queued reduction QPM-D
of Joulani, György & Szepesvári 2013 over each engine): out-of-order
rewards, ``update(reward)`` with several selections outstanding, the batch
forms against the loop, checkpoints in the middle of a delay, the served
policy (pickled, and served from several processes), the lock under the
GIL-released batch forms, and the refusals of bad arms and rewards."""

from __future__ import annotations

import inspect
import multiprocessing as mp
import pickle
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.checkpoint import read_checkpoint, write_checkpoint
from dpbandits.errors import CheckpointError, LinearRegretWarning, StateError
from dpbandits.learners.mab import UCB1, PrivateThompsonSampling, PrivateUCB, ThompsonSampling
from dpbandits.learners.phased_mab import (
    DPIMED,
    DPKLUCB,
    DPSE,
    DPTS,
    KLUCB,
    AdaCKLUCB,
    AdaCUCB,
    AdaPKLUCB,
    AdaPUCB,
)
from dpbandits.serving import ArmPolicy

K, H = 3, 3000


def _pts_gap(horizon: int, seed: int) -> PrivateThompsonSampling:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinearRegretWarning)  # gap estimation at a short horizon
        return PrivateThompsonSampling(K, horizon, 1.0, calibration="tight", seed=seed)


#: Every K-armed learner class (and the variants that change the engine path).
MAKERS: dict[str, Callable[[int, int], Any]] = {
    "UCB1": lambda h, s: UCB1(K, h, seed=s),
    "ThompsonSampling-beta": lambda h, s: ThompsonSampling(K, h, seed=s),
    "ThompsonSampling-gaussian": lambda h, s: ThompsonSampling(K, h, prior="gaussian", seed=s),
    "PrivateUCB": lambda h, s: PrivateUCB(K, h, 1.0, calibration="tight", seed=s),
    "PrivateUCB-empirical": lambda h, s: PrivateUCB(K, h, 1.0, confidence="empirical", seed=s),
    "PrivateUCB-smooth": lambda h, s: PrivateUCB(K, h, 1.0, calibration="tight", counter="smooth-binary", seed=s),
    "PrivateThompsonSampling": lambda h, s: PrivateThompsonSampling(K, h, 1.0, gap_estimation=False, seed=s),
    "PrivateThompsonSampling-gap": _pts_gap,
    "DPKLUCB": lambda h, s: DPKLUCB(K, h, 1.0, seed=s),
    "DPKLUCB-float": lambda h, s: DPKLUCB(K, h, 1.0, sampler="float", seed=s),
    "DPIMED": lambda h, s: DPIMED(K, h, 1.0, seed=s),
    "DPSE": lambda h, s: DPSE(K, h, 1.0, seed=s),
    "DPTS": lambda h, s: DPTS(K, h, 1.0, seed=s),
    "AdaPUCB": lambda h, s: AdaPUCB(K, h, 1.0, seed=s),
    "AdaPKLUCB": lambda h, s: AdaPKLUCB(K, h, 1.0, seed=s),
    "AdaCUCB": lambda h, s: AdaCUCB(K, h, 0.5, seed=s),
    "AdaCKLUCB": lambda h, s: AdaCKLUCB(K, h, 0.5, seed=s),
    "KLUCB": lambda h, s: KLUCB(K, h, seed=s),
}
NAMES = sorted(MAKERS)

MEANS = np.array([0.7, 0.5, 0.3])


def _reward(i: int, arm: int) -> float:
    """A Bernoulli(MEANS[arm]) reward fixed by (i, arm)."""
    return float(np.random.default_rng([23, i, arm]).random() < MEANS[arm])


def _state(lr: Any) -> bytes:
    return bytes(lr._engine.to_bytes())


def test_every_karmed_learner_class_is_covered() -> None:
    from dpbandits.learners.mab import KArmedLearner

    classes = {type(MAKERS[n](10, 0)) for n in NAMES}
    public = {c for c in vars(dp).values() if isinstance(c, type) and issubclass(c, KArmedLearner)}
    assert public <= classes, public - classes


@pytest.mark.parametrize("name", NAMES)
def test_out_of_order_rewards_give_the_statistics_of_in_order_ones(name: str) -> None:
    """Each arm's rewards in one fixed order, delivered arm by arm, round-robin
    across arms, or as the delayed answers of earlier selections: the same
    per-arm arrival order gives the same state, bit for bit."""
    per_arm = [[_reward(i, a) for i in range(60)] for a in range(K)]
    arm_major = [(a, r) for a in range(K) for r in per_arm[a]]
    round_robin = [(a, per_arm[a][i]) for i in range(60) for a in range(K)]
    states = []
    for order in (arm_major, round_robin):
        lr = MAKERS[name](H, 5)
        for a, r in order:
            lr.update(a, r)
        assert lr.t + int(lr.queue_lengths().sum()) == 3 * 60
        assert lr.t > 0, "the algorithm consumed its queues"
        states.append((_state(lr), lr.released_sums().tobytes(), lr.t))
    assert states[0] == states[1]


@pytest.mark.parametrize("name", NAMES)
def test_delayed_answers_equal_the_same_rewards_delivered_at_once(name: str) -> None:
    """Selections answered late and shuffled (per-arm order kept) give the
    state of a learner fed the same per-arm sequences in one go."""
    rng = np.random.default_rng(4)
    lr = MAKERS[name](H, 2)
    pending: list[tuple[int, int]] = []  # (request, arm)
    delivered: list[tuple[int, float]] = []
    for i in range(400):
        pending.append((i, lr.select()))
        if len(pending) > 25 or rng.random() < 0.3:
            # Deliver a random subset, each arm's rewards in request order.
            take = [p for p in pending if rng.random() < 0.5]
            by_arm: dict[int, list[tuple[int, int]]] = {}
            for j, a in take:
                by_arm.setdefault(a, []).append((j, a))
            arms = list(by_arm)
            rng.shuffle(arms)
            for a in arms:  # arms in random order, each arm's requests in order
                for j, _ in by_arm[a]:
                    lr.update(a, _reward(j, a))
                    delivered.append((a, _reward(j, a)))
            pending = [p for p in pending if p not in take]
    assert lr.outstanding == len(pending)
    # The same per-arm sequences, delivered arm-major to a learner that
    # selected nothing: the fed statistics agree.
    ref = MAKERS[name](H, 2)
    for a in range(K):
        for b, r in delivered:
            if b == a:
                ref.update(b, r)
    assert ref.released_sums().tobytes() == lr.released_sums().tobytes()
    assert ref.t == lr.t
    assert np.array_equal(ref.queue_lengths(), lr.queue_lengths())


@pytest.mark.parametrize("name", ["DPKLUCB", "ThompsonSampling-beta", "PrivateUCB", "DPTS"])
def test_update_reward_needs_exactly_one_outstanding_selection(name: str) -> None:
    lr = MAKERS[name](H, 1)
    with pytest.raises(StateError, match="none is outstanding"):
        lr.update(0.5)
    a = lr.select()
    b = lr.select()
    assert a == b, "the proposal is asked once: two selections without feedback agree"
    with pytest.raises(StateError, match=rf"2 are outstanding \(arm {a} x2\)"):
        lr.update(0.5)
    assert lr.t == 0 and lr.outstanding == 2
    lr.update(a, 1.0)
    lr.update(0.0)  # exactly one outstanding now
    assert lr.outstanding == 0 and lr.t + int(lr.queue_lengths().sum()) == 2


@pytest.mark.parametrize("name", NAMES)
def test_strict_alternation_is_unchanged(name: str) -> None:
    """select then update(reward), and select then update(arm, reward): the
    same run, bit for bit."""
    a, b = MAKERS[name](400, 3), MAKERS[name](400, 3)
    for i in range(400):
        x, y = a.select(), b.select()
        assert x == y
        a.update(_reward(i, x))
        b.update(y, _reward(i, y))
    assert _state(a) == _state(b)
    with pytest.raises(StateError, match="horizon"):
        a.select()


@pytest.mark.parametrize("name", NAMES)
def test_batch_forms_equal_the_loop_bit_for_bit(name: str) -> None:
    rng = np.random.default_rng(8)
    batch, loop = MAKERS[name](H, 6), MAKERS[name](H, 6)
    backlog_b: list[int] = []
    backlog_l: list[int] = []
    for step in range(40):
        n = int(rng.integers(1, 30))
        arms_b = batch.select_many(n)
        arms_l = np.array([loop.select() for _ in range(n)], dtype=np.int64)
        assert arms_b.dtype == np.int64 and np.array_equal(arms_b, arms_l)
        backlog_b += arms_b.tolist()
        backlog_l += arms_l.tolist()
        # Answer a random part of the backlog, in a random order.
        m = int(rng.integers(0, len(backlog_b) + 1))
        idx = rng.permutation(len(backlog_b))[:m]
        arms = np.array([backlog_b[i] for i in idx], dtype=np.int64)
        rewards = np.array([_reward(step * 1000 + i, backlog_b[i]) for i in idx])
        batch.update_many(arms, rewards)
        for a, r in zip(arms.tolist(), rewards.tolist(), strict=True):
            loop.update(a, r)
        keep = np.setdiff1d(np.arange(len(backlog_b)), idx)
        backlog_b = [backlog_b[i] for i in keep]
        backlog_l = [backlog_l[i] for i in keep]
        assert _state(batch) == _state(loop)
        assert batch.outstanding == loop.outstanding == len(backlog_b)
    # A refused entry: the loop stops there, the batch too (earlier entries kept).
    arms = np.array([0, 1, 7, 2], dtype=np.int64)
    rewards = np.array([1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"arms.*entry 2"):
        batch.update_many(arms, rewards)
    loop.update(0, 1.0)
    loop.update(1, 0.0)
    with pytest.raises(ValueError, match="arm"):
        loop.update(7, 1.0)
    assert _state(batch) == _state(loop)


@pytest.mark.parametrize("name", NAMES)
def test_checkpoint_round_trip_in_the_middle_of_a_delay(name: str, tmp_path: Any) -> None:
    lr = MAKERS[name](H, 9)
    arms = lr.select_many(12)
    lr.update(int(arms[0]), 1.0)
    lr.update((int(arms[0]) + 1) % K, 0.0)  # a pull served elsewhere: queued
    lr.update_many(arms[1:5], np.array([1.0, 0.0, 1.0, 1.0]))
    path = tmp_path / "ckpt"
    lr.save(path)
    back = type(lr).load(path, replay=True)  # bit-identical continuation (a restore for use re-keys)
    assert back.outstanding == lr.outstanding == 7
    assert np.array_equal(back.queue_lengths(), lr.queue_lengths())
    assert np.array_equal(back.outstanding_by_arm(), lr.outstanding_by_arm())
    assert back.policy() == lr.policy()
    # Both continue identically.
    for x in (lr, back):
        x.update_many(arms[5:], np.array([_reward(i, int(a)) for i, a in enumerate(arms[5:])]))
        for i in range(50):
            a = x.select()
            x.update(a, _reward(100 + i, a))
    assert _state(lr) == _state(back)


def test_a_checkpoint_of_the_engine_without_queues_is_refused(tmp_path: Any) -> None:
    """The engine bytes of the format before the reduction (a bare engine)
    are refused with CheckpointError."""
    lr = DPKLUCB(K, H, 1.0, seed=0)
    lr.update(lr.select(), 1.0)
    path = tmp_path / "new"
    lr.save(path)
    ckpt = read_checkpoint(str(path))
    state = bytes(ckpt.state)
    assert state[:4] == b"QPMD"
    # The wrapped engine's own bytes follow the 8-byte tag and a varint length.
    n, shift, pos = 0, 0, 8
    while True:
        byte = state[pos]
        n |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if byte < 0x80:
            break
    bare = state[pos:pos + n]
    old = tmp_path / "old"
    write_checkpoint(old, ckpt.kind, ckpt.config, bare, {"pending": None})
    with pytest.raises(CheckpointError, match="does not restore"):
        DPKLUCB.load(old)


@pytest.mark.parametrize("name", NAMES)
def test_the_policy_pickles_and_is_the_learners_proposal(name: str) -> None:
    lr = MAKERS[name](H, 4)
    for i in range(30):
        a = lr.select()
        lr.update(a, _reward(i, a))
    policy = lr.policy()
    assert isinstance(policy, ArmPolicy)
    again = pickle.loads(pickle.dumps(policy))
    assert again == policy and again.version == lr.policy_version
    assert policy.select() == lr.select()
    assert np.array_equal(policy.select_many(5), np.full(5, policy.arm))
    with pytest.raises(AttributeError):
        policy.arm = 0  # type: ignore[misc]
    # The version moves only when the proposal does.
    v, arm = lr.policy_version, policy.arm
    lr.update(arm, 1.0)
    assert (lr.policy_version == v) == (lr.policy().arm == arm)


def test_the_policy_after_the_horizon_is_refused() -> None:
    lr = DPKLUCB(K, 5, 1.0, seed=0)
    for _ in range(5):
        lr.update(lr.select(), 1.0)
    with pytest.raises(StateError, match="horizon"):
        lr.policy()


# --- several processes serving one learner's policy ------------------------------

EPOCHS, PER_EPOCH, WORKERS = 12, 40, 3


def _serve(tasks: Any, results: Any) -> None:
    """A serving process: for each (policy, requests) it receives, answers
    every request from the policy and reports (request, arm, reward)."""
    while True:
        job = tasks.get()
        if job is None:
            return
        policy, requests = job
        for rid in requests:
            arm = policy.select()
            results.put((rid, arm, _reward(rid, arm), policy.version))


def test_worker_processes_serve_the_policy_and_one_process_consumes_the_rewards() -> None:
    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    tasks = [ctx.Queue() for _ in range(WORKERS)]
    results = ctx.Queue()
    procs = [ctx.Process(target=_serve, args=(tasks[w], results), daemon=True) for w in range(WORKERS)]
    for p in procs:
        p.start()
    learner = DPKLUCB(K, 10_000, 1.0, seed=11)
    served: list[tuple[int, int]] = []
    versions = []
    try:
        rid = 0
        for _ in range(EPOCHS):
            policy = learner.policy()  # the refresh point
            versions.append(policy.version)
            requests = list(range(rid, rid + PER_EPOCH))
            rid += PER_EPOCH
            for w in range(WORKERS):
                tasks[w].put((policy, requests[w::WORKERS]))
            got = [results.get(timeout=60) for _ in range(PER_EPOCH)]
            assert all(v == policy.version for *_, v in got)
            got.sort()  # the consumer feeds each epoch in request order
            served += [(r, a) for r, a, _, _ in got]
            learner.update_many(np.array([a for _, a, _, _ in got]), np.array([y for _, _, y, _ in got]))
    finally:
        for q in tasks:
            q.put(None)
        for p in procs:
            p.join(timeout=30)
    # No reward lost: every served request answered once and accepted.
    assert [r for r, _ in served] == list(range(EPOCHS * PER_EPOCH))
    assert learner.t + int(learner.queue_lengths().sum()) == EPOCHS * PER_EPOCH
    # One process, the same rewards at the same refresh points.
    replay = DPKLUCB(K, 10_000, 1.0, seed=11)
    arms_replay: list[int] = []
    for e in range(EPOCHS):
        policy = replay.policy()
        assert policy.version == versions[e]
        arms = policy.select_many(PER_EPOCH)
        arms_replay += arms.tolist()
        rids = range(e * PER_EPOCH, (e + 1) * PER_EPOCH)
        replay.update_many(arms, np.array([_reward(r, int(a)) for r, a in zip(rids, arms, strict=True)]))
    assert arms_replay == [a for _, a in served]
    assert _state(replay) == _state(learner)
    assert len(set(arms_replay)) > 1, "the policy was refreshed"


# --- threads and the GIL-released batch forms ------------------------------------


def test_batch_calls_without_the_gil_and_calls_from_other_threads_do_not_collide() -> None:
    lr = DPKLUCB(K, 2_000_000, 1.0, seed=0)
    errors: list[BaseException] = []
    stop = threading.Event()

    def batches() -> None:
        try:
            for _ in range(20):
                arms = lr.select_many(20_000)
                lr.update_many(arms, np.ones(arms.size))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            stop.set()

    def singles() -> None:
        try:
            while not stop.is_set():
                with lr.lock:
                    a = lr.select()
                    lr.update(a, 1.0)  # the batch thread has selections outstanding too
                assert a in range(K)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=batches), threading.Thread(target=singles), threading.Thread(target=singles)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors, errors
    assert lr.outstanding == 0
    assert lr.t + int(lr.queue_lengths().sum()) >= 400_000


def test_the_lock_is_reentrant_and_refuses_a_foreign_release() -> None:
    lr = DPKLUCB(K, 100, 1.0, seed=0)
    lock = lr.lock
    assert lock is lr.lock
    with lock, lock:
        lr.update(lr.select(), 1.0)
    assert lock.acquire(blocking=False)
    held = []
    th = threading.Thread(target=lambda: held.append(lock.acquire(timeout=0.05)))
    th.start()
    th.join()
    assert held == [False]
    with pytest.raises(RuntimeError):
        _release_elsewhere(lock)
    lock.release()
    with pytest.raises(RuntimeError, match="un-acquired"):
        lock.release()


def test_the_lock_excludes_threads_that_give_up_the_gil_inside_it() -> None:
    # Each holder reads a shared count, gives the GIL away (sleep(0) and a
    # GIL-released batch call), then writes the count plus one: any two
    # holders at once would lose an increment. Waiters are woken by the
    # releases (no timeout), so a lost wake-up hangs the join below.
    lr = DPKLUCB(K, 10_000_000, 1.0, seed=0)
    lock, count, threads_n, rounds = lr.lock, [0], 6, 300
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(rounds):
                with lock:
                    seen = count[0]
                    time.sleep(0)
                    lr.update_many(lr.select_many(50), np.ones(50))
                    count[0] = seen + 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(threads_n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors, errors
    assert not any(th.is_alive() for th in threads)
    assert count[0] == threads_n * rounds
    assert lock.acquire(blocking=False)  # free again
    lock.release()


def test_a_timed_acquire_gets_the_lock_when_the_holder_releases_it() -> None:
    lock = DPKLUCB(K, 100, 1.0, seed=0).lock
    got: list[bool] = []
    with lock:
        th = threading.Thread(target=lambda: got.append(lock.acquire(timeout=30.0)))
        th.start()
        time.sleep(0.05)
        assert got == []  # still waiting while held
    th.join(timeout=60)
    assert got == [True]
    assert "locked" in repr(lock)
    with pytest.raises(RuntimeError, match="un-acquired"):
        lock.release()  # the waiter's thread holds it, not this one


def _release_elsewhere(lock: Any) -> None:
    out: list[BaseException] = []

    def run() -> None:
        try:
            lock.release()
        except BaseException as exc:  # re-raised below
            out.append(exc)

    th = threading.Thread(target=run)
    th.start()
    th.join()
    if out:
        raise out[0]


# --- refusals -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["DPKLUCB", "UCB1", "PrivateThompsonSampling"])
def test_bad_arms_and_rewards_are_refused_naming_them(name: str) -> None:
    lr = MAKERS[name](H, 0)
    a = lr.select()
    for bad, exc, what in [
        (True, TypeError, "reward"), ("0.5", TypeError, "reward"), (float("nan"), ValueError, "reward"),
        (float("inf"), ValueError, "reward"), (10**400, ValueError, "reward"), (1j, TypeError, "reward"),
    ]:
        with pytest.raises(exc, match=what):
            lr.update(bad)
        with pytest.raises(exc, match=what):
            lr.update(a, bad)
    for bad, exc in [(-1, ValueError), (K, ValueError), (1.0, TypeError), (True, TypeError), (2**70, ValueError),
                     ("0", TypeError)]:
        with pytest.raises(exc, match="arm"):
            lr.update(bad, 0.5)
    with pytest.raises(TypeError, match="arms"):
        lr.update_many(np.array([0.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="rewards"):
        lr.update_many(np.array([0, 1]), np.array([1.0]))
    with pytest.raises(ValueError, match=r"arms.*entry 0"):
        lr.update_many(np.array([-1]), np.array([1.0]))
    with pytest.raises(TypeError, match="`n`"):
        lr.select_many(-1)
    assert lr.t == 0 and lr.outstanding == 1
    # NumPy scalars are real numbers and indices.
    lr.update(np.int64(a), np.float32(0.5))
    assert lr.outstanding == 0


# --- the learner classes' own method descriptors ----------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_select_and_update_are_descriptors_of_the_class_calling_the_engine(name: str) -> None:
    lr, twin = MAKERS[name](200, 4), MAKERS[name](200, 4)
    cls = type(lr)
    for n in ("select", "update"):
        d = inspect.getattr_static(cls, n)
        assert type(d) is types.MethodDescriptorType and d.__objclass__ is cls and n not in lr.__dict__
    assert lr._armed_engine is lr._engine
    for i in range(30):  # the same rounds as the engine's own methods
        a, b = lr.select(), twin._engine.select()
        assert a == b
        lr.update(a, _reward(i, a))
        twin._engine.update(b, _reward(i, b))
    assert _state(lr) == _state(twin)
    # Anything else is the engine's own call, with its errors.
    with pytest.raises(TypeError):
        lr.update()
    with pytest.raises(TypeError):
        lr.update(0, 0.5, 0.5)
    with pytest.raises(TypeError):
        lr.update(0, reward=0.5, other=1)
    with pytest.raises(TypeError):
        lr.select(1)
    # A self of another class is refused by CPython before the call.
    other = MAKERS["UCB1" if name != "UCB1" else "KLUCB"](10, 0)
    for bad in (object(), other, _core.EngineBase()):
        for n in ("select", "update"):
            with pytest.raises(TypeError):
                inspect.getattr_static(cls, n)(bad)
    # A subclass gets descriptors of its own type; a learner with no engine refuses.
    sub = type("Sub" + cls.__name__, (cls,), {})
    assert inspect.getattr_static(sub, "select").__objclass__ is sub
    with pytest.raises(TypeError, match="engine is not set"):
        sub.__new__(sub).select()


def test_the_engine_base_takes_only_engines_with_rust_calls() -> None:
    base = _core.EngineBase()
    with pytest.raises(TypeError, match="no Rust select"):
        base._armed_engine = object()
    engine = UCB1(K, 10, seed=0)._engine
    base._armed_engine = engine
    assert base._armed_engine is engine
    base._armed_engine = None
    assert base._armed_engine is None
