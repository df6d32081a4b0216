"""Every private learner at every (epsilon, delta) a user may ask, with the
default lattice noise.

The grid: epsilon in {0.01, 0.1, 1, 10}, delta in {1e-3, 1e-6, 1e-9, 1e-12}
(for the learners that take a delta), horizon 1e3 and 1e6 (1,000 rounds
run) and 1e9 (construction). Each learner must construct without error
and report a guarantee no weaker than what was asked: epsilon (or rho) at
most the request, delta at most the request.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpbandits as dp

EPSILONS = (0.01, 0.1, 1.0, 10.0)
DELTAS = (1e-3, 1e-6, 1e-9, 1e-12)
RUN_HORIZONS = (10**3, 10**6)
ROUNDS = 1000
D = 2
ACTIONS = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])


def _contexts(rng: np.random.Generator) -> np.ndarray:
    x = rng.normal(size=(3, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _karmed(lr: Any, rng: np.random.Generator) -> None:
    i = lr.select()
    lr.update(float(rng.random() < 0.3 + 0.2 * i))


def _contextual(lr: Any, rng: np.random.Generator) -> None:
    lr.select(_contexts(rng))
    lr.update(float(rng.uniform(-1.0, 1.0)))


def _binary_contextual(lr: Any, rng: np.random.Generator) -> None:
    lr.select(_contexts(rng))
    lr.update(float(rng.random() < 0.5))  # the logistic learners' rewards lie in [0, 1]


def _elimination(lr: Any, rng: np.random.Generator) -> None:
    lr.select()
    lr.update(float(rng.uniform(-1.0, 1.0)))


def _contextual_elimination(lr: Any, rng: np.random.Generator) -> None:
    lr.select(_contexts(rng))
    lr.update(float(rng.uniform(-1.0, 1.0)))


def _losses(lr: Any, rng: np.random.Generator) -> None:
    lr.select()
    lr.update(rng.uniform(0.0, 1.0, size=3))


def _bandit_loss(lr: Any, rng: np.random.Generator) -> None:
    lr.select()
    lr.update(float(rng.uniform(0.0, 1.0)))


def _scrible(lr: Any, rng: np.random.Generator) -> None:
    y = lr.select()
    loss = rng.normal(size=y.shape[0])
    lr.update(float(loss @ y / max(1.0, float(np.linalg.norm(loss)))))


Make = Callable[[float, float, int], Any]
Step = Callable[[Any, np.random.Generator], None]

#: name -> (make(epsilon, delta, horizon), step, takes delta)
LEARNERS: dict[str, tuple[Make, Step, bool]] = {
    "JointDPLinUCB gaussian paper": (lambda e, d, n: dp.JointDPLinUCB(D, n, e, d), _contextual, True),
    "JointDPLinUCB gaussian tight": (
        lambda e, d, n: dp.JointDPLinUCB(D, n, e, d, calibration="tight"), _contextual, True),
    "JointDPLinUCB gaussian tight smooth-binary": (
        lambda e, d, n: dp.JointDPLinUCB(D, n, e, d, calibration="tight", counter="smooth-binary"), _contextual,
        True),
    "JointDPLinUCB gaussian tight blt": (
        lambda e, d, n: dp.JointDPLinUCB(D, n, e, d, calibration="tight", counter="blt"), _contextual, True),
    "JointDPLinUCB gaussian epoch": (
        lambda e, d, n: dp.JointDPLinUCB(D, n, e, d, calibration="tight", counter="epoch"), _contextual, True),
    "JointDPLinUCB wishart": (lambda e, d, n: dp.JointDPLinUCB(D, n, e, d, noise="wishart"), _contextual, True),
    "JointDPReweightedLinUCB": (
        lambda e, d, n: dp.JointDPReweightedLinUCB(D, n, e, d, first_epoch=3), _contextual, True),
    "JointDPReweightedLogisticUCB": (
        lambda e, d, n: dp.JointDPReweightedLogisticUCB(D, n, e, d, first_epoch=3), _binary_contextual, True),
    "LocalDPReweightedLogisticUCB": (
        lambda e, d, n: dp.LocalDPReweightedLogisticUCB(D, n, e, d, first_epoch=3), _binary_contextual, True),
    "LocalLinUCB gaussian": (lambda e, d, n: dp.LocalLinUCB(D, n, e, d), _contextual, True),
    "LocalLinUCB laplace": (lambda e, d, n: dp.LocalLinUCB(D, n, e, noise="laplace"), _contextual, False),
    "ShuffleLinUCB vector-sum": (lambda e, d, n: dp.ShuffleLinUCB(D, n, e, d), _contextual, True),
    "ShuffleLinUCB amplification": (
        lambda e, d, n: dp.ShuffleLinUCB(D, n, e, d, protocol="amplification"), _contextual, True),
    "EliminationLinearBandit central": (
        lambda e, d, n: dp.EliminationLinearBandit(ACTIONS, n, "central", e), _elimination, False),
    "EliminationLinearBandit local": (
        lambda e, d, n: dp.EliminationLinearBandit(ACTIONS, n, "local", e), _elimination, False),
    "EliminationLinearBandit shuffle": (
        lambda e, d, n: dp.EliminationLinearBandit(ACTIONS, n, "shuffle", e, d), _elimination, True),
    "ContextualEliminationBandit central": (
        lambda e, d, n: dp.ContextualEliminationBandit(ACTIONS, _contexts, n, "central", e, n_samples=50),
        _contextual_elimination, False),
    "PrivateContextualUCB": (lambda e, d, n: dp.PrivateContextualUCB(D, n, e), _contextual, False),
    "PrivateContextualThompsonSampling": (
        lambda e, d, n: dp.PrivateContextualThompsonSampling(D, n, e), _contextual, False),
    "PrivateFTPL": (lambda e, d, n: dp.PrivateFTPL(3, n, e, d), _losses, True),
    "PrivateFTPL blt": (lambda e, d, n: dp.PrivateFTPL(3, n, e, d, counter="blt"), _losses, True),
    "PrivateFTRL": (lambda e, d, n: dp.PrivateFTRL(3, n, e), _losses, False),
    "EXP2": (lambda e, d, n: dp.EXP2(3, n, e), _bandit_loss, False),
    "SCRiBLe": (lambda e, d, n: dp.SCRiBLe(3, n, e), _scrible, False),
    "PrivateUCB": (lambda e, d, n: dp.PrivateUCB(3, n, e), _karmed, False),
    "PrivateUCB tight": (lambda e, d, n: dp.PrivateUCB(3, n, e, calibration="tight"), _karmed, False),
    "PrivateThompsonSampling": (lambda e, d, n: dp.PrivateThompsonSampling(3, n, e), _karmed, False),
    "DPKLUCB": (lambda e, d, n: dp.DPKLUCB(3, n, e), _karmed, False),
    "DPIMED": (lambda e, d, n: dp.DPIMED(3, n, e), _karmed, False),
    "DPSE": (lambda e, d, n: dp.DPSE(3, n, e), _karmed, False),
    "DPTS": (lambda e, d, n: dp.DPTS(3, n, e), _karmed, False),
    "AdaPUCB": (lambda e, d, n: dp.AdaPUCB(3, n, e), _karmed, False),
    "AdaPKLUCB": (lambda e, d, n: dp.AdaPKLUCB(3, n, e), _karmed, False),
    # zCDP learners: the third argument is rho; delta converts it to (epsilon, delta).
    "AdaCUCB": (lambda e, d, n: dp.AdaCUCB(3, n, e, delta=d), _karmed, True),
    "AdaCKLUCB": (lambda e, d, n: dp.AdaCKLUCB(3, n, e, delta=d), _karmed, True),
}
RHO_LEARNERS = {"AdaCUCB", "AdaCKLUCB"}


def _cells(name: str, horizons: tuple[int, ...]) -> list[tuple[float, float, int]]:
    takes_delta = LEARNERS[name][2]
    deltas = DELTAS if takes_delta else (1e-6,)
    return list(itertools.product(EPSILONS, deltas, horizons))


def _make(name: str, epsilon: float, delta: float, horizon: int) -> Any:
    with warnings.catch_warnings():
        # PrivateThompsonSampling warns (LinearRegretWarning) when its gap
        # estimation outlasts a short horizon at small epsilon: a warning, not a refusal.
        warnings.simplefilter("ignore")
        return LEARNERS[name][0](epsilon, delta, horizon)


def _assert_guarantee(name: str, learner: Any, epsilon: float, delta: float) -> None:
    g = learner.privacy
    if name in RHO_LEARNERS:
        assert g.rho is not None and g.rho <= epsilon
    else:
        assert g.epsilon <= epsilon * (1 + 1e-12), (name, g)
    if LEARNERS[name][2]:
        assert g.delta <= delta, (name, g)
    else:
        assert g.delta == 0.0 or g.delta <= 1e-6, (name, g)


@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_cell_of_the_grid_constructs_and_runs(name: str) -> None:
    step = LEARNERS[name][1]
    for epsilon, delta, horizon in _cells(name, RUN_HORIZONS):
        learner = _make(name, epsilon, delta, horizon)
        _assert_guarantee(name, learner, epsilon, delta)
        rng = np.random.default_rng([7, horizon, int(epsilon * 100), int(-np.log10(delta))])
        for _ in range(ROUNDS):
            step(learner, rng)


#: A Toeplitz (BLT) counter rounds every one of its T encoded entries to the
#: lattice, an allowance of 1.5 g sqrt(T entries) on the sensitivity
#: (dpbandits.privacy.factorization, F4). At T = 1e9 and epsilon = 0.01 no
#: lattice the exact sampler supports (sigma <= 2^24 steps) holds it; the
#: refusal names the argument the user passed and the smallest value that works.
BLT_REFUSED_AT_A_BILLION = {
    "JointDPLinUCB gaussian tight blt": {(0.01, 1e-6), (0.01, 1e-9), (0.01, 1e-12)},
    "PrivateFTPL blt": {(0.01, 1e-9), (0.01, 1e-12)},
}


@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_cell_of_the_grid_constructs_at_a_billion_rounds(name: str) -> None:
    refused = BLT_REFUSED_AT_A_BILLION.get(name, set())
    for epsilon, delta, horizon in _cells(name, (10**9,)):
        if (epsilon, delta) in refused:
            with pytest.raises(ValueError, match=r"invalid argument `epsilon`: 0\.01 .* epsilon >= 0\.\d+ works"):
                _make(name, epsilon, delta, horizon)
            continue
        learner = _make(name, epsilon, delta, horizon)
        _assert_guarantee(name, learner, epsilon, delta)
