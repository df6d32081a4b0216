"""The online call bound in Rust (``dpbandits.learners.online_call``):
the fast path plays exactly the rounds of the checked Python path, holds
the learner's lock, and keeps the outstanding selection through copies."""

from __future__ import annotations

import inspect
import pickle
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
from dpbandits.errors import StateError

ACTIONS = np.eye(4)


def _elimination() -> Any:
    return dp.EliminationLinearBandit(ACTIONS, 400, "central", 1.0, seed=3)


FAMILIES: dict[str, tuple[Callable[[], Any], Callable[[np.random.Generator, Any], Any]]] = {
    "EXP2": (lambda: dp.EXP2(6, 400, 1.0, seed=3), lambda rng, _: float(rng.uniform())),
    "SCRiBLe": (lambda: dp.SCRiBLe(3, 400, 1.0, seed=3), lambda rng, y: float(rng.uniform(-0.5, 0.5))),
    "PrivateFTRL": (lambda: dp.PrivateFTRL(5, 400, 1.0, seed=3), lambda rng, _: rng.uniform(0, 1, 5)),
    "PrivateFTPL": (lambda: dp.PrivateFTPL(5, 400, 1.0, 0.1, seed=3), lambda rng, _: rng.uniform(0, 1, 5)),
    "EliminationLinearBandit": (_elimination, lambda rng, _: float(rng.uniform())),
    "PrivateStochasticExperts": (lambda: dp.PrivateStochasticExperts(5, 400, 1.0, seed=3),
                                 lambda rng, _: rng.uniform(0, 1, 5)),
    "LazyPrivateExperts": (lambda: dp.LazyPrivateExperts(5, 400, 1.0, seed=3), lambda rng, _: rng.uniform(0, 1, 5)),
    "BatchedPrivateEXP3": (lambda: dp.BatchedPrivateEXP3(3, 400, 1.0, seed=3), lambda rng, _: float(rng.uniform())),
    "PrivateDartboardExperts": (lambda: dp.PrivateDartboardExperts(5, 400, 1.0, seed=3),
                                lambda rng, _: rng.uniform(0, 1, 5)),
    "LazyPrivateOCO": (lambda: dp.LazyPrivateOCO(3, 400, 1.0, seed=3), lambda rng, _: rng.uniform(-0.5, 0.5, 3)),
}


def _bound_natively(learner: Any) -> bool:
    """Whether ``learner.select`` / ``update`` are native method descriptors
    made for the learner's own class (no instance attribute shadows them)
    and the learner's online call is set."""
    cls = type(learner)
    native = all(
        type(d := inspect.getattr_static(cls, n)) is types.MethodDescriptorType
        and d.__objclass__ is cls
        and d.__name__ == n
        and n not in learner.__dict__
        for n in ("select", "update")
    )
    return native and isinstance(learner._online_call, _core.OnlineCall) and learner._online_call is learner._call


def _trace(select: Callable[[], Any], update: Callable[[Any], None], loss: Callable[..., Any], n: int) -> list[Any]:
    rng = np.random.default_rng(0)
    out = []
    for _ in range(n):
        choice = select()
        out.append(np.asarray(choice).tolist())
        update(loss(rng, choice))
    return out


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_bound_call_plays_the_checked_rounds(name: str) -> None:
    make, loss = FAMILIES[name]
    fast, checked = make(), make()
    assert _bound_natively(fast)
    a = _trace(fast.select, fast.update, loss, 200)
    b = _trace(checked._checked_select, checked._checked_update, loss, 200)
    assert a == b
    assert fast.t == checked.t == 200
    assert bytes(fast._engine.to_bytes()) == bytes(checked._engine.to_bytes())


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_learner_bound_again_calls_its_new_engine(name: str) -> None:
    """Replacing the engine in place (as a restore does) binds the native
    call to the new engine, twice over, and the rounds go on as the checked
    path's."""
    make, loss = FAMILIES[name]
    fast, checked = make(), make()
    rng, a = np.random.default_rng(0), []
    for t in range(150):
        if t in (50, 100):
            old = fast._call
            fast._engine = type(fast._engine).from_bytes(bytes(fast._engine.to_bytes()))
            assert _bound_natively(fast) and fast._call is not old
        choice = fast.select()
        a.append(np.asarray(choice).tolist())
        fast.update(loss(rng, choice))
    b = _trace(checked._checked_select, checked._checked_update, loss, 150)
    assert a == b
    assert bytes(fast._engine.to_bytes()) == bytes(checked._engine.to_bytes())


@pytest.mark.parametrize("name", ["EXP2", "SCRiBLe", "EliminationLinearBandit"])
def test_outstanding_selection_survives_copies_and_is_enforced(name: str) -> None:
    make, _ = FAMILIES[name]
    learner = make()
    choice = learner.select()
    with pytest.raises(StateError):
        learner.select()
    twin = pickle.loads(pickle.dumps(learner))
    assert np.array_equal(np.asarray(twin.outstanding[0]), np.asarray(choice))
    with pytest.raises(StateError):
        twin.select()
    twin.update(0.25)
    assert twin.outstanding == [] and twin.t == 1
    assert learner.t == 0 and len(learner.outstanding) == 1


@pytest.mark.parametrize("name", ["EXP2", "EliminationLinearBandit"])
def test_other_reward_types_take_the_checked_path(name: str) -> None:
    make, _ = FAMILIES[name]
    a, b = make(), make()
    for r in (np.float64(0.5), 1, np.float32(0.25)):
        a.select(), b.select()
        a.update(r)
        b.update(float(r))
    assert bytes(a._engine.to_bytes()) == bytes(b._engine.to_bytes())
    with pytest.raises(TypeError):
        a.update("0.5")
    with pytest.raises(StateError):
        a.update(0.5)  # nothing outstanding


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_lock_held_by_another_thread_blocks_the_call(name: str) -> None:
    make, _ = FAMILIES[name]
    learner = make()
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with learner.lock:
            held.set()
            release.wait(5)

    def caller() -> None:
        learner.select()
        done.set()

    t1 = threading.Thread(target=holder)
    t1.start()
    assert held.wait(5)
    t2 = threading.Thread(target=caller)
    t2.start()
    time.sleep(0.05)
    assert not done.is_set()
    release.set()
    t1.join(5)
    t2.join(5)
    assert done.is_set()


CONTEXTUAL: dict[str, Callable[[], Any]] = {
    "LinUCB": lambda: dp.LinUCB(3, 300, seed=3),
    "JointDPLinUCB": lambda: dp.JointDPLinUCB(3, 300, 1.0, 0.1, seed=3),
    "LocalLinUCB": lambda: dp.LocalLinUCB(3, 300, 1.0, 0.1, seed=3),
    "PrivateContextualUCB": lambda: dp.PrivateContextualUCB(3, 300, 1.0, seed=3),
}


def _sets(n: int) -> np.ndarray:
    x = np.random.default_rng(1).normal(size=(n, 6, 3))
    return x / np.linalg.norm(x, axis=2, keepdims=True)


@pytest.mark.parametrize("name", sorted(CONTEXTUAL))
def test_contextual_bound_call_plays_the_checked_rounds(name: str) -> None:
    fast, checked = CONTEXTUAL[name](), CONTEXTUAL[name]()
    assert _bound_natively(fast)
    sets, ys = _sets(120), np.random.default_rng(2).uniform(-1, 1, 120)
    a, b = [], []
    for s, y in zip(sets, ys, strict=True):
        a.append(fast.select(s))
        fast.update(y)  # a NumPy float64
        b.append(checked._checked_select(s))
        checked._checked_update(float(y))
    assert a == b
    assert bytes(fast._engine.to_bytes()) == bytes(checked._engine.to_bytes())


@pytest.mark.parametrize("name", ["JointDPLinUCB"])
def test_contextual_outstanding_rows_survive_copies(name: str) -> None:
    learner = CONTEXTUAL[name]()
    sets = _sets(3)
    chosen = [learner.select(s) for s in sets]
    twin = pickle.loads(pickle.dumps(learner))
    rows = np.array([s[i] for s, i in zip(sets, chosen, strict=True)])
    assert np.array_equal(twin.outstanding, rows) and np.array_equal(learner.outstanding, rows)
    with pytest.raises(StateError, match="ambiguous: 3 selections"):
        twin.update(0.5)
    twin.update(rows[1], 0.5)
    assert np.array_equal(twin.outstanding, rows[[0, 2]])
    assert len(learner.outstanding) == 3


def test_row_queue_is_the_python_queue() -> None:
    from dpbandits.learners.outstanding import OutstandingRows

    rng = np.random.default_rng(5)
    pool = rng.integers(0, 3, size=(4, 2)).astype(float)
    ours, ref = _core.RowQueue(2), OutstandingRows(2)
    for step in range(3000):
        op = rng.integers(0, 5)
        if op == 0:
            row = pool[rng.integers(0, 4)]
            ours.push(row), ref.push(row)
        elif op == 1:
            rows = pool[rng.integers(0, 4, size=rng.integers(0, 4))]
            ours.push_many(rows), ref.push_many(rows)
        elif op == 2 and len(ref):
            ours.pop_first(), ref.pop_first()
        elif op == 3:
            x = pool[rng.integers(0, 4)]
            ours.settle(x), ref.settle(x)
        else:
            xs = ref.rows()[: rng.integers(0, 3)] if rng.uniform() < 0.5 else pool[rng.integers(0, 4, size=2)]
            ours.settle_many(xs), ref.settle_many(xs)
        assert len(ours) == len(ref), step
        assert np.array_equal(ours.rows(), ref.rows()), step


@pytest.mark.parametrize("name", ["PrivateDartboardExperts", "LazyPrivateOCO"])
def test_full_information_call_checks_and_warns_as_the_checked_path(name: str) -> None:
    make, loss = FAMILIES[name]
    fast, checked = make(), make()
    n = len(loss(np.random.default_rng(0), None))
    big = np.full(n, 2.0)
    for lr, update in ((fast, fast.update), (checked, checked._checked_update)):
        lr.select()
        update(loss(np.random.default_rng(1), None).tolist())  # a list: the checked path
        with pytest.warns(dp.errors.ClippedRewardWarning, match=name) as caught:
            update(big)
        assert caught[0].filename == __file__
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            update(big)  # warns once
        for bad in (np.full(n, np.nan), np.zeros(n + 1), "x"):
            with pytest.raises((ValueError, TypeError)):
                update(bad)
    assert fast.clipped_rewards == checked.clipped_rewards == 2
    assert bytes(fast._engine.to_bytes()) == bytes(checked._engine.to_bytes())
    twin = pickle.loads(pickle.dumps(fast))
    assert _bound_natively(twin) and twin.t == fast.t
    if name == "LazyPrivateOCO":
        assert twin.decision.__self__ is twin._online_call


def _client_contexts(rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(-1, 1, size=(4, 3)) / np.sqrt(3)


def _contextual_elimination() -> Any:
    thetas = np.random.default_rng(7).normal(size=(6, 3))
    return dp.ContextualEliminationBandit(thetas, _client_contexts, 400, "central", 1.0, seed=3)


def test_contextual_elimination_bound_call_plays_the_checked_rounds() -> None:
    fast, checked, other = _contextual_elimination(), _contextual_elimination(), _contextual_elimination()
    assert isinstance(fast.select.__self__, _core.ClientCall)
    rng = np.random.default_rng(0)
    for _ in range(200):
        phi, y = _client_contexts(rng), float(rng.uniform(-1, 1))
        a = fast.select(phi)
        assert a == checked._checked_select(phi) == other.select(phi.tolist())  # a list: the checked path
        fast.update(y)
        checked._checked_update(y)
        other.update(np.float64(y))
    assert fast.t == checked.t == other.t == 200
    assert bytes(fast._engine.to_bytes()) == bytes(checked._engine.to_bytes()) == bytes(other._engine.to_bytes())


def test_contextual_elimination_call_state_errors_and_lock() -> None:
    learner = _contextual_elimination()
    phi = _client_contexts(np.random.default_rng(1))
    with pytest.raises(StateError):
        learner.update(0.5)
    for bad in (np.zeros((0, 3)), np.zeros((4, 2)), np.full((4, 3), np.nan)):
        with pytest.raises(ValueError):
            learner.client_action(bad, np.ones(3))
    learner.select(phi)
    with pytest.raises(StateError):
        learner.select(phi)
    twin = pickle.loads(pickle.dumps(learner))
    assert twin._theta_index == learner._theta_index is not None
    assert isinstance(twin.select.__self__, _core.ClientCall)
    twin.update(0.25)
    assert twin._theta_index is None and twin.t == 1 and learner.t == 0
    with pytest.warns(dp.errors.ClippedRewardWarning, match="ContextualEliminationBandit") as caught:
        learner.update(7.0)
    assert caught[0].filename == __file__
    assert learner.lock is learner.linear.lock
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with learner.lock:
            held.set()
            release.wait(5)

    def caller() -> None:
        learner.select(phi)
        done.set()

    t1 = threading.Thread(target=holder)
    t1.start()
    assert held.wait(5)
    t2 = threading.Thread(target=caller)
    t2.start()
    time.sleep(0.05)
    assert not done.is_set()
    release.set()
    t1.join(5)
    t2.join(5)
    assert done.is_set()


def test_client_action_is_the_first_best_row() -> None:
    phi = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    assert dp.ContextualEliminationBandit.client_action(phi, [1.0, 0.0]) == 1
    assert dp.ContextualEliminationBandit.client_action(phi, [0.0, 0.0]) == 0
    rng = np.random.default_rng(2)
    for _ in range(50):
        phi, theta = rng.normal(size=(7, 5)), rng.normal(size=5)
        assert dp.ContextualEliminationBandit.client_action(phi, theta) == int(np.argmax(phi @ theta))


# --- the learner classes' own method descriptors ----------------------------------


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_methods_refuse_a_self_of_another_class(name: str) -> None:
    # The native methods read `self` as the learner without a check of
    # their own: CPython's check of the descriptor's type must refuse
    # anything else, on every way of calling them.
    cls = type(FAMILIES[name][0]())
    other = FAMILIES["EXP2" if name != "EXP2" else "SCRiBLe"][0]()
    for n in ("select", "update"):
        method = inspect.getattr_static(cls, n)
        for bad in (object(), 1.0, other, _core.OnlineBase()):
            with pytest.raises(TypeError):
                method(bad)
            with pytest.raises(TypeError):
                method.__get__(bad)
            with pytest.raises(TypeError):
                getattr(cls, n)(bad, 0.5)


def test_learner_method_is_made_only_for_a_learner_class() -> None:
    with pytest.raises(TypeError, match="OnlineBase"):
        _core.learner_method(dict, "select")
    with pytest.raises(ValueError, match="no learner method"):
        _core.learner_method(dp.EXP2, "observe")
    d = _core.learner_method(dp.EXP2, "update_losses")
    assert d.__objclass__ is dp.EXP2 and d.__name__ == "update"
    assert str(inspect.signature(d)) == "(self, /, losses, *, policy_version=None)"


@pytest.mark.parametrize("name", ["EXP2", "PrivateFTRL", "EliminationLinearBandit"])
def test_a_subclass_gets_descriptors_of_its_own_and_plays_the_same_rounds(name: str) -> None:
    make, loss = FAMILIES[name]
    base = type(make())
    sub = type("Sub" + base.__name__, (base,), {})
    fast = make()
    fast.__class__ = sub
    checked = make()
    assert _bound_natively(fast)
    assert inspect.getattr_static(sub, "select") is not inspect.getattr_static(base, "select")
    ours = _trace(fast.select, fast.update, loss, 50)
    assert ours == _trace(checked._checked_select, checked._checked_update, loss, 50)
    assert bytes(fast._engine.to_bytes()) == bytes(checked._engine.to_bytes())


@pytest.mark.parametrize("name", ["PrivateFTRL", "LazyPrivateExperts", "BatchedPrivateEXP3"])
def test_keywords_and_extra_arguments_take_the_checked_path(name: str) -> None:
    make, loss = FAMILIES[name]
    fast, checked = make(), make()
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    full_information = name != "BatchedPrivateEXP3"
    for _ in range(5):
        a, b = fast.select(), checked._checked_select()
        if full_information:
            fast.update(losses=loss(rng_a, a))
            checked._checked_update(losses=loss(rng_b, b))
        else:
            fast.update(loss(rng_a, a))
            checked._checked_update(loss(rng_b, b))
    assert bytes(fast._engine.to_bytes()) == bytes(checked._engine.to_bytes())
    fast.select()
    with pytest.raises(TypeError):
        fast.update(0.5, 0.5, 0.5)
    with pytest.raises(TypeError):
        fast.update(0.5, unknown=1)
    with pytest.raises(TypeError):
        fast.select(unknown=1)
