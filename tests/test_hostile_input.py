"""Hostile input: every public constructor and method of the existing API
fed NaN, inf, wrong shapes and dtypes, empty decision sets, huge values,
out-of-range rewards, eps <= 0, delta outside (0, 1), an exceeded horizon.

The rule checked on every case: the call either succeeds with a sane
result, or raises a clear ValueError / TypeError (or StateError for use
out of order). Never a crash, never a Rust panic (PyO3 would raise
``pyo3_runtime.PanicException``, a BaseException: caught here and
failed), never a silent acceptance of a non-finite number. Bounded fuzz:
max_examples per suite below, deadline=None; the case counts are printed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpbandits import mechanisms, simulate
from dpbandits.envs import ShariffSheffetEnv
from dpbandits.errors import StateError
from dpbandits.learners import JointDPLinUCB, LinUCB
from dpbandits.mechanisms import (
    GaussianNoise,
    LaplaceNoise,
    SymmetricGaussianNoise,
    TreeCounter,
    WishartNoise,
)
from dpbandits.privacy import (
    gaussian_mu,
    gaussian_tree_sigma,
    laplace_epsilon,
    laplace_tree_scale,
    shariff_sheffet_gaussian,
    shariff_sheffet_wishart,
    tree_depth,
    tree_levels,
    tree_node_epsilon,
    wishart_degrees_of_freedom,
)
from dpbandits.privacy.calibration import wishart_node_degrees_of_freedom
from dpbandits.privacy.secure import lattice_exponent, secure_gaussian_sensitivity, secure_laplace_epsilon

FUZZ = settings(
    max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None
)
CASES: Counter[str] = Counter()

NAN, INF = float("nan"), float("inf")
HOSTILE_SCALARS: list[Any] = [
    NAN, INF, -INF, 0, 0.0, -0.0, -1, -1.5, 1e-320, 1e308, -1e308, 2**64, 2**70, -(2**63), 0.5, 1, 3,
    True, False, None, "1", b"1", [1.0], (), {}, complex(1, 1), np.float32("nan"), np.int64(-5),
    np.array([1.0, 2.0]), np.array(NAN), object(),
]
hostile = st.one_of(
    st.sampled_from(HOSTILE_SCALARS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
)


def _non_finite(v: Any) -> bool:
    if v is None:
        return False
    try:
        arr = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return bool(arr.size) and not bool(np.all(np.isfinite(arr)))


def _check(name: str, call: Callable[[], Any], bad: Any, sane: Callable[[Any], None] | None = None) -> Any:
    """Runs one hostile case and applies the rule of the module docstring."""
    CASES[name] += 1
    try:
        out = call()
    except (ValueError, TypeError, StateError) as exc:
        assert str(exc), f"{name}: an error without a message for {bad!r}"
        return None
    except BaseException as exc:  # PanicException, OverflowError, ZeroDivisionError, ...
        pytest.fail(f"{name}: {type(exc).__name__}: {exc} for hostile value {bad!r}")
    assert not _non_finite(bad), f"{name}: silently accepted the non-finite value {bad!r}"
    if sane is not None:
        sane(out)
    return out


def _finite_number(out: Any) -> None:
    assert isinstance(out, (int, float)) and math.isfinite(out), out


# --- constructors ---------------------------------------------------------------

VALID_LINUCB = {"d": 3, "horizon": 20}
VALID_JOINT = {"d": 3, "horizon": 20, "epsilon": 1.0, "delta": 0.1}
DS = np.eye(3)


def _usable(learner: Any) -> None:
    ds = np.eye(learner.d)
    i = learner.select(ds)
    assert 0 <= i < learner.d
    learner.update(0.5)
    assert learner.t == 1
    if learner.t < learner.horizon:
        assert np.all(np.isfinite(learner.ucb(ds)))


LEARNER_PARAMS = {
    LinUCB: (VALID_LINUCB, ["d", "horizon", "regularizer", "alpha", "sigma", "S", "L", "radius", "bounds",
                            "refactor_every", "seed"]),
    JointDPLinUCB: (VALID_JOINT, ["d", "horizon", "epsilon", "delta", "noise", "shift", "alpha", "sigma", "S", "L",
                                  "B_tilde", "radius", "bounds", "calibration", "seed"]),
}


@FUZZ
@given(cls=st.sampled_from([LinUCB, JointDPLinUCB]), data=st.data(), bad=hostile)
def _fuzz_learner_constructors(cls: type, data: st.DataObject, bad: Any) -> None:
    valid, params = LEARNER_PARAMS[cls]
    name = data.draw(st.sampled_from(params))
    kwargs = {**valid, name: bad}
    if name in ("d", "horizon") and isinstance(bad, int) and not isinstance(bad, bool) and bad > 64:
        kwargs[name] = min(bad, 10**7) if name == "horizon" else bad  # d > 64 is refused below
    _check(f"{cls.__name__}()", lambda: cls(**kwargs), bad, _usable)


def test_learner_constructors() -> None:
    _fuzz_learner_constructors()
    print(f"[hostile] LinUCB / JointDPLinUCB constructors: {CASES['LinUCB()'] + CASES['JointDPLinUCB()']} cases")


@FUZZ
@given(data=st.data(), bad=hostile)
def _fuzz_env_and_counter_constructors(data: st.DataObject, bad: Any) -> None:
    which = data.draw(st.sampled_from(["env", "counter", "noise"]))
    if which == "env":
        name = data.draw(st.sampled_from(["d", "k", "gap", "optimal_reward", "reward", "seed"]))
        kwargs = {"d": 3, name: bad}

        def sane_env(env: Any) -> None:
            ds = env.decision_set(1)
            assert ds.ndim == 2 and np.all(np.isfinite(ds))
            assert math.isfinite(env.reward(1, 0))

        _check("ShariffSheffetEnv()", lambda: ShariffSheffetEnv(**kwargs), bad, sane_env)
    elif which == "counter":
        name = data.draw(st.sampled_from(["shape", "horizon", "noise", "seed", "padded", "secure"]))
        kwargs = {"shape": (2,), "horizon": 10, "noise": LaplaceNoise(1.0), name: bad}

        def sane_counter(c: TreeCounter) -> None:
            c.add(np.ones(c.shape))
            assert np.all(np.isfinite(c.release()))

        _check("TreeCounter()", lambda: TreeCounter(**kwargs), bad, sane_counter)
    else:
        spec = data.draw(st.sampled_from([LaplaceNoise, GaussianNoise, SymmetricGaussianNoise, WishartNoise]))
        args = (bad, 3.0) if spec is WishartNoise and data.draw(st.booleans()) else (
            (1.0, bad) if spec is WishartNoise else (bad,))
        _check("noise specs", lambda: spec(*args), bad)


def test_environment_counter_and_noise_constructors() -> None:
    _fuzz_env_and_counter_constructors()
    n = CASES["ShariffSheffetEnv()"] + CASES["TreeCounter()"] + CASES["noise specs"]
    print(f"[hostile] ShariffSheffetEnv / TreeCounter / noise spec constructors: {n} cases")


# --- functions --------------------------------------------------------------------

FUNCTIONS: dict[str, tuple[Callable[..., Any], dict[str, Any], Callable[[Any], None] | None]] = {
    "laplace": (mechanisms.laplace, {"scale": 1.0, "size": 4, "seed": 0, "secure": False}, None),
    "gaussian": (mechanisms.gaussian, {"sigma": 1.0, "size": 4, "seed": 0, "secure": False}, None),
    "symmetric_gaussian": (mechanisms.symmetric_gaussian, {"sigma": 1.0, "p": 2, "size": 3, "seed": 0}, None),
    "wishart": (mechanisms.wishart, {"scale": np.eye(2), "df": 3.0, "size": 3, "seed": 0}, None),
    "shariff_sheffet_gaussian": (shariff_sheffet_gaussian, {"d": 3, "horizon": 100, "epsilon": 1.0, "delta": 0.1,
                                                            "alpha": None, "L": 1.0, "B_tilde": 1.0, "shift": True,
                                                            "calibration": "paper"}, None),
    "shariff_sheffet_wishart": (shariff_sheffet_wishart, {"d": 3, "horizon": 100, "epsilon": 1.0, "delta": 0.1,
                                                          "alpha": None, "L": 1.0, "B_tilde": 1.0, "shift": True},
                                None),
    "gaussian_tree_sigma": (gaussian_tree_sigma, {"horizon": 100, "epsilon": 1.0, "delta": 0.1, "sensitivity": 1.0,
                                                  "calibration": "tight"}, _finite_number),
    "laplace_tree_scale": (laplace_tree_scale, {"horizon": 100, "epsilon": 1.0, "sensitivity": 1.0,
                                                "calibration": "paper"}, _finite_number),
    "tree_depth": (tree_depth, {"horizon": 100}, _finite_number),
    "tree_levels": (tree_levels, {"horizon": 100}, _finite_number),
    "tree_node_epsilon": (tree_node_epsilon, {"epsilon": 1.0, "delta": 0.1, "m": 7}, _finite_number),
    "wishart_degrees_of_freedom": (wishart_degrees_of_freedom, {"d": 3, "m": 7, "epsilon": 1.0, "delta": 0.1},
                                   _finite_number),
    "wishart_node_degrees_of_freedom": (wishart_node_degrees_of_freedom, {"d": 3, "epsilon": 1.0, "delta": 0.1},
                                        _finite_number),
    "laplace_epsilon": (laplace_epsilon, {"sensitivity_l1": 1.0, "scale": 2.0}, _finite_number),
    "gaussian_mu": (gaussian_mu, {"epsilon": 1.0, "delta": 0.1}, _finite_number),
    "lattice_exponent": (lattice_exponent, {"scale": 1.0}, _finite_number),
    "secure_laplace_epsilon": (secure_laplace_epsilon, {"sensitivity_l1": 1.0, "scale": 2.0, "dim": 1},
                               _finite_number),
    "secure_gaussian_sensitivity": (secure_gaussian_sensitivity, {"sensitivity_l2": 1.0, "sigma": 2.0, "dim": 1},
                                    _finite_number),
}


SAMPLERS = {"laplace", "gaussian", "symmetric_gaussian", "wishart"}


def _sane_samples(out: Any) -> None:
    assert np.all(np.isfinite(np.asarray(out, dtype=np.float64)))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(fname=st.sampled_from(sorted(FUNCTIONS)), data=st.data(), bad=hostile)
def _fuzz_functions(fname: str, data: st.DataObject, bad: Any) -> None:
    fn, valid, sane = FUNCTIONS[fname]
    name = data.draw(st.sampled_from(sorted(valid)))
    kwargs = {**valid, name: bad}
    if name == "size" and isinstance(bad, int) and not isinstance(bad, bool) and bad > 10**6:
        kwargs["size"] = bad  # must be refused (memory), not attempted
    _check(f"function {fname}", lambda: fn(**kwargs), bad, sane or (_sane_samples if fname in SAMPLERS else None))


def test_sampler_and_privacy_functions() -> None:
    _fuzz_functions()
    n = sum(v for k, v in CASES.items() if k.startswith("function "))
    print(f"[hostile] samplers and privacy calibration functions: {n} cases over {len(FUNCTIONS)} functions")


# --- methods --------------------------------------------------------------------

HOSTILE_ARRAYS: list[Any] = [
    np.full((3, 3), NAN), np.full((3, 3), INF), np.zeros((0, 3)), np.ones(3), np.ones((3, 3, 3)), np.ones((3, 2)),
    np.ones((3, 4)), np.array([["a", "b", "c"]]), np.ones((2, 3), dtype=complex) * 1j, np.full((2, 3), 1e308),
    np.full((2, 3), -1e308), np.full((2, 3), 1e-320), [[1.0, 2.0], [3.0]], None, 5, "abc",
    np.ones((2, 3), dtype=object),
    np.ones((2, 3), dtype=np.float32), np.ones((2, 3), dtype=np.int8), np.eye(3)[:, ::-1], np.asfortranarray(np.eye(3)),
]
hostile_array = st.one_of(
    st.sampled_from(HOSTILE_ARRAYS),
    st.lists(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=3, max_size=3), max_size=4).map(
        np.array),
)


def _learner(kind: str, bounds: str = "clip") -> Any:
    if kind == "LinUCB":
        return LinUCB(3, 6, bounds=bounds, seed=0)
    return JointDPLinUCB(3, 6, 1.0, 0.1, bounds=bounds, seed=0, noise="wishart" if kind == "wishart" else "gaussian")


@FUZZ
@given(kind=st.sampled_from(["LinUCB", "gaussian", "wishart"]), bounds=st.sampled_from(["clip", "error"]),
       method=st.sampled_from(["select", "ucb", "update_reward", "update_x", "update_x_reward"]),
       ds=hostile_array, bad=hostile)
def _fuzz_learner_methods(kind: str, bounds: str, method: str, ds: Any, bad: Any) -> None:
    learner = _learner(kind, bounds)
    if method == "select":
        _check("learner.select", lambda: learner.select(ds), ds, lambda i: assert_index(i, ds))
    elif method == "ucb":
        _check("learner.ucb", lambda: learner.ucb(ds), ds, lambda u: None)
    elif method == "update_reward":
        learner.select(DS)
        _check("learner.update(reward)", lambda: learner.update(bad), bad)
    elif method == "update_x":
        _check("learner.update(x, reward)", lambda: learner.update(ds, 0.5), ds)
    else:
        _check("learner.update(x, reward)", lambda: learner.update(np.ones(3) / 2, bad), bad)
    # Whatever happened, the learner is still usable and consistent.
    t = learner.t
    i = learner.select(DS)
    assert 0 <= i < 3
    # The fuzzed select may have left a selection outstanding too: name the row.
    learner.update(DS[i], 0.25)
    assert learner.t == t + 1
    assert np.all(np.isfinite(learner.ucb(DS))), f"non-finite UCB after {method} with {ds!r} / {bad!r}"


def assert_index(i: Any, ds: Any) -> None:
    assert isinstance(i, int) and 0 <= i < np.asarray(ds).shape[0]


def test_learner_methods() -> None:
    _fuzz_learner_methods()
    n = CASES["learner.select"] + CASES["learner.ucb"] + CASES["learner.update(reward)"] + \
        CASES["learner.update(x, reward)"]
    print(f"[hostile] select / ucb / update(reward) / update(x, reward): {n} cases")


@FUZZ
@given(method=st.sampled_from(["add", "add_many", "decision_set", "reward", "mean_rewards"]), arr=hostile_array,
       bad=hostile)
def _fuzz_counter_and_env_methods(method: str, arr: Any, bad: Any) -> None:
    c = TreeCounter((3,), 5, GaussianNoise(1.0), seed=0)
    env = ShariffSheffetEnv(3, seed=0)
    if method == "add":
        _check("TreeCounter.add", lambda: c.add(arr if isinstance(arr, np.ndarray) and arr.ndim == 1 else bad), bad)
        _check("TreeCounter.add", lambda: c.add(arr), arr)
    elif method == "add_many":
        _check("TreeCounter.add_many", lambda: c.add_many(arr), arr)
    elif method == "decision_set":
        _check("env.decision_set", lambda: env.decision_set(bad), bad, _sane_samples)
    elif method == "reward":
        _check("env.reward", lambda: env.reward(0, bad), bad, _finite_number)
        _check("env.reward", lambda: env.reward(bad, 0), bad, _finite_number)
    else:
        _check("env.mean_rewards", lambda: env.mean_rewards(bad), bad, _sane_samples)
    assert np.all(np.isfinite(c.release()))
    if c.t < c.horizon:
        c.add(np.ones(3))


def test_counter_and_environment_methods() -> None:
    _fuzz_counter_and_env_methods()
    n = sum(v for k, v in CASES.items() if k.startswith(("TreeCounter.", "env.")))
    print(f"[hostile] TreeCounter.add / add_many, environment methods: {n} cases")


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(name=st.sampled_from(["horizon", "seeds", "record_every", "env", "learner"]), bad=hostile)
def _fuzz_simulate(name: str, bad: Any) -> None:
    kwargs: dict[str, Any] = {"learner": LinUCB(2, 50, seed=0), "env": ShariffSheffetEnv(2, seed=0), "horizon": 50,
                              "seeds": 2, "record_every": 10}
    kwargs[name] = bad
    # A large count of seeds is valid, just long: replaced by a short one.
    if name in ("seeds", "record_every") and isinstance(bad, int) and not isinstance(bad, bool) and bad > 4:
        kwargs[name] = 2**64 if bad >= 2**64 else 4
    _check("simulate", lambda: simulate(**kwargs), bad)


def test_simulate() -> None:
    _fuzz_simulate()
    print(f"[hostile] simulate: {CASES['simulate']} cases")


# --- documented clipping, bound errors, the horizon ------------------------------


def test_out_of_range_inputs_are_clipped_or_refused_as_documented() -> None:
    clip = JointDPLinUCB(3, 10, 1.0, 0.1, seed=0)
    err = JointDPLinUCB(3, 10, 1.0, 0.1, bounds="error", seed=0)
    clip.update(np.array([10.0, 0.0, 0.0]), 50.0)  # scaled to ||x|| = L, y clipped to B_tilde
    assert clip.t == 1
    with pytest.raises(ValueError, match=r"reward|y"):
        err.update(np.array([0.5, 0.0, 0.0]), 50.0)
    with pytest.raises(ValueError, match="x"):
        err.update(np.array([10.0, 0.0, 0.0]), 0.5)
    assert err.t == 0
    # The clipped row equals the row at the bound: same releases afterwards.
    twin = JointDPLinUCB(3, 10, 1.0, 0.1, seed=0)
    twin.update(np.array([1.0, 0.0, 0.0]), 1.0)
    assert np.array_equal(clip.ucb(DS), twin.ucb(DS))


@pytest.mark.parametrize("make", [lambda: LinUCB(2, 3, seed=0), lambda: JointDPLinUCB(2, 3, 1.0, 0.1, seed=0)])
def test_the_horizon_is_a_hard_budget(make, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The guarantee is for n rounds: past them select and update refuse
    (StateError), also after a checkpoint round trip; the only way on is a
    new learner calibrated for a longer horizon (no recalibration path)."""
    learner = make()
    ds = np.eye(2)
    for _ in range(3):
        learner.select(ds)
        learner.update(0.1)
    with pytest.raises(StateError, match="horizon"):
        learner.select(ds)
    with pytest.raises(StateError, match="horizon"):
        learner.update(np.ones(2) / 2, 0.1)
    learner.save(tmp_path / "l.ckpt")
    restored = type(learner).load(tmp_path / "l.ckpt")
    with pytest.raises(StateError, match="horizon"):
        restored.update(np.ones(2) / 2, 0.1)
    assert learner.t == restored.t == 3
    c = TreeCounter((), 2, LaplaceNoise(1.0), seed=0)
    c.add_many([1.0, 2.0])
    with pytest.raises(StateError, match="horizon"):
        c.add(1.0)
    with pytest.raises(StateError, match="horizon"):
        c.add_many([1.0])
