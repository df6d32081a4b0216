"""Losses of decisions served by the sampled policies, fed back to the
learner with ``update(..., policy_version=v)``: worker processes serve
EXP2's and SCRiBLe's policies while one process consumes the losses, and
the result equals a single-process run given the same losses at the same
refresh points; the estimate reads the served version's released state;
batched EXP3 takes served pulls while their batch runs; batched
elimination refuses them, saying why."""

from __future__ import annotations

import multiprocessing as mp
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpbandits as dp

EPOCHS, PER_EPOCH, WORKERS = 8, 30, 3


def _loss(rid: int, decision: Any) -> float:
    """A deterministic loss of request ``rid``'s decision (an arm or a point)."""
    rng = np.random.default_rng(rid)
    if np.ndim(decision) == 0:
        return float(rng.uniform() * (0.3 if int(decision) == 0 else 1.0))
    y = np.asarray(decision)
    direction = rng.normal(size=y.shape)
    return float(np.dot(direction / np.linalg.norm(direction), y))


def _decide(policy: Any, rid: int) -> Any:
    """Request ``rid``'s decision from ``policy`` (its generator keyed by the request)."""
    policy.reseed(rid)
    return policy.select()


def _serve(tasks: Any, results: Any) -> None:
    while True:
        job = tasks.get()
        if job is None:
            return
        policy, requests = job
        for rid in requests:
            d = _decide(policy, rid)
            results.put((rid, d, _loss(rid, d), policy.version))


MAKERS = {
    "EXP2": lambda: dp.EXP2(4, 10_000, 1.0, seed=3),
    "SCRiBLe": lambda: dp.SCRiBLe(3, 10_000, 1.0, seed=3),
}


def _state(learner: Any) -> bytes:
    return bytes(learner._engine.to_bytes())


@pytest.mark.parametrize("name", list(MAKERS))
def test_worker_processes_serve_and_one_process_consumes_the_losses(name: str) -> None:
    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    tasks = [ctx.Queue() for _ in range(WORKERS)]
    results = ctx.Queue()
    procs = [ctx.Process(target=_serve, args=(tasks[w], results), daemon=True) for w in range(WORKERS)]
    for p in procs:
        p.start()
    learner = MAKERS[name]()
    versions, served = [], []
    try:
        rid = 0
        for _ in range(EPOCHS):
            policy = learner.policy()  # the refresh point
            versions.append(policy.version)
            requests = list(range(rid, rid + PER_EPOCH))
            rid += PER_EPOCH
            for w in range(WORKERS):
                tasks[w].put((policy, requests[w::WORKERS]))
            got = sorted((results.get(timeout=60) for _ in range(PER_EPOCH)), key=lambda g: g[0])
            assert all(v == policy.version for *_, v in got)
            for r, d, y, v in got:  # the consumer, in request order
                learner.update(d, y, policy_version=v)
                served.append((r, d))
    finally:
        for q in tasks:
            q.put(None)
        for p in procs:
            p.join(timeout=30)
    assert [r for r, _ in served] == list(range(EPOCHS * PER_EPOCH)) and learner.t == EPOCHS * PER_EPOCH
    # One process: the same decisions and losses at the same refresh points.
    replay = MAKERS[name]()
    for e in range(EPOCHS):
        policy = replay.policy()
        assert policy.version == versions[e]
        for r in range(e * PER_EPOCH, (e + 1) * PER_EPOCH):
            d = _decide(policy, r)
            assert np.array_equal(d, served[r][1])
            replay.update(d, _loss(r, d), policy_version=policy.version)
    assert _state(replay) == _state(learner)
    assert len({policy.version for policy in [learner.policy()]} | set(versions)) == EPOCHS + 1


def test_exp2_weights_a_served_loss_by_the_served_probability() -> None:
    # The same loss of the same arm, given against version 0's p and against
    # the current p, moves the weights differently, as 1 / p_v(arm) says;
    # against version 0 it equals the learner's own round played at p_0.
    a, b, own = dp.EXP2(4, 1000, None, seed=0), dp.EXP2(4, 1000, None, seed=0), dp.EXP2(4, 1000, None, seed=0)
    p0 = a.policy()
    for lr in (a, b, own):
        lr._engine.observe(1, 0.9)  # one round: p moves
    b.policy()
    a.update(2, 0.5, policy_version=p0.version)
    b.update(2, 0.5, policy_version=b.policy_version)
    assert not np.array_equal(a.probabilities(), b.probabilities())
    # Non-private (no noise): the estimate 0.5 / p_0(2) by hand.
    q = np.log(own.probabilities() - own.gamma / 4)  # log of (1 - gamma) q_t
    q[2] -= own.eta * 0.5 / p0.probabilities[2]
    w = np.exp(q - q.max())
    expected = (1 - own.gamma) * w / w.sum() + own.gamma / 4
    assert np.allclose(a.probabilities(), expected, rtol=1e-9, atol=1e-12)


def test_served_feedback_is_checked_and_survives_checkpoints(tmp_path: Path) -> None:
    lr = dp.EXP2(4, 1000, 1.0, seed=0)
    with pytest.raises(ValueError, match="version 0 was not served"):
        lr.update(0, 0.5, policy_version=0)
    policy = lr.policy()
    with pytest.raises(ValueError, match="arm"):
        lr.update(9, 0.5, policy_version=policy.version)
    with pytest.raises(TypeError, match="policy_version"):
        lr.update(0, 0.5, policy_version="0")
    with pytest.raises(TypeError, match="served arm"):
        lr.update(0.5, policy_version=policy.version)
    own = lr.select()  # the learner's own selection stays outstanding
    lr.update(policy.select(), 0.5, policy_version=policy.version)
    assert lr.outstanding == [own]
    lr.update(0.25)
    lr.save(tmp_path / "c.ckpt")
    restored = dp.EXP2.load(tmp_path / "c.ckpt", replay=True)
    restored.update(1, 0.5, policy_version=policy.version)
    lr.update(1, 0.5, policy_version=policy.version)
    assert _state(restored) == _state(lr)
    twin = pickle.loads(pickle.dumps(lr))
    twin.update(1, 0.5, policy_version=policy.version)
    # SCRiBLe: a point the served policy does not serve is refused.
    s = dp.SCRiBLe(3, 1000, 1.0, seed=0)
    sp = s.policy()
    with pytest.raises(ValueError, match="not a point the policy"):
        s.update(np.array([0.1, 0.0, 0.0]), 0.05, policy_version=sp.version)
    s.update(sp.select(), 0.05, policy_version=sp.version)
    assert s.t == 1


def test_batched_exp3_takes_served_pulls_while_their_batch_runs() -> None:
    lr = dp.BatchedPrivateEXP3(3, 1000, 1.0, batch=4, seed=0)
    twin = dp.BatchedPrivateEXP3(3, 1000, 1.0, batch=4, seed=0)
    policy = lr.policy()
    for _ in range(3):
        lr.update(policy.arm, 0.5, policy_version=policy.version)
        twin.select()
        twin.update(0.5)
    assert _state(lr) == _state(twin)
    with pytest.raises(ValueError, match="plays arm"):
        lr.update((policy.arm + 1) % 3, 0.5, policy_version=policy.version)
    lr.update(policy.arm, 0.5, policy_version=policy.version)  # the batch's last round: it ends
    with pytest.raises(ValueError, match="has ended"):
        lr.update(policy.arm, 0.5, policy_version=policy.version)


def test_elimination_refuses_served_rewards_and_says_why() -> None:
    actions = np.eye(3)
    lr = dp.EliminationLinearBandit(actions, 1000, "central", 1.0, seed=0)
    policy = lr.policy()
    with pytest.raises(ValueError, match="n_ia times"):
        lr.update(policy.select(), 0.5, policy_version=policy.version)
    assert lr.t == 0
