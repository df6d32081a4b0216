"""Hostile input, the product's promise: every refusal is a ValueError or
TypeError naming the argument (and, for a privacy parameter out of the
calibration's arithmetic, the range that works); never an OverflowError,
a ZeroDivisionError or a bare NumPy error.

Also the defaults a user can trust: a private learner is never built
without its epsilon (non-private use is spelled out, and then its
guarantee says so); integer arguments take integral floats and keep the
integer; a reward is one real number.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits._validation import reward_scalar
from dpbandits.envs.replay import ReplayEnv

FORBIDDEN = (OverflowError, ZeroDivisionError, ArithmeticError)


def _refusal(make: Callable[[], Any], names: tuple[str, ...]) -> Exception | None:
    """Calls ``make``: success is allowed; a failure must be a ValueError or
    TypeError naming one of ``names``. Returns the error (or None)."""
    try:
        make()
    except (ValueError, TypeError) as exc:
        assert not isinstance(exc, FORBIDDEN)
        assert any(f"`{n}`" in str(exc) for n in names), f"{type(exc).__name__} does not name {names}: {exc}"
        return exc
    return None


# --- privacy parameters outside the calibration's arithmetic -----------------------

PHASED = [dp.DPKLUCB, dp.DPIMED, dp.AdaPUCB, dp.AdaPKLUCB, dp.DPSE, dp.DPTS]
EXTREMES = [5e-324, 1e-300, 1e-30, 1e30, 1e300]


def _phased(cls: type) -> Callable[[float], Any]:
    return lambda e: cls(3, 100, e)


@pytest.mark.parametrize("eps", EXTREMES)
@pytest.mark.parametrize("make", [
    *[_phased(c) for c in PHASED],
    lambda e: dp.AdaCUCB(3, 100, e), lambda e: dp.AdaCKLUCB(3, 100, e),
    lambda e: dp.PrivateUCB(3, 100, e), lambda e: dp.PrivateUCB(3, 100, e, calibration="tight"),
    lambda e: dp.PrivateThompsonSampling(3, 100, e),
    lambda e: dp.ShuffleLinUCB(1, 3, e, 0.1), lambda e: dp.ShuffleLinUCB(2, 10, e, 0.1, protocol="amplification"),
    lambda e: dp.LocalLinUCB(2, 10, e, 0.1), lambda e: dp.LocalLinUCB(2, 10, e, noise="laplace"),
    lambda e: dp.JointDPLinUCB(3, 100, e, 0.1), lambda e: dp.JointDPLinUCB(3, 100, e, 0.1, noise="wishart"),
    lambda e: dp.PrivateFTRL(3, 100, e), lambda e: dp.PrivateFTPL(3, 100, e, 1e-6), lambda e: dp.EXP2(3, 100, e),
    lambda e: dp.SCRiBLe(3, 100, e), lambda e: dp.PrivateContextualUCB(3, 100, e),
    lambda e: dp.EliminationLinearBandit(np.eye(2), 100, "central", e),
    lambda e: dp.EliminationLinearBandit(np.eye(2), 100, "local", e),
])
def test_extreme_privacy_parameters_are_named(make: Callable[[float], Any], eps: float) -> None:
    err = _refusal(lambda: make(eps), ("epsilon", "rho"))
    if err is not None and "outside the range" in str(err):
        assert "works" in str(err) or " < " in str(err), str(err)  # the range that works is stated


@pytest.mark.parametrize(("make", "says"), [
    (lambda: dp.DPTS(3, 100, 1e-300), "epsilon >= "),
    (lambda: dp.ShuffleLinUCB(1, 3, 1e9, 0.1), "epsilon <= "),
    (lambda: dp.PrivateUCB(3, 100, 5e-324), "epsilon >= "),
    (lambda: dp.DPKLUCB(3, 100, 1e300), "epsilon <= "),
    (lambda: dp.DPSE(3, 100, 1e300), "epsilon <= "),
    (lambda: dp.AdaPUCB(3, 100, 1e300), "epsilon <= "),
    (lambda: dp.AdaCUCB(3, 100, 1e300), "rho <= "),
])
def test_the_cases_of_the_report_name_the_parameter_and_its_range(make: Callable[[], Any], says: str) -> None:
    with pytest.raises(ValueError, match=r"invalid argument `(epsilon|rho)`") as exc:
        make()
    assert says in str(exc.value) and "works" in str(exc.value)


@pytest.mark.parametrize("make", [lambda: dp.DPSE(3, 100, 1e-300), lambda: dp.DPSE(3, 100, 1.0, beta=5e-324)])
def test_dpse_with_epochs_longer_than_any_horizon_runs(make: Callable[[], Any]) -> None:
    learner = make()
    res = dp.simulate(learner, dp.BernoulliBandit([0.9, 0.5, 0.4]), seeds=2)
    assert np.all(np.isfinite(res.final_regret))


@pytest.mark.parametrize("value", EXTREMES)
@pytest.mark.parametrize("arg", ["alpha", "sigma", "S", "L", "regularizer"])
def test_linucb_confidence_arguments_are_named(arg: str, value: float) -> None:
    if arg == "alpha" and value >= 1:
        value = 1.0 - 1e-16 if value < 1e100 else 0.5
    names = (arg, "S", "L", "sigma", "B_tilde")
    _refusal(lambda: dp.LinUCB(3, 100, **{arg: value}), names)
    if arg != "regularizer":
        _refusal(lambda: dp.JointDPLinUCB(3, 100, 1.0, 0.1, **{arg: value}), names)
        _refusal(lambda: dp.JointDPLinUCB(3, 100, 1.0, 0.1, calibration="tight", **{arg: value}), names)
        _refusal(lambda: dp.JointDPLinUCB(3, 100, 1.0, 0.1, noise="wishart", **{arg: value}), names)


# --- no private learner without its epsilon ------------------------------------------

LEARNERS = [getattr(dp, n) for n in dp.__all__ if inspect.isclass(getattr(dp, n)) and hasattr(getattr(dp, n), "select")]
WITH_EPSILON = [c for c in LEARNERS if "epsilon" in inspect.signature(c).parameters]
ELIMINATION = (dp.EliminationLinearBandit, dp.ContextualEliminationBandit)


@pytest.mark.parametrize("cls", WITH_EPSILON, ids=lambda c: c.__name__)
def test_epsilon_has_no_default(cls: type) -> None:
    p = inspect.signature(cls).parameters["epsilon"]
    if cls in ELIMINATION:
        # Non-private elimination is the explicit privacy=None; a private model needs epsilon.
        assert inspect.signature(cls).parameters["privacy"].default is None
    else:
        assert p.default is inspect.Parameter.empty, f"{cls.__name__}: epsilon defaults to {p.default!r}"


@pytest.mark.parametrize(("make", "name"), [
    (lambda: dp.LocalLinUCB(5, 100), "epsilon"),
    (lambda: dp.ShuffleLinUCB(5, 100), "epsilon"),
    (lambda: dp.DPKLUCB(3, 100), "epsilon"),
    (lambda: dp.PrivateFTRL(3, 100), "epsilon"),
    (lambda: dp.EliminationLinearBandit(np.eye(2), 100, "central"), "epsilon"),
])
def test_a_private_learner_without_epsilon_is_an_error(make: Callable[[], Any], name: str) -> None:
    with pytest.raises((TypeError, ValueError), match=name):
        make()


@pytest.mark.parametrize("make", [
    lambda: dp.LocalLinUCB(5, 100, epsilon=None), lambda: dp.ShuffleLinUCB(5, 100, epsilon=None),
    lambda: dp.PrivateFTRL(3, 100, epsilon=None), lambda: dp.PrivateFTPL(3, 100, epsilon=None),
    lambda: dp.EXP2(3, 100, epsilon=None), lambda: dp.SCRiBLe(3, 100, epsilon=None),
])
def test_epsilon_none_spelled_out_is_not_private_and_says_so(make: Callable[[], Any]) -> None:
    g = make().privacy
    assert not g.is_private and str(g).startswith("not private")


# --- integer arguments ---------------------------------------------------------------


def _minimal(cls: type) -> dict[str, Any]:
    params = inspect.signature(cls).parameters
    kw: dict[str, Any] = {}
    for name, value in {"k": 3, "d": 2, "n": 3, "horizon": 1000, "actions": np.eye(2), "epsilon": 1.0,
                        "delta": 0.1, "rho": 0.5, "thetas": np.eye(2),
                        "context_sampler": lambda rng: np.eye(2)}.items():
        if name in params and params[name].default is inspect.Parameter.empty:
            kw[name] = value
    if "delta" in params and "epsilon" in kw:
        kw["delta"] = 1e-6 if cls is dp.PrivateFTPL else 0.1
    return kw


@pytest.mark.parametrize("cls", [c for c in LEARNERS if "horizon" in inspect.signature(c).parameters],
                         ids=lambda c: c.__name__)
def test_integral_floats_are_accepted_and_kept_as_integers(cls: type) -> None:
    kw = _minimal(cls)
    learner = cls(**{**kw, "horizon": 1000.0, "seed": 7.0})
    assert learner.config["horizon"] == 1000 and type(learner.config["horizon"]) is int
    assert learner.config["seed"] == 7 and type(learner.config["seed"]) is int
    assert "1000.0" not in repr(learner) and "horizon=1000" in repr(learner)
    with pytest.raises(TypeError, match="`horizon`"):
        cls(**{**kw, "horizon": 1000.5})


def test_the_integer_rule_on_ucb1() -> None:
    assert dp.UCB1(3, 1e6).config["horizon"] == 1_000_000
    assert repr(dp.UCB1(3.0, 100)) == "UCB1(k=3, horizon=100)"
    with pytest.raises(TypeError, match="`k`"):
        dp.UCB1(2.5, 100)


# --- rewards are one real number -----------------------------------------------------

NOT_A_REWARD = ["0.5", None, np.array([0.1, 0.2]), [0.5], True]


@pytest.mark.parametrize("bad", NOT_A_REWARD, ids=repr)
@pytest.mark.parametrize("make", [lambda: dp.DPKLUCB(3, 100, 1.0, seed=0), lambda: dp.UCB1(3, 100, seed=0),
                                  lambda: dp.PrivateUCB(3, 100, 1.0, seed=0)])
def test_karmed_update_refuses_what_is_not_a_reward(make: Callable[[], Any], bad: Any) -> None:
    learner = make()
    learner.select()
    with pytest.raises(TypeError, match="`reward`"):
        learner.update(bad)
    assert learner.t == 0


@pytest.mark.parametrize("bad", NOT_A_REWARD, ids=repr)
@pytest.mark.parametrize("make", [
    lambda: (dp.JointDPLinUCB(3, 100, 1.0, 0.1, seed=0), np.eye(3)),
    lambda: (dp.LinUCB(3, 100, seed=0), np.eye(3)),
    lambda: (dp.LocalLinUCB(3, 100, 1.0, 0.1, seed=0), np.eye(3)),
    lambda: (dp.EliminationLinearBandit(np.eye(2), 100, "central", 1.0, seed=0), None),
])
def test_contextual_update_refuses_what_is_not_a_reward(make: Callable[[], Any], bad: Any) -> None:
    learner, actions = make()
    learner.select() if actions is None else learner.select(actions)
    with pytest.raises(TypeError, match="`reward`: expected one real number"):
        learner.update(bad)


def test_reward_scalar() -> None:
    assert reward_scalar("reward", 0.5) == 0.5
    assert reward_scalar("reward", np.float32(0.25)) == 0.25
    assert reward_scalar("reward", np.array(1.0)) == 1.0
    assert reward_scalar("loss", 2) == 2.0
    for bad in NOT_A_REWARD:
        with pytest.raises(TypeError, match="invalid argument `reward`: expected one real number"):
            reward_scalar("reward", bad)
    for bad in (math.nan, math.inf, np.float64("-inf")):
        with pytest.raises(ValueError, match="`reward`: must be finite"):
            reward_scalar("reward", bad)


# --- environments and the namespace --------------------------------------------------


def test_replay_labels_must_cover_their_classes() -> None:
    features = np.full((6, 2), 0.5)
    with pytest.raises(ValueError, match=r"`labels`.*no sample has label 0"):
        ReplayEnv(features, np.array([1, 2, 3, 1, 2, 3]))
    assert ReplayEnv(features, np.array([0, 1, 2, 0, 1, 2])).k == 3


def test_the_namespace_has_no_future_import() -> None:
    assert not hasattr(dp, "annotations")
    public = {n for n in vars(dp) if not n.startswith("_")}
    assert public - set(dp.__all__) <= {"design", "errors", "mechanisms", "privacy", "envs", "learners", "sim",
                                        "sweeps", "noise", "nets", "audit", "checkpoint", "plot", "experiments",
                                        "ledger", "autosave", "serving", "serving_linear", "serving_sampled",
                                        "worker_lifetime", "cli"}, public - set(dp.__all__)


@pytest.mark.parametrize("bad", NOT_A_REWARD, ids=repr)
@pytest.mark.parametrize("make", [lambda: dp.EXP2(3, 100, 1.0, seed=0), lambda: dp.SCRiBLe(3, 100, 1.0, seed=0),
                                  lambda: dp.BatchedPrivateEXP3(3, 100, 1.0, seed=0)])
def test_scalar_loss_update_refuses_what_is_not_a_loss(make: Callable[[], Any], bad: Any) -> None:
    learner = make()
    learner.select()
    with pytest.raises(TypeError, match="`loss`: expected a real number"):
        learner.update(bad)
    assert learner.t == 0


NOT_LOSSES = [["0.5", "0.1", "0.2"], [True, False, True], np.array([1, 0, 1], dtype=bool), [None, 0.1, 0.2],
              np.array(["0.5", "0.1", "0.2"])]


@pytest.mark.parametrize("bad", NOT_LOSSES, ids=repr)
@pytest.mark.parametrize("make", [
    lambda: dp.PrivateFTRL(3, 100, 1.0, seed=0), lambda: dp.PrivateFTPL(3, 100, 1.0, 1e-6, seed=0),
    lambda: dp.PrivateStochasticExperts(3, 100, 1.0, seed=0), lambda: dp.LazyPrivateExperts(3, 100, 1.0, seed=0),
    lambda: dp.PrivateDartboardExperts(3, 100, 1.0, seed=0), lambda: dp.LazyPrivateOCO(3, 100, 1.0, seed=0),
])
def test_loss_vectors_of_non_numbers_are_refused(make: Callable[[], Any], bad: Any) -> None:
    learner = make()
    with pytest.raises(TypeError, match="`losses`: expected real numbers"):
        learner.update(bad)
    assert learner.t == 0
    with pytest.raises(TypeError, match="`losses`: expected real numbers"):
        learner.update_many([bad]) if hasattr(learner, "update_many") else learner.update(bad)
