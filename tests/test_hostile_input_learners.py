"""Hostile input for the K-armed, contextual, elimination and
online-learning learners and their environments: every public constructor
and method fed NaN, inf, wrong shapes and dtypes, empty sets, huge values,
out-of-range rewards, eps <= 0, delta outside (0, 1), an exceeded horizon.

Same rule as tests/test_hostile_input.py: the call succeeds with a sane
result, or raises a clear ValueError / TypeError / StateError; never a
Rust panic, never another exception type, never a silent acceptance of a
non-finite number; and a refused call leaves the round counter unchanged.
Privacy parameters out of range (eps <= 0 or non-finite, delta outside
(0, 1)) must be refused. Bounded fuzz, deterministic; counts printed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from _learner_drivers import ACTIONS, DRIVERS, FIXED_BUDGET, _context_sampler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile_input import CASES, _check, hostile

from dpbandits.envs.k_armed import BernoulliBandit, GaussianBandit
from dpbandits.envs.linear_bandit import LinearBanditEnv
from dpbandits.envs.losses import LossArray, StochasticLosses, SwitchingBestExpert, UniformLosses
from dpbandits.envs.replay import ReplayEnv
from dpbandits.errors import StateError
from dpbandits.learners.elimination import ContextualEliminationBandit, EliminationLinearBandit
from dpbandits.learners.linucb_trust import LocalLinUCB, ShuffleLinUCB
from dpbandits.learners.mab import UCB1, PrivateThompsonSampling, PrivateUCB, ThompsonSampling
from dpbandits.learners.mishra_thakurta import PrivateContextualThompsonSampling, PrivateContextualUCB
from dpbandits.learners.online_learning import EXP2, PrivateFTPL, PrivateFTRL, SCRiBLe

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                database=None)

hostile_arrays = st.sampled_from([
    np.array([]), np.zeros((0, 2)), np.zeros((2, 0)), np.full((3, 2), np.nan), np.full(3, np.inf),
    np.array([[1e308, 1e308]]), np.ones((2, 2, 2)), np.array(["a", "b"]), np.array([1, 2], dtype=np.int8),
    np.array([0.2, 0.5, 0.9]), np.array([[0.5, 0.5], [0.1, 0.2]]), np.array([-1.0, 2.0]), [[0.3, 0.3]],
    [0.1, float("nan")], np.array([True, False]), np.zeros((2, 3), dtype=np.complex128),
])
anything = st.one_of(hostile, hostile_arrays)

# class -> (valid kwargs, fuzzed parameter names, privacy parameters that must be refused when bad)
LEARNERS: dict[type, tuple[dict[str, Any], list[str]]] = {
    UCB1: ({"k": 3, "horizon": 20}, ["k", "horizon", "reward_range", "seed"]),
    ThompsonSampling: ({"k": 3, "horizon": 20}, ["k", "horizon", "prior", "reward_range", "seed"]),
    PrivateUCB: ({"k": 3, "horizon": 20, "epsilon": 1.0},
                 ["k", "horizon", "epsilon", "gamma", "confidence", "reward_range", "bounds", "calibration",
                  "seed"]),
    PrivateThompsonSampling: ({"k": 3, "horizon": 20, "epsilon": 1.0, "gap_estimation": False},
                              ["k", "horizon", "epsilon", "gamma", "gap_estimation", "reward_range", "bounds",
                               "calibration", "seed"]),
    PrivateContextualUCB: ({"d": 2, "horizon": 20, "epsilon": 1.0},
                           ["d", "horizon", "epsilon", "alpha", "L", "B", "bounds", "calibration", "seed"]),
    PrivateContextualThompsonSampling: ({"d": 2, "horizon": 20, "epsilon": 1.0},
                                        ["d", "horizon", "epsilon", "alpha", "L", "B", "bounds", "calibration",
                                         "seed"]),
    EliminationLinearBandit: ({"actions": ACTIONS, "horizon": 20, "privacy": "shuffle", "epsilon": 1.0,
                               "delta": 0.01},
                              ["actions", "horizon", "privacy", "epsilon", "delta", "d", "reward_range",
                               "calibration", "exploration", "shuffle_method", "confidence", "zeta",
                               "max_actions", "bounds", "seed"]),
    ContextualEliminationBandit: ({"thetas": ACTIONS, "context_sampler": _context_sampler, "horizon": 20,
                                   "privacy": "central", "epsilon": 1.0, "n_samples": 5},
                                  ["thetas", "horizon", "privacy", "epsilon", "delta", "d", "n_samples",
                                   "sampler_seed", "zeta", "max_actions", "seed"]),
    PrivateFTRL: ({"n": 3, "horizon": 20, "epsilon": 1.0},
                  ["n", "horizon", "epsilon", "geometry", "calibration", "eta", "bounds", "seed"]),
    PrivateFTPL: ({"n": 3, "horizon": 20, "epsilon": 1.0, "delta": 0.01},
                  ["n", "horizon", "epsilon", "delta", "geometry", "calibration", "bounds", "seed"]),
    EXP2: ({"n": 3, "horizon": 20, "epsilon": 1.0}, ["n", "horizon", "epsilon", "bounds", "seed"]),
    SCRiBLe: ({"n": 3, "horizon": 20, "epsilon": 1.0}, ["n", "horizon", "epsilon", "calibration", "bounds", "seed"]),
    LocalLinUCB: ({"d": 2, "horizon": 20, "epsilon": 1.0, "delta": 0.1},
                  ["d", "horizon", "epsilon", "delta", "noise", "calibration", "regularizer", "alpha", "sigma", "S",
                   "L", "B_tilde", "bounds", "seed", "sampler"]),
    ShuffleLinUCB: ({"d": 2, "horizon": 20, "epsilon": 1.0, "delta": 0.1},
                    ["d", "horizon", "epsilon", "delta", "protocol", "calibration", "shuffle_method", "batch_size",
                     "regularizer", "alpha", "sigma", "S", "L", "B_tilde", "bounds", "seed", "sampler"]),
}
STEP = {
    UCB1: "UCB1", ThompsonSampling: "ThompsonSampling", PrivateUCB: "PrivateUCB",
    PrivateThompsonSampling: "PrivateThompsonSampling", PrivateContextualUCB: "PrivateContextualUCB",
    PrivateContextualThompsonSampling: "PrivateContextualThompsonSampling",
    EliminationLinearBandit: "EliminationLinearBandit", ContextualEliminationBandit: "ContextualEliminationBandit",
    PrivateFTRL: "PrivateFTRL", PrivateFTPL: "PrivateFTPL", EXP2: "EXP2", SCRiBLe: "SCRiBLe",
    LocalLinUCB: "LocalLinUCB", ShuffleLinUCB: "ShuffleLinUCB",
}


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _must_refuse(name: str, value: Any) -> bool:
    """Privacy parameters the proofs cannot cover must never be accepted."""
    if name == "epsilon":
        return value is not None and not (_is_real(value) and 0 < float(value) < math.inf)
    if name == "delta":
        return value is not None and not (_is_real(value) and 0 < float(value) < 1)
    return False


def _usable(learner: Any) -> None:
    if (getattr(learner, "k", None) not in (None, 3, len(ACTIONS)) or getattr(learner, "n", 3) != 3
            or getattr(learner, "d", 2) != 2):
        assert learner.t == 0  # other dimensions than the drivers' (their inputs would not fit)
        return
    _, step = DRIVERS[STEP[type(learner)]]
    for t in range(min(3, learner.horizon)):
        step(learner, t)
    assert learner.t == min(3, learner.horizon)


@FUZZ
@given(data=st.data(), bad=anything)
def _fuzz_constructors(cls: type, data: st.DataObject, bad: Any) -> None:
    valid, params = LEARNERS[cls]
    name = data.draw(st.sampled_from(params))
    kwargs = {**valid, name: bad}
    if (name in ("horizon", "k", "n", "d", "max_actions", "n_samples") and _is_real(bad) and math.isfinite(bad)
            and bad > 64):
        kwargs[name] = min(int(bad), 10**4 if name != "horizon" else 10**7)
    out = _check(f"{cls.__name__}()", lambda: cls(**kwargs), bad, _usable)
    if out is not None:
        assert not _must_refuse(name, bad), f"{cls.__name__}: accepted {name}={bad!r}"


@pytest.mark.parametrize("cls", sorted(LEARNERS, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_learner_constructors(cls: type) -> None:
    _fuzz_constructors(cls)
    print(f"[hostile] {cls.__name__} constructor: {CASES[f'{cls.__name__}()']} cases")


# --- methods ------------------------------------------------------------------


def _fresh(cls: type) -> Any:
    valid, _ = LEARNERS[cls]
    return cls(**{**valid, "seed": 1})


def _method_calls(cls: type, lr: Any, bad: Any) -> list[tuple[str, Any]]:
    """(name, thunk) of every public method taking input, fed ``bad``."""
    calls: list[tuple[str, Any]] = []
    if cls in (UCB1, ThompsonSampling, PrivateUCB, PrivateThompsonSampling, EliminationLinearBandit, EXP2,
               SCRiBLe):
        calls.append(("update(bad) after select", lambda: (lr.select(), lr.update(bad))))
    if cls in (PrivateContextualUCB, PrivateContextualThompsonSampling, LocalLinUCB, ShuffleLinUCB):
        calls += [("select(bad)", lambda: lr.select(bad)),
                  ("update(bad) after select", lambda: (lr.select(np.eye(2)), lr.update(bad))),
                  ("update(bad, 0.5)", lambda: lr.update(bad, 0.5)),
                  ("update(x, bad)", lambda: lr.update(np.array([0.6, 0.0]), bad))]
    if cls is EliminationLinearBandit:
        calls.append(("select(bad)", lambda: lr.select(bad)))
    if cls is ContextualEliminationBandit:
        calls += [("select(bad)", lambda: lr.select(bad)),
                  ("update(bad) after select", lambda: (lr.select(np.eye(2)), lr.update(bad))),
                  ("client_action(bad, theta)", lambda: lr.client_action(bad, np.ones(2))),
                  ("client_action(phi, bad)", lambda: lr.client_action(np.eye(2), bad))]
    if cls in (PrivateFTRL, PrivateFTPL):
        calls.append(("update(bad)", lambda: lr.update(bad)))
    if cls in (PrivateFTRL, PrivateFTPL, EXP2, SCRiBLe):
        calls.append(("reseed(bad)", lambda: lr.reseed(bad)))
    if cls in (LocalLinUCB, ShuffleLinUCB):
        calls.append(("ucb(bad)", lambda: lr.ucb(bad)))
    return calls


@FUZZ
@given(data=st.data(), bad=anything)
def _fuzz_methods(cls: type, data: st.DataObject, bad: Any) -> None:
    lr = _fresh(cls)
    calls = _method_calls(cls, lr, bad)
    label, call = data.draw(st.sampled_from(calls))
    t0 = lr.t
    CASES[f"{cls.__name__}.methods"] += 1
    try:
        call()
    except (ValueError, TypeError, StateError) as exc:
        assert str(exc)
        assert lr.t == t0, f"{cls.__name__}.{label}: a refused call moved t for {bad!r}"
        return
    except BaseException as exc:  # PanicException, OverflowError, ...
        raise AssertionError(f"{cls.__name__}.{label}: {type(exc).__name__}: {exc} for {bad!r}") from None
    if "reseed" not in label and "client_action" not in label:
        arr = None
        try:
            arr = np.asarray(bad, dtype=np.float64)
        except (TypeError, ValueError):
            pass
        assert arr is None or arr.size == 0 or np.all(np.isfinite(arr)), (
            f"{cls.__name__}.{label}: silently accepted {bad!r}")


@pytest.mark.parametrize("cls", sorted(LEARNERS, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_learner_methods(cls: type) -> None:
    _fuzz_methods(cls)
    print(f"[hostile] {cls.__name__} methods: {CASES[f'{cls.__name__}.methods']} cases")


def test_every_learner_refuses_its_horizon_plus_one() -> None:
    for name, (make, step) in DRIVERS.items():
        h = 6 if name in FIXED_BUDGET else 3  # a fixed budget pulls each arm once per phase at least
        lr = make(h, 2)
        for t in range(h):
            step(lr, t)
        try:
            step(lr, h)
        except StateError:
            continue
        raise AssertionError(f"{name} ran past its horizon")


# --- environments -----------------------------------------------------------------

ENVS: dict[Any, tuple[dict[str, Any], list[str]]] = {
    BernoulliBandit: ({"means": [0.2, 0.5]}, ["means", "seed"]),
    GaussianBandit: ({"means": [0.2, 0.5]}, ["means", "sigma", "seed"]),
    LinearBanditEnv: ({"actions": ACTIONS}, ["actions", "d", "seed"]),
    StochasticLosses: ({"means": [0.2, 0.5]}, ["means", "seed", "geometry"]),
    SwitchingBestExpert: ({"n": 3}, ["n", "first_phase", "seed", "geometry"]),
    LossArray: ({"losses": np.full((4, 3), 0.5)}, ["losses", "geometry"]),
    UniformLosses: ({"center": [0.2, -0.5]}, ["center", "spread", "geometry", "seed"]),
    ReplayEnv: ({"features": np.eye(4), "labels": np.array([0, 1, 0, 1])},
                ["features", "labels", "wrong_reward", "name"]),
}


def _env_usable(env: Any) -> None:
    if hasattr(env, "pull"):
        assert math.isfinite(env.pull(0)) and math.isfinite(env.regret(0))
    elif hasattr(env, "next_round"):
        assert np.all(np.isfinite(env.next_round()))
        if env.geometry == "simplex":
            assert math.isfinite(env.regret(0))
        else:
            assert math.isfinite(env.point_regret(np.zeros(env.n)))
    else:
        ds = env.decision_set(1)
        assert np.all(np.isfinite(ds)) and math.isfinite(env.reward(1, 0))


@FUZZ
@given(data=st.data(), bad=anything)
def _fuzz_envs(cls: type, data: st.DataObject, bad: Any) -> None:
    valid, params = ENVS[cls]
    name = data.draw(st.sampled_from(params))
    kwargs = {**valid, name: bad}
    if name in ("n", "d", "first_phase") and _is_real(bad) and math.isfinite(bad) and bad > 64:
        kwargs[name] = min(int(bad), 10**4)
    _check(f"{cls.__name__}()", lambda: cls(**kwargs), bad, _env_usable)
    # Methods of a valid environment fed the hostile value.
    env = cls(**valid) if cls is LossArray or cls is ReplayEnv else cls(**{**valid, "seed": 3})
    if hasattr(env, "pull"):
        _check(f"{cls.__name__}.methods", lambda: env.pull(bad), bad)
        _check(f"{cls.__name__}.methods", lambda: env.regret(bad), bad)
    elif hasattr(env, "next_round"):
        env.next_round()
        _check(f"{cls.__name__}.methods", lambda: env.regret(bad), bad)
        _check(f"{cls.__name__}.methods", lambda: env.point_regret(bad), bad)
    else:
        _check(f"{cls.__name__}.methods", lambda: env.decision_set(bad), bad)
        _check(f"{cls.__name__}.methods", lambda: env.reward(1, bad), bad)
        _check(f"{cls.__name__}.methods", lambda: env.mean_rewards(bad), bad)


@pytest.mark.parametrize("cls", sorted(ENVS, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_environments(cls: type) -> None:
    _fuzz_envs(cls)
    print(f"[hostile] {cls.__name__}: {CASES[f'{cls.__name__}()']} constructor and "
          f"{CASES[f'{cls.__name__}.methods']} method cases")


# --- regressions: the bugs this fuzz found ------------------------------------------


def test_regressions_found_by_the_fuzz() -> None:
    import pytest as _pytest

    # regret(-1) wrapped around to the last arm; regret(2.0) raised IndexError; pull(inf) OverflowError.
    env = BernoulliBandit([0.2, 0.5], seed=1)
    for bad in (-1, 2, 2.0, float("inf")):
        with _pytest.raises(ValueError if bad != float("inf") else TypeError):
            env.regret(bad)
    with _pytest.raises(TypeError):
        env.pull(float("inf"))
    # A sigma whose draws overflow to inf.
    with _pytest.raises(ValueError, match="sigma"):
        GaussianBandit([0.0], sigma=1e308)
    # Unused arguments were silently ignored when non-finite.
    with _pytest.raises(ValueError, match="zeta"):
        EliminationLinearBandit(ACTIONS, 20, zeta=float("nan"))
    with _pytest.raises(TypeError, match="max_actions"):
        EliminationLinearBandit(ACTIONS, 20, max_actions=float("nan"))
    with _pytest.raises(ValueError, match="`d`"):
        ContextualEliminationBandit(ACTIONS, _context_sampler, 20, d=3, n_samples=2)
    with _pytest.raises(TypeError, match="name"):
        ReplayEnv(np.eye(2), np.array([0, 1]), name=float("nan"))
    with _pytest.raises(TypeError):
        LinearBanditEnv(ACTIONS, seed=1).mean_rewards(float("nan"))
    # An infinite reward was clipped to r_max instead of refused.
    lr = EliminationLinearBandit(ACTIONS, 20, "central", 1.0, seed=1)
    lr.select()
    with _pytest.raises(ValueError, match="reward"):
        lr.update(float("inf"))
    assert lr.t == 0


def test_bounds_error_refuses_out_of_range_feedback_and_clip_accepts_it() -> None:
    import pytest as _pytest

    cases = [
        (PrivateUCB, {"k": 3, "horizon": 20, "epsilon": 1.0}, lambda lr: lr.select(), 1.5),
        (PrivateThompsonSampling, {"k": 3, "horizon": 20, "epsilon": 1.0, "gap_estimation": False},
         lambda lr: lr.select(), -0.5),
        (PrivateContextualUCB, {"d": 2, "horizon": 20, "epsilon": 1.0}, lambda lr: lr.select(np.eye(2)), 2.0),
        (PrivateContextualThompsonSampling, {"d": 2, "horizon": 20, "epsilon": 1.0},
         lambda lr: lr.select(np.eye(2)), -2.0),
        (EliminationLinearBandit, {"actions": ACTIONS, "horizon": 20, "privacy": "central", "epsilon": 1.0},
         lambda lr: lr.select(), 1.5),
        (PrivateFTRL, {"n": 3, "horizon": 20, "epsilon": 1.0}, lambda lr: None, np.array([0.5, 1.5, 0.0])),
        (PrivateFTPL, {"n": 3, "horizon": 20, "epsilon": 1.0, "delta": 0.01}, lambda lr: None,
         np.array([-0.5, 0.5, 0.0])),
        (EXP2, {"n": 3, "horizon": 20, "epsilon": 1.0}, lambda lr: lr.select(), 1.5),
        (SCRiBLe, {"n": 3, "horizon": 20, "epsilon": 1.0}, lambda lr: lr.select(), 1.5),
    ]
    for cls, kwargs, select, bad in cases:
        strict = cls(**kwargs, bounds="error", seed=1)
        select(strict)
        with _pytest.raises(ValueError):
            strict.update(bad)
        assert strict.t == 0, cls.__name__
        lenient = cls(**kwargs, bounds="clip", seed=1)
        select(lenient)
        lenient.update(bad)
        assert lenient.t == 1, cls.__name__
