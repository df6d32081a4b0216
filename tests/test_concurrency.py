"""One learner shared by 8 Python threads stays consistent.

select/update take the learner's reentrant lock, so calls never interleave
inside the engine and no update is lost; a thread that needs "the action I
just selected" holds ``learner.lock`` across the pair, or uses the explicit
``update(x, reward)`` form.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dpbandits.learners import JointDPLinUCB, LinUCB

THREADS, ROUNDS, D, K = 8, 60, 3, 5


def _ds(rng: np.random.Generator) -> np.ndarray:
    x = rng.normal(size=(K, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _run_threads(target) -> list[BaseException]:  # type: ignore[no-untyped-def]
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def wrapped(k: int) -> None:
        try:
            barrier.wait()
            target(k)
        except BaseException as exc:  # collected and reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=wrapped, args=(k,)) for k in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    return errors


@pytest.mark.parametrize(
    "make",
    [lambda: LinUCB(D, THREADS * ROUNDS + 1, seed=1), lambda: JointDPLinUCB(D, THREADS * ROUNDS + 1, 1.0, 0.1, seed=2)],
    ids=["LinUCB", "JointDPLinUCB"],
)
def test_select_update_pairs_under_the_lock_lose_nothing_and_replay_exactly(make) -> None:  # type: ignore[no-untyped-def]
    learner = make()
    order: list[tuple[np.ndarray, np.ndarray, int, float]] = []

    def worker(k: int) -> None:
        rng = np.random.default_rng(k)
        for _ in range(ROUNDS):
            ds = _ds(rng)
            r = float(rng.uniform(-1, 1))
            with learner.lock:
                i = learner.select(ds)
                learner.update(r)
                order.append((ds, ds[i], i, r))

    errors = _run_threads(worker)
    assert not errors, errors
    assert learner.t == THREADS * ROUNDS == len(order)
    # The shared learner equals a sequential run in the serialized order.
    replay = make()
    for ds, _, i, r in order:
        assert replay.select(ds) == i
        replay.update(r)
    probe = _ds(np.random.default_rng(99))
    assert np.array_equal(replay.ucb(probe), learner.ucb(probe))
    print(f"[concurrency] {type(learner).__name__}: {THREADS} threads x {ROUNDS} locked select+update pairs, "
          f"t = {learner.t}, identical to the sequential replay")


def test_explicit_updates_from_threads_are_all_recorded() -> None:
    learner = JointDPLinUCB(D, THREADS * ROUNDS, 1.0, 0.1, seed=3)

    def worker(k: int) -> None:
        rng = np.random.default_rng(100 + k)
        for _ in range(ROUNDS):
            ds = _ds(rng)
            i = learner.select(ds)  # lock held inside
            learner.update(ds[i], float(rng.uniform(-1, 1)))  # explicit form: no shared "last selection"

    errors = _run_threads(worker)
    assert not errors, errors
    assert learner.t == THREADS * ROUNDS
    print(f"[concurrency] update(x, reward) from {THREADS} threads: t = {learner.t} (no lost update)")


def test_the_lock_survives_copies_and_pickles() -> None:
    import pickle

    a = LinUCB(D, 10, seed=0)
    assert a.lock is a.lock
    b = pickle.loads(pickle.dumps(a))
    assert b.lock is not a.lock
    with a.lock, a.lock:  # reentrant: select inside a held lock does not deadlock
        a.select(_ds(np.random.default_rng(0)))
