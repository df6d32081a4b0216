"""One learner of each new family (PrivateUCB, EliminationLinearBandit,
PrivateFTRL, EXP2, the fixed-budget best-arm identifiers DPBAI,
LinearDPBAI and SequentialHalving) shared by 8 threads calling
select/update under the documented lock discipline (``with learner.lock: select; update``) stays
consistent: t equals the number of updates, no update is lost, no crash,
and the run replays exactly in the recorded order."""

from __future__ import annotations

import threading

import pytest
from _learner_drivers import DRIVERS

THREADS, ROUNDS = 8, 25
FAMILIES = ["PrivateUCB", "EliminationLinearBandit", "PrivateFTRL", "EXP2", "DPBAI", "LinearDPBAI",
            "SequentialHalving"]


@pytest.mark.parametrize("name", FAMILIES)
def test_eight_threads_under_the_lock_lose_no_update(name: str) -> None:
    make, step = DRIVERS[name]
    learner = make(THREADS * ROUNDS, 7)
    order: list[tuple[int, object]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def worker(k: int) -> None:
        try:
            barrier.wait()
            for _ in range(ROUNDS):
                with learner.lock:
                    t = learner.t
                    order.append((t, step(learner, t)))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors, errors
    assert learner.t == THREADS * ROUNDS == len(order)
    assert [t for t, _ in order] == list(range(THREADS * ROUNDS))
    # The same rounds played by one thread give the same decisions.
    replay = make(THREADS * ROUNDS, 7)
    assert [step(replay, t) for t in range(THREADS * ROUNDS)] == [r for _, r in order]


@pytest.mark.parametrize("name", FAMILIES)
def test_select_and_update_take_the_lock(name: str) -> None:
    make, step = DRIVERS[name]
    learner = make(10, 1)
    acquired = threading.Event()
    done = threading.Event()

    def other() -> None:
        step(learner, 0)
        done.set()

    with learner.lock:
        th = threading.Thread(target=other)
        th.start()
        acquired.set()
        assert not done.wait(0.3), "select/update ran while another thread held learner.lock"
    th.join(timeout=30)
    assert done.is_set() and learner.t == 1
