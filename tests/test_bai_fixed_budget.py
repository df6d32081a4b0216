"""Fixed-budget private best-arm identification (DP-BAI, Chen et al. 2024):
the noise formula, the phases, the Rust simulation against a step-by-step
run, error rates, the K-armed learner as the linear one on the standard
basis, the online protocol with delays, hostile input, checkpoints, and
audits of the exact released phase sums (slow)."""

from __future__ import annotations

import inspect
import math
import pickle
import types
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.errors import CheckpointError, StateError
from dpbandits.learners.bai_fixed_budget import DPBAI, LinearDPBAI, SequentialHalving
from dpbandits.privacy.fixed_budget_bai import phase_mean_laplace_scale, phase_sum_laplace_scale

ARMS = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [0.5, 0.2], [0.2, 0.5], [0.9, 0.1]])
THETA = np.array([0.6, 0.3])


def test_noise_scale_by_hand() -> None:
    # Algorithm 1: Laplace(1 / (eps n)) on the mean of n rewards in [0, 1]
    # is Laplace(1 / eps) on their sum.
    assert phase_sum_laplace_scale(0.5) == 2.0
    assert phase_sum_laplace_scale(4.0) == 0.25
    assert phase_mean_laplace_scale(0.25, 8) == 0.5
    with pytest.raises(ValueError):
        phase_sum_laplace_scale(0.0)


def test_phases_halve_and_use_the_budget() -> None:
    learner = DPBAI(5, 1000, 1.0, seed=0)
    assert learner.phases == 3
    sizes, used = [], 0
    while not learner.finished:
        sizes.append(len(learner.active()))
        q = learner._engine.quotas()
        assert q.max() - q.min() <= 1  # round robin: pulls differ by at most one
        for arm in learner.select_many(int(q.sum())):
            learner.update(int(arm), 1.0 if arm == 0 else 0.0)
            used += 1
    assert sizes == [5, 3, 2]
    assert used == 1000 == learner.samples
    assert learner.recommendation == 0
    with pytest.raises(StateError):
        learner.select()


@pytest.mark.parametrize("make", [
    lambda: DPBAI(4, 600, 1.0, seed=3),
    lambda: DPBAI(4, 600, 1.0, sampler="float", seed=3),
    lambda: LinearDPBAI(ARMS, 900, 1.0, seed=3),
    lambda: SequentialHalving(4, 600, seed=3),
])
def test_simulate_equals_step_by_step(make) -> None:  # type: ignore[no-untyped-def]
    learner = make()
    means = ARMS @ THETA if learner.k == 6 else np.array([0.6, 0.5, 0.45, 0.3])
    runs = learner.simulate(means, reps=4, seed=11)
    for r in range(4):
        twin = learner._replicate(11, r)
        env = _core.BaiBernoulliRewards(list(means), 11, r)
        while not twin.finished:
            arm = twin.select()
            twin.update(arm, env.pull(arm))
        assert twin.recommendation == runs.recommendations[r]
        assert twin.samples == runs.samples[r] == learner.budget


def test_karmed_is_linear_on_the_standard_basis() -> None:
    means = [0.55, 0.5, 0.45, 0.4, 0.35]
    a = DPBAI(5, 3000, 0.5, seed=7).simulate(means, reps=300, seed=2)
    b = LinearDPBAI(np.eye(5), 3000, 0.5, seed=7).simulate(means, reps=300, seed=2)
    assert np.array_equal(a.recommendations, b.recommendations)


def _sd(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-4) / n)


def test_error_falls_with_budget_and_epsilon() -> None:
    # Bernoulli arms 0.5, 0.45, 0.4, 0.35: the error rate over 2,000
    # replicates, compared with thresholds of 4 binomial standard deviations.
    means = [0.5, 0.45, 0.4, 0.35]
    n = 2000
    small = DPBAI(4, 1000, 1.0, seed=0).simulate(means, n, seed=1).error_rate
    large = DPBAI(4, 8000, 1.0, seed=0).simulate(means, n, seed=1).error_rate
    tight = DPBAI(4, 8000, 0.02, seed=0).simulate(means, n, seed=1).error_rate
    free = SequentialHalving(4, 8000, seed=0).simulate(means, n, seed=1).error_rate
    assert small - large > 4 * (_sd(small, n) + _sd(large, n)), (small, large)
    assert tight - large > 4 * (_sd(tight, n) + _sd(large, n)), (tight, large)
    assert large <= free + 4 * (_sd(large, n) + _sd(free, n)) + 0.02  # eps = 1 costs little at T = 8000
    assert tight < 0.75  # better than a uniform guess (3/4 wrong), even at eps = 0.02


def test_linear_pulls_a_max_det_collection() -> None:
    learner = LinearDPBAI(ARMS, 900, 1.0, seed=0)
    pulled = learner.pulled()
    assert len(pulled) == 2  # d = 2 of the 6 arms
    # Every arm is a combination of the collection with coefficients <= 1.
    basis = ARMS[pulled]
    coef = np.linalg.lstsq(basis.T, ARMS.T, rcond=None)[0]
    assert np.all(np.abs(coef) <= 1 + 1e-9)
    runs = LinearDPBAI(ARMS, 9000, 1.0, seed=0).simulate(ARMS @ THETA, 500, seed=4)
    assert runs.error_rate < 0.3  # best arm 2 (0.63) against arm 0 (0.60)
    # A rank-deficient active set pulls its rank: arms on one line.
    line = LinearDPBAI(np.array([[1.0, 1.0], [0.5, 0.5], [0.2, 0.2], [0.9, 0.9]]), 400, 1.0, seed=0)
    assert len(line.pulled()) == 1


def _run(learner, delayed: bool) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    while not learner.finished:
        if not delayed:
            arm = learner.select()
            learner.update(arm, float(rng.random() < 0.2 + 0.2 * arm))
            continue
        arms = learner.select_many(int(learner._engine.remaining))
        rewards = [float(rng.random() < 0.2 + 0.2 * int(x)) for x in arms]
        with pytest.raises(StateError, match="outstanding"):
            learner.select()  # the phase waits for its rewards
        order = np.arange(len(arms))[::-1]  # the rewards arrive in reverse
        learner.update_many(arms[order], np.array(rewards)[order])


def test_delayed_rewards_in_any_order() -> None:
    # Without noise a phase's releases are its sums: the order of arrival
    # within the phase changes nothing.
    a, b = SequentialHalving(4, 400, seed=5), SequentialHalving(4, 400, seed=5)
    _run(a, delayed=False)
    _run(b, delayed=True)
    assert a.recommendation == b.recommendation
    np.testing.assert_array_equal(a.released_means(), b.released_means())
    # With noise the same protocol runs the whole budget.
    c = DPBAI(4, 400, 1.0, seed=5)
    _run(c, delayed=True)
    assert c.samples == 400 and c.recommendation is not None


def test_update_forms_and_refusals() -> None:
    learner = DPBAI(3, 60, 1.0, seed=0)
    arm = learner.select()
    learner.update(0.5)  # the one outstanding selection
    with pytest.raises(StateError):
        learner.update(0.5)  # none outstanding
    with pytest.raises(StateError, match="no outstanding"):
        learner.update(arm, 0.5)
    arm = learner.select()
    for bad in (1.5, -0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="reward"):
            learner.update(arm, bad)
    with pytest.raises(ValueError, match="arm"):
        learner.update(7, 0.5)
    with pytest.raises(TypeError):
        learner.update(True, 0.5)
    with pytest.raises(StateError):
        learner.update_many([arm, arm], [0.1, 0.2])  # one outstanding, two rewards: none recorded
    assert learner.samples == 1
    learner.update(arm, 0.25)
    assert learner.samples == 2


def test_hostile_arguments() -> None:
    with pytest.raises(ValueError, match="k"):
        DPBAI(1, 100, 1.0)
    with pytest.raises(ValueError, match="budget"):
        DPBAI(5, 12, 1.0)  # phase 1 pulls 5 arms, its budget is 4
    with pytest.raises(ValueError, match="epsilon"):
        DPBAI(3, 100, 0.0)
    with pytest.raises(ValueError, match="sampler"):
        DPBAI(3, 100, 1.0, sampler="gauss")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="secure"):
        DPBAI(3, 100, 1.0, sampler="float", secure=True)
    with pytest.raises(TypeError):
        DPBAI(3.5, 100, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="arms"):
        LinearDPBAI(np.ones(3), 100, 1.0)
    with pytest.raises(ValueError, match="arms"):
        LinearDPBAI(np.array([[1.0, np.nan], [0.0, 1.0]]), 100, 1.0)
    with pytest.raises(ValueError, match="arms"):
        LinearDPBAI(np.zeros((3, 2)), 100, 1.0)
    with pytest.raises(ValueError, match="arms"):
        SequentialHalving(3, 100, arms=ARMS)
    with pytest.raises(ValueError, match="means"):
        DPBAI(3, 100, 1.0, seed=0).simulate([0.5, 0.2], 10)
    with pytest.raises(ValueError, match="means"):
        DPBAI(3, 100, 1.0, seed=0).simulate([0.5, 0.2, 1.2], 10)
    with pytest.raises(ValueError, match="secure"):
        DPBAI(3, 100, 1.0, secure=True).simulate([0.5, 0.2, 0.1], 10)


@pytest.mark.parametrize("eps", [0.001, 0.01, 0.1, 1.0, 10.0, 100.0])
def test_privacy_grid(eps: float) -> None:
    learner = DPBAI(3, 10**6, eps, seed=0)
    g = learner.privacy
    assert g.delta == 0.0 and g.epsilon <= eps and g.epsilon > 0.99 * eps
    assert learner.noise_wire[0] == "lattice_laplace"
    assert "Chen, Karthik, Chee & Tan 2024" in g.basis
    assert SequentialHalving(3, 100).privacy.is_private is False


def test_checkpoint_round_trip_fork_and_corruption(tmp_path) -> None:  # type: ignore[no-untyped-def]
    learner = LinearDPBAI(ARMS, 900, 1.0, seed=2)
    rng = np.random.default_rng(1)
    for _ in range(230):
        arm = learner.select()
        learner.update(arm, float(rng.random() < 0.5))
    held = learner.select()  # one outstanding selection
    path = tmp_path / "fb.ckpt"
    learner.save(path)
    replay = LinearDPBAI.load(path, replay=True)
    assert replay.outstanding == [held]
    used = LinearDPBAI.load(path)
    assert used.seed is None  # a restore for use is re-keyed
    for other in (replay, used):
        other.update(held, 1.0)
    learner.update(held, 1.0)
    while not learner.finished:
        arm = learner.select()
        assert arm == replay.select()
        y = float(rng.random() < 0.5)
        learner.update(arm, y)
        replay.update(arm, y)
    assert learner.recommendation == replay.recommendation
    np.testing.assert_array_equal(learner.released_means(), replay.released_means())
    clone = pickle.loads(pickle.dumps(learner))
    assert clone.recommendation == learner.recommendation
    fork = DPBAI(3, 600, 1.0, seed=1)
    f1, f2 = fork.fork(seed=10), fork.fork(seed=11)
    for f in (f1, f2):
        while not f.finished:
            arm = f.select()
            f.update(arm, 0.5)
    assert not np.array_equal(f1.released_means(), f2.released_means())
    # Truncated or bit-flipped engine bytes: a clean refusal, never a crash.
    state = bytes(learner._engine.to_bytes())
    rng = np.random.default_rng(3)
    refused = 0
    for _ in range(600):
        b = bytearray(state)
        i = int(rng.integers(len(b)))
        b[i] ^= 1 << int(rng.integers(8))
        try:
            _core.FixedBudgetBaiEngine.from_bytes(bytes(b))
        except ValueError:
            refused += 1
    assert refused > 0
    with pytest.raises(ValueError):
        _core.FixedBudgetBaiEngine.from_bytes(state[: len(state) // 2])
    (tmp_path / "bad.ckpt").write_bytes(path.read_bytes()[:-9])
    with pytest.raises(CheckpointError):
        LinearDPBAI.load(tmp_path / "bad.ckpt")


def _engine_bound(lr: Any) -> bool:
    cls = type(lr)
    return lr._armed_engine is lr._engine and all(
        type(d := inspect.getattr_static(cls, n)) is types.MethodDescriptorType
        and d.__objclass__ is cls
        and n not in lr.__dict__
        for n in ("select", "update")
    )


def test_online_call_is_the_engines() -> None:
    # select / update are native descriptors of the learner's class that
    # call the engine set on its native base (one Rust call, the lock taken
    # there), also after a pickle round trip and a checkpoint restore; the
    # lock is the engine's.
    learner = DPBAI(3, 60, 1.0, seed=0)
    for lr in (learner, pickle.loads(pickle.dumps(learner))):
        assert _engine_bound(lr)
        assert lr.lock is lr._engine.lock
    assert pickle.loads(pickle.dumps(learner)).lock is not learner.lock
    # The state pickled when the engine was a plain attribute, with the
    # outstanding counts beside it, restores bound.
    arm = learner.select()
    state = pickle.loads(pickle.dumps(learner.__getstate__()))  # its own engine
    state["_engine"] = state.pop("_armed")
    state["_outstanding"] = [int(arm == a) for a in range(3)]
    old = DPBAI.__new__(DPBAI)
    old.__setstate__(state)
    assert _engine_bound(old) and "_outstanding" not in old.__dict__
    assert old.outstanding == [arm]
    old.update(0.5)
    assert old.samples == 1 and learner.samples == 0


def test_online_call_refusals_name_the_value() -> None:
    learner = DPBAI(3, 60, 1.0, seed=0)
    with pytest.raises(StateError, match=r"exactly one outstanding selection, got 0 \(arms \[\]\)"):
        learner.update(0.5)  # nothing outstanding
    with pytest.raises(StateError, match="arm 1 has no outstanding selection: a fixed-budget phase"):
        learner.update(1, 0.5)
    first, second = learner.select(), learner.select()
    with pytest.raises(StateError, match=rf"got 2 \(arms \[{min(first, second)}, {max(first, second)}\]\)"):
        learner.update(0.5)  # two outstanding: the arm must be named
    refusals: list[tuple[tuple[object, ...], type[Exception], str]] = [
        ((7, 0.5), ValueError, r"`arm`: must lie in \[0, 3\), got 7"),
        ((-1, 0.5), ValueError, r"`arm`: must lie in \[0, 3\), got -1"),
        ((10**30, 0.5), ValueError, r"`arm`: must lie in \[0, 3\)"),
        ((np.int64(3), 0.5), ValueError, r"`arm`: must lie in \[0, 3\)"),
        ((True, 0.5), TypeError, "`arm`: expected an integer, got True"),
        ((np.bool_(False), 0.5), TypeError, "`arm`: expected an integer"),
        ((1.0, 0.5), TypeError, "`arm`: expected an integer, got 1.0"),
        (("0", 0.5), TypeError, "`arm`: expected an integer, got '0'"),
        ((None, 0.5), TypeError, "`arm`: expected an integer, got None"),
        ((first, math.nan), ValueError, r"`reward`: must be finite and in \[0, 1\], got nan"),
        ((first, math.inf), ValueError, r"`reward`: must be finite and in \[0, 1\], got inf"),
        ((first, 1.5), ValueError, r"`reward`: must be finite and in \[0, 1\], got 1.5"),
        ((first, -0.1), ValueError, r"got -0.1"),
        ((first, 2), ValueError, r"`reward`: must be finite and in \[0, 1\], got 2"),
        ((first, 10**400), ValueError, r"`reward`: must be finite and in \[0, 1\]"),  # never an OverflowError
        ((first, np.float32(np.nan)), ValueError, "`reward`: must be finite"),
        ((first, True), TypeError, "`reward`: expected a real number, got bool"),
        ((first, "0.5"), TypeError, "`reward`: expected a real number, got str"),
        ((first, None), TypeError, "`reward`: expected a real number, got NoneType"),
        ((first, np.array([0.5])), TypeError, "`reward`: expected a real number"),
        ((), TypeError, "missing 1 required positional argument"),
        ((first, 0.5, 0.5), TypeError, "takes from 1 to 2 positional arguments"),
    ]
    for args, exc, message in refusals:
        with pytest.raises(exc, match=message):
            learner.update(*args)
    for kwargs in ({"arm": first, "reward": 0.5}, {"reward": 0.5}):
        with pytest.raises(TypeError):
            learner.update(*([first] if len(kwargs) == 1 else []), **kwargs)  # positional only
    # Refused calls record nothing.
    assert (learner.t, learner.samples, sorted(learner.outstanding)) == (2, 0, sorted([first, second]))
    # Other real numbers are rewards: a NumPy scalar, an int, a fraction.
    from fractions import Fraction

    learner.update(np.int64(first), np.float32(0.25))
    learner.update(second, Fraction(1, 2))
    arm = learner.select()
    learner.update(1)
    assert (learner.samples, learner.outstanding) == (3, [])
    with pytest.raises(StateError, match="no outstanding"):
        learner.update(arm, 0)


def test_public_call_equals_the_engine_call() -> None:
    # The bound online call and the engine's own select / observe give the
    # same run, sample for sample (one engine, one protocol).
    for make in (lambda: DPBAI(5, 400, 1.0, seed=8), lambda: LinearDPBAI(ARMS, 600, 1.0, sampler="float", seed=8)):
        a, b = make(), make()
        rng = np.random.default_rng(2)
        while not a.finished:
            y = float(rng.random())
            arm = a.select()
            a.update(y) if a.t % 2 else a.update(arm, y)
            e = b._engine
            assert e.select() == arm
            e.observe(arm, y)
        assert b.finished and a.recommendation == b.recommendation
        np.testing.assert_array_equal(a.released_means(), b.released_means())


def test_threads_share_a_learner_without_losing_a_reward() -> None:
    # 8 threads call select and update(arm, reward) on one learner with no
    # lock of their own: every call takes the learner's lock once, so no
    # reward is lost or counted twice. A thread that finds the phase
    # waiting for the others' rewards retries. Without noise and with a
    # reward fixed by the arm, the run equals the one-thread run.
    import threading

    def reward(arm: int) -> float:
        return (arm + 1) / 8

    learner, alone = SequentialHalving(6, 600, seed=4), SequentialHalving(6, 600, seed=4)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        try:
            barrier.wait()
            while not learner.finished:
                try:
                    arm = learner.select()
                except StateError:
                    continue  # the phase waits for another thread's reward, or the budget is used
                learner.update(arm, reward(arm))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors, errors
    while not alone.finished:
        arm = alone.select()
        alone.update(arm, reward(arm))
    assert learner.t == learner.samples == 600 and learner.outstanding == []
    assert learner.recommendation == alone.recommendation == 5
    np.testing.assert_array_equal(learner.released_means(), alone.released_means())
    np.testing.assert_array_equal(learner.pulls(), alone.pulls())


def test_checkpoint_outstanding_selections_must_match_the_engine(tmp_path) -> None:  # type: ignore[no-untyped-def]
    learner = DPBAI(3, 60, 1.0, seed=1)
    held = [learner.select(), learner.select()]
    learner._restore_extra({"outstanding": [int(c) for c in learner._engine.outstanding_by_arm()]})
    counts = [0, 0, 0]
    for a in held:
        counts[a] += 1
    assert learner._checkpoint_extra() == {"outstanding": counts}
    moved = counts[1:] + counts[:1]  # the same number, other arms
    with pytest.raises(CheckpointError, match="outstanding"):
        learner._restore_extra({"outstanding": moved})
    learner.save(tmp_path / "a.ckpt")
    restored = DPBAI.load(tmp_path / "a.ckpt", replay=True)
    assert sorted(restored.outstanding) == sorted(held)
    for a in held:
        restored.update(a, 0.5)
    assert restored.samples == 2


def test_top_level_exports() -> None:
    assert dp.DPBAI is DPBAI and dp.LinearDPBAI is LinearDPBAI and dp.SequentialHalving is SequentialHalving


# ---------------------------------------------------------------------------
# Audits of the exact released phase sums (slow)

AUDIT_N = 1_000_000
REWARDS = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]


def _phase_release(engine, round_: int):  # type: ignore[no-untyped-def]
    """Neighbouring reward sequences differ in observation ``round_`` (0 vs
    1); the output is the released phase sum holding it."""

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        r = list(REWARDS)
        r[round_] = float(side)
        return np.nan_to_num(engine._audit_runs(r, round_, count, seed), nan=-1e9)

    return mechanism


@pytest.mark.slow
@pytest.mark.parametrize("linear", [False, True])
def test_audit_released_phase_sums(linear: bool) -> None:
    # Budget 24 over 2 phases: phase 1 pulls 3 arms 4 times (K-armed) or a
    # 2-arm collection 6 times (linear), so the 12 audited rewards close it.
    learner = LinearDPBAI(ARMS[:3], 24, 1.0, seed=0) if linear else DPBAI(3, 24, 1.0, seed=0)
    g = learner.privacy
    res = audit(_phase_release(learner._engine, 4), epsilon=g.epsilon, delta=g.delta, n=AUDIT_N, seed=1)
    print(f"[audit] linear={linear}: {res}")
    assert res.epsilon_lower_bound <= g.epsilon
    assert res.epsilon_lower_bound > 0.5 * g.epsilon  # the audit sees the release (not vacuous)


@pytest.mark.slow
def test_audit_flags_half_noise() -> None:
    learner = DPBAI(3, 24, 1.0, seed=0)
    kind, steps, exponent = learner.noise_wire  # type: ignore[misc]
    buggy = _core.FixedBudgetBaiEngine(3, 24, noise=(kind, max(1, int(steps) // 2), exponent), seed=0)
    res = audit(_phase_release(buggy, 4), epsilon=1.0, n=AUDIT_N, seed=2)
    print(f"[audit] half noise: {res}")
    assert res.epsilon_lower_bound > 1.0


def test_experiment_quick_run_writes_figure_and_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import csv

    from dpbandits import cli
    from dpbandits.experiments import experiments

    name = "private-bai-fixed-budget"
    assert name in experiments()
    assert cli.main(["reproduce", name, "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    folder = tmp_path / name
    assert (folder / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (folder / f"{name}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["learner"] for r in rows} == {"eps=0.1", "eps=1", "eps=10", "non-private"}
    assert {r["instance"] for r in rows} == {"I1", "H", "linear"}
    for r in rows:
        assert 0.0 <= float(r["error_rate"]) <= 1.0
