"""Shared drivers for the K-armed, contextual, elimination and online-learning
learners: a constructor per class and one deterministic round (select, then
update with a reward/loss that depends only on (t, choice)), returning the
decision and the released statistic the learner exposes (bytes, so equal
means bit-identical)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpbandits.learners.bai import CTBTT, AdaPTT, AdaPTTStar, DPTopTwo, TopTwoBAI
from dpbandits.learners.bai_fixed_budget import DPBAI, LinearDPBAI, SequentialHalving
from dpbandits.learners.elimination import ContextualEliminationBandit, EliminationLinearBandit
from dpbandits.learners.linucb_trust import LocalLinUCB, ShuffleLinUCB
from dpbandits.learners.logistic import (
    JointDPReweightedLogisticUCB,
    LocalDPReweightedLogisticUCB,
    LogisticThompsonSampling,
    LogisticUCB,
    ReweightedLogisticUCB,
)
from dpbandits.learners.mab import UCB1, PrivateThompsonSampling, PrivateUCB, ThompsonSampling
from dpbandits.learners.mishra_thakurta import PrivateContextualThompsonSampling, PrivateContextualUCB
from dpbandits.learners.online_learning import EXP2, PrivateFTPL, PrivateFTRL, SCRiBLe
from dpbandits.learners.private_experts import (
    BatchedPrivateEXP3,
    LazyPrivateExperts,
    LazyPrivateOCO,
    PrivateDartboardExperts,
    PrivateStochasticExperts,
)

K, D = 3, 2
#: The fixed-budget learners: they release at their phases' ends and need
#: a budget of at least one pull per arm and phase (6 here).
FIXED_BUDGET = ("DPBAI", "LinearDPBAI", "SequentialHalving")
ACTIONS = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6], [-0.5, 0.5]])


def _u(t: int, i: int, lo: float = 0.0, hi: float = 1.0) -> float:
    return float(np.random.default_rng([17, t, i]).uniform(lo, hi))


def _context_sampler(rng: np.random.Generator) -> np.ndarray:
    x = rng.normal(size=(3, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _ctx(t: int) -> np.ndarray:
    return _context_sampler(np.random.default_rng([19, t]))


def _karmed_step(lr: Any, t: int) -> tuple[Any, bytes]:
    i = lr.select()
    lr.update(_u(t, i))
    return i, lr.released_sums().tobytes()


def _bai_step(lr: Any, t: int) -> tuple[Any, bytes]:
    i = lr.select()
    lr.update(i, float(_u(t, i) < 0.3 + 0.2 * i))  # Bernoulli rewards, as the stopping rules assume
    return i, np.asarray(lr.released_means(), dtype=np.float64).tobytes()


def _contextual_step(lr: Any, t: int) -> tuple[Any, bytes]:
    ds = _ctx(t)
    i = lr.select(ds)
    lr.update(_u(t, i))
    a, b = lr.released()
    return i, np.asarray(a).tobytes() + np.asarray(b).tobytes()


def _trust_step(lr: Any, t: int) -> tuple[Any, bytes]:
    i = lr.select(_ctx(t))
    lr.update(_u(t, i, -1.0, 1.0))
    return i, lr.released_sums().tobytes()


def _logistic_step(lr: Any, t: int) -> tuple[Any, bytes]:
    i = lr.select(_ctx(t))
    lr.update(float(_u(t, i) < 0.5))
    return i, lr.theta.tobytes()


def _elim_step(lr: Any, t: int) -> tuple[Any, bytes]:
    i = lr.select()
    lr.update(_u(t, i, -1.0, 1.0))
    return i, lr.active.tobytes()


def _celim_step(lr: Any, t: int) -> tuple[Any, bytes]:
    i = lr.select(_ctx(t))
    lr.update(_u(t, i, -1.0, 1.0))
    return i, lr.linear.active.tobytes()


def _ftl_step(lr: Any, t: int) -> tuple[Any, bytes]:
    x = lr.decision()
    i = lr.select()
    lr.update(np.random.default_rng([23, t]).uniform(0.0, 1.0, size=K))
    return i, x.tobytes()


def _exp2_step(lr: Any, t: int) -> tuple[Any, bytes]:
    p = lr.probabilities()
    i = lr.select()
    lr.update(_u(t, i))
    return i, p.tobytes()


def _experts_step(lr: Any, t: int) -> tuple[Any, bytes]:
    i = lr.select()
    lr.update(np.random.default_rng([31, t]).uniform(0.0, 1.0, size=K))
    return i, np.int64(i).tobytes()


def _ball_step(lr: Any, t: int) -> tuple[Any, bytes]:
    x = lr.decision()
    lt = np.random.default_rng([37, t]).normal(size=K)
    lr.update(lt / max(1.0, float(np.linalg.norm(lt))))
    return x.tobytes(), x.tobytes()


def _scrible_step(lr: Any, t: int) -> tuple[Any, bytes]:
    y = lr.select()
    lt = np.random.default_rng([29, t]).normal(size=y.shape[0])
    lt /= max(1.0, float(np.linalg.norm(lt)))
    lr.update(float(lt @ y))
    return y.tobytes(), lr.iterate().tobytes()


#: name -> (make(horizon, seed), step(learner, t))
DRIVERS: dict[str, tuple[Callable[[int, int | None], Any], Callable[[Any, int], tuple[Any, bytes]]]] = {
    "UCB1": (lambda h, s: UCB1(K, h, seed=s), _karmed_step),
    "ThompsonSampling": (lambda h, s: ThompsonSampling(K, h, seed=s), _karmed_step),
    "PrivateUCB": (lambda h, s: PrivateUCB(K, h, 1.0, seed=s), _karmed_step),
    "PrivateThompsonSampling": (
        lambda h, s: PrivateThompsonSampling(K, h, 1.0, gap_estimation=False, seed=s), _karmed_step),
    "PrivateContextualUCB": (lambda h, s: PrivateContextualUCB(D, h, 1.0, seed=s), _contextual_step),
    "PrivateContextualThompsonSampling": (
        lambda h, s: PrivateContextualThompsonSampling(D, h, 1.0, seed=s), _contextual_step),
    "EliminationLinearBandit": (
        lambda h, s: EliminationLinearBandit(ACTIONS, h, "central", 1.0, seed=s), _elim_step),
    "ContextualEliminationBandit": (
        lambda h, s: ContextualEliminationBandit(ACTIONS, _context_sampler, h, "local", 1.0, n_samples=50,
                                                 seed=s), _celim_step),
    "PrivateFTRL": (lambda h, s: PrivateFTRL(K, h, 1.0, seed=s), _ftl_step),
    "PrivateFTPL": (lambda h, s: PrivateFTPL(K, h, 1.0, 1e-3, seed=s), _ftl_step),
    "EXP2": (lambda h, s: EXP2(K, h, 1.0, seed=s), _exp2_step),
    "SCRiBLe": (lambda h, s: SCRiBLe(K, h, 1.0, seed=s), _scrible_step),
    "LocalLinUCB": (lambda h, s: LocalLinUCB(D, h, 1.0, 0.1, seed=s), _trust_step),
    "LogisticUCB": (lambda h, s: LogisticUCB(D, h, seed=s), _logistic_step),
    "LogisticThompsonSampling": (lambda h, s: LogisticThompsonSampling(D, h, seed=s), _logistic_step),
    "ReweightedLogisticUCB": (lambda h, s: ReweightedLogisticUCB(D, h, first_epoch=min(h, 5), seed=s), _logistic_step),
    "JointDPReweightedLogisticUCB": (
        lambda h, s: JointDPReweightedLogisticUCB(D, h, 1.0, 1e-6, first_epoch=min(h, 5), seed=s), _logistic_step),
    "LocalDPReweightedLogisticUCB": (
        lambda h, s: LocalDPReweightedLogisticUCB(D, h, 1.0, 1e-6, first_epoch=min(h, 5), seed=s), _logistic_step),
    "ShuffleLinUCB": (lambda h, s: ShuffleLinUCB(D, h, 1.0, 0.1, batch_size=min(h, 4), seed=s), _trust_step),
    "PrivateStochasticExperts": (lambda h, s: PrivateStochasticExperts(K, h, 1.0, seed=s), _experts_step),
    "LazyPrivateExperts": (lambda h, s: LazyPrivateExperts(K, h, 4.0, seed=s), _experts_step),
    "PrivateDartboardExperts": (lambda h, s: PrivateDartboardExperts(K, h, 4.0, seed=s), _experts_step),
    "LazyPrivateOCO": (lambda h, s: LazyPrivateOCO(K, h, 4.0, seed=s), _ball_step),
    "BatchedPrivateEXP3": (lambda h, s: BatchedPrivateEXP3(K, h, 1.0, seed=s), _exp2_step),
    # Best-arm identification: the sample cap max_samples plays the
    # horizon; small first batches so that releases happen within the
    # drivers' windows.
    "TopTwoBAI": (lambda h, s: TopTwoBAI(K, 0.01, max_samples=h, seed=s), _bai_step),
    "DPTopTwo": (lambda h, s: DPTopTwo(K, 0.01, 1.0, first_batch=4.0, max_samples=h, seed=s), _bai_step),
    "AdaPTT": (lambda h, s: AdaPTT(K, 0.01, 1.0, max_samples=h, seed=s), _bai_step),
    "AdaPTTStar": (lambda h, s: AdaPTTStar(K, 0.01, 1.0, max_samples=h, seed=s), _bai_step),
    "CTBTT": (lambda h, s: CTBTT(K, 0.01, 1.0, max_samples=h, seed=s), _bai_step),
    # Fixed-budget best-arm identification: the budget plays the horizon.
    "DPBAI": (lambda h, s: DPBAI(K, h, 1.0, seed=s), _bai_step),
    "LinearDPBAI": (lambda h, s: LinearDPBAI(ACTIONS, h, 1.0, seed=s), _bai_step),
    "SequentialHalving": (lambda h, s: SequentialHalving(K, h, seed=s), _bai_step),
}
