"""LinUCB in the local and shuffle models.

- the formulas of dpbandits.privacy.linucb_trust against hand-computed values
  (Eqs. (LT2)-(LT7)), and the sensitivity of Eq. (LT2) attained and never
  exceeded on random inputs;
- with noise off, LocalLinUCB plays as LinUCB decision for decision, and
  ShuffleLinUCB as a NumPy re-implementation of the batched schedule;
- the learners' noise scales equal the formulas' (hand values), the
  guarantee names the model, checkpoints verify the engine at load, fork
  reseeds, simulate / sweep run, bad input names the argument;
- slow audits (>= 1e6 per side): the local randomizer's reports and the
  shuffle protocol's analyzer output, each with a planted bug flagged.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.audit import audit
from dpbandits.errors import CheckpointError
from dpbandits.learners import LinUCB, LocalLinUCB, ShuffleLinUCB
from dpbandits.privacy.analytic_gaussian import analytic_gaussian_sigma
from dpbandits.privacy.linucb_trust import (
    classical_gaussian_sigma,
    local_laplace_scale,
    report_dimension,
    report_l1_sensitivity,
    report_l2_sensitivity,
    report_range,
    shuffle_batch_size,
    trust_radius,
    vector_sum_coordinate_budget,
)
from dpbandits.privacy.shuffle import shuffle_local_epsilon

# --- formulas ---------------------------------------------------------------------------------


def test_report_dimension_and_sensitivities_equal_hand_values() -> None:
    assert report_dimension(5) == 20 and report_dimension(1) == 2
    assert report_l2_sensitivity(1.0, 1.0) == pytest.approx(2.1213203435596424, rel=1e-15)  # sqrt(4.5)
    assert report_l2_sensitivity(1.0, 2.0) == pytest.approx(4.0, rel=1e-15)  # B^2 > 2 L^2: 4 B^2 L^2
    assert report_l1_sensitivity(5, 1.0, 1.0) == pytest.approx(10.47213595499958, rel=1e-15)  # 6 + 2 sqrt 5
    assert report_range(1.0, 1.0) == 1.0 and report_range(0.5, 3.0) == 1.5


def _report(x: np.ndarray, y: float) -> np.ndarray:
    d = len(x)
    tri = [x[i] * x[j] for i in range(d) for j in range(i, d)]
    return np.array(tri + list(y * x))


def test_l2_sensitivity_is_an_upper_bound_and_nearly_attained() -> None:
    rng = np.random.default_rng(0)
    d, worst = 3, 0.0
    for _ in range(20_000):
        x, x2 = rng.normal(size=(2, d))
        x /= max(1.0, np.linalg.norm(x))
        x2 /= max(1.0, np.linalg.norm(x2))
        y, y2 = rng.uniform(-1, 1, size=2)
        worst = max(worst, float(np.linalg.norm(_report(x, y) - _report(x2, y2))))
    bound = report_l2_sensitivity(1.0, 1.0)
    assert worst <= bound
    # The Frobenius form of the maximiser (<x, x'> = 1/2, y = -y' = 1) attains the bound exactly.
    x, x2 = np.array([1.0, 0.0]), np.array([0.5, math.sqrt(3) / 2])
    frob = np.linalg.norm(np.outer(x, x) - np.outer(x2, x2)) ** 2 + np.linalg.norm(x + x2) ** 2
    assert math.sqrt(frob) == pytest.approx(bound, rel=1e-12)


def test_noise_scales_equal_hand_values() -> None:
    assert classical_gaussian_sigma(0.5, 0.1, 2.0) == pytest.approx(8.990178897989972, rel=1e-14)
    assert local_laplace_scale(2.0, 5, 1.0, 1.0) == pytest.approx(10.47213595499958 / 2, rel=1e-15)
    e0, d0 = vector_sum_coordinate_budget(1.0, 0.1, 5, "paper")
    assert e0 == pytest.approx(0.04567604683360676, rel=1e-14) and d0 == pytest.approx(0.0025, rel=1e-15)
    tight, _ = vector_sum_coordinate_budget(1.0, 0.1, 5, "tight")
    assert tight > e0  # the better composition allows more per coordinate
    assert shuffle_batch_size(1_000_000) == 3982
    r = trust_radius(1.0, 5, 1_000_000, 1e-6)
    assert r.upsilon_rate == pytest.approx(65.59260850297615, rel=1e-14)  # 4 sqrt 5 + 2 ln(2e12)
    assert r.gamma_rate == pytest.approx(9.76257690215915, rel=1e-14)  # sqrt 5 + sqrt(2 ln(2e12))
    assert r.log_offset == pytest.approx(2 * math.log(2e6), rel=1e-15)
    assert trust_radius(0.0, 5, 100, 0.01).upsilon_rate == 0.0


def test_learners_use_the_formulas_scales() -> None:
    lr = LocalLinUCB(5, 1000, 1.0, 0.1, sampler="float", seed=1)
    assert lr.describe()["scale"] == analytic_gaussian_sigma(1.0, 0.1, math.sqrt(4.5))
    lat = LocalLinUCB(5, 1000, 1.0, 0.1, seed=1)
    # The lattice scale carries the rounding allowance: a little more noise, on the lattice.
    s = lat.describe()["scale"]
    assert lr.describe()["scale"] < s < 1.01 * lr.describe()["scale"]
    lap = LocalLinUCB(5, 1000, 2.0, noise="laplace", sampler="float", seed=1)
    assert lap.describe()["scale"] == pytest.approx(10.47213595499958 / 2, rel=1e-15)
    amp = ShuffleLinUCB(5, 10_000, 1.0, 0.1, protocol="amplification", sampler="float", batch_size=500, seed=1)
    e0 = shuffle_local_epsilon(1.0, 500, 0.1, "numerical")
    assert amp.describe()["epsilon0_numerical"] == e0
    assert amp.describe()["epsilon0_closed-form"] <= e0
    assert amp.describe()["scale"] == pytest.approx(report_l1_sensitivity(5, 1, 1) / e0, rel=1e-15)
    vs = ShuffleLinUCB(5, 10_000, 1.0, 0.1, calibration="paper", seed=1)
    assert vs.describe()["epsilon0"] == pytest.approx(0.04567604683360676, rel=1e-14)
    assert vs.batch_size == shuffle_batch_size(10_000) == 252


def test_guarantees_name_the_model() -> None:
    g = LocalLinUCB(3, 100, 1.0, 0.1, seed=0).privacy
    assert (g.model, g.epsilon, g.delta, g.sampler) == ("local", 1.0, 0.1, "lattice")
    assert "contexts and rewards" in g.protects
    assert LocalLinUCB(3, 100, 1.0, noise="laplace", seed=0).privacy.delta == 0.0
    s = ShuffleLinUCB(3, 100, 1.0, 0.1, seed=0).privacy
    assert (s.model, s.epsilon, s.delta) == ("shuffle", 1.0, 0.1) and "Cheu" in s.basis
    a = ShuffleLinUCB(3, 100, 1.0, 0.1, protocol="amplification", batch_size=20, seed=0).privacy
    assert a.model == "shuffle" and "Feldman" in a.basis
    assert not LocalLinUCB(3, 100, epsilon=None, seed=0).privacy.is_private
    assert "operating-system" in LocalLinUCB(3, 100, 1.0, 0.1, secure=True).privacy.basis
    assert "operating-system" in ShuffleLinUCB(3, 100, 1.0, 0.1, secure=True).privacy.basis


# --- noise off: the same decisions as LinUCB / the batched NumPy schedule -----------------------


def _contexts(seed: int, n: int, k: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sets = rng.normal(size=(n, k, d))
    # Norms spread over [0.5, 1]: exact ties (equal norms at round 0) would be
    # broken by rounding, differently by two correct implementations.
    sets *= rng.uniform(0.5, 1.0, size=(n, k, 1)) / np.linalg.norm(sets, axis=2, keepdims=True)
    theta = rng.normal(size=d)
    return sets, theta / np.linalg.norm(theta)


@pytest.mark.parametrize("regularizer", [1.0, 2.5])
def test_local_with_noise_off_plays_as_linucb(regularizer: float) -> None:
    n, k, d = 2000, 25, 5
    sets, theta = _contexts(3, n, k, d)
    a = LinUCB(d, n, regularizer=regularizer, seed=0)
    b = LocalLinUCB(d, n, epsilon=None, regularizer=regularizer, seed=0)
    noise = np.random.default_rng(4).choice([-1.0, 1.0], size=n)
    for t in range(n):
        i = a.select(sets[t])
        assert b.select(sets[t]) == i, f"round {t}"
        r = float(np.clip(sets[t][i] @ theta * 0.5 + 0.5 * noise[t], -1, 1))
        a.update(r)
        b.update(r)


def _numpy_batched_linucb(sets: np.ndarray, rewards_of, batch: int, lam: float, alpha: float) -> list[int]:  # type: ignore[no-untyped-def]
    """Batched LinUCB (Eq. (LT6) with Upsilon = gamma = 0): statistics refreshed every ``batch`` rounds."""
    n, _, d = sets.shape
    G, u = np.zeros((d, d)), np.zeros(d)
    Gb, ub = np.zeros((d, d)), np.zeros(d)
    V = G + lam * np.eye(d)
    choices = []
    for t in range(n):
        if t % batch == 0:
            G, u = G + Gb, u + ub
            Gb, ub = np.zeros((d, d)), np.zeros(d)
            V = G + lam * np.eye(d)
            theta = np.linalg.solve(V, u)
            _, logdet = np.linalg.slogdet(V)
            beta = math.sqrt(max(0.0, 2 * math.log(2 / alpha) + logdet - d * math.log(lam))) + math.sqrt(lam)
            Vinv = np.linalg.inv(V)
        X = sets[t]
        scores = X @ theta + beta * np.sqrt(np.einsum("ij,jk,ik->i", X, Vinv, X))
        i = int(np.argmax(scores))
        choices.append(i)
        x, r = X[i], rewards_of(t, i)
        Gb += np.outer(x, x)
        ub += r * x
    return choices


def test_shuffle_with_noise_off_and_batches_of_one_plays_as_linucb() -> None:
    n, k, d = 1000, 25, 5
    sets, theta = _contexts(9, n, k, d)
    a, b = LinUCB(d, n, seed=0), ShuffleLinUCB(d, n, epsilon=None, batch_size=1, seed=0)
    for t in range(n):
        i = a.select(sets[t])
        assert b.select(sets[t]) == i, f"round {t}"
        r = float(np.clip(sets[t][i] @ theta, -1, 1))
        a.update(r)
        b.update(r)


def test_shuffle_with_noise_off_plays_the_batched_schedule() -> None:
    n, k, d, batch = 1500, 25, 5, 37
    sets, theta = _contexts(5, n, k, d)
    noise = np.random.default_rng(6).choice([-1.0, 1.0], size=n)

    def reward(t: int, i: int) -> float:
        return float(np.clip(sets[t][i] @ theta * 0.5 + 0.5 * noise[t], -1, 1))

    want = _numpy_batched_linucb(sets, reward, batch, 1.0, 1.0 / n)
    lr = ShuffleLinUCB(d, n, epsilon=None, batch_size=batch, seed=0)
    for t in range(n):
        i = lr.select(sets[t])
        assert i == want[t], f"round {t}"
        lr.update(reward(t, i))
    assert lr.batches == n // batch


# --- the learner surface -------------------------------------------------------------------------


def _learners() -> dict[str, object]:
    return {
        "local": LocalLinUCB(5, 5000, 1.0, 0.1, seed=3),
        "local-laplace-float": LocalLinUCB(5, 5000, 1.0, noise="laplace", sampler="float", seed=3),
        "shuffle": ShuffleLinUCB(5, 5000, 1.0, 0.1, seed=3),
        "shuffle-amplification": ShuffleLinUCB(5, 5000, 1.0, 0.1, protocol="amplification", seed=3),
    }


def _drive(lr, sets: np.ndarray, t0: int, t1: int) -> list[int]:  # type: ignore[no-untyped-def]
    out = []
    for t in range(t0, t1):
        i = lr.select(sets[t])
        lr.update(float(np.sin(t + i)))
        out.append(i)
    return out


@pytest.mark.parametrize("name", ["local", "local-laplace-float", "shuffle", "shuffle-amplification"])
def test_checkpoint_continues_identically_and_refuses_an_edited_header(name: str, tmp_path: Path) -> None:
    from test_checkpoint_integrity import forge, set_config

    lr = _learners()[name]
    sets, _ = _contexts(7, 700, 10, 5)
    _drive(lr, sets, 0, 300)
    path = tmp_path / "c.ckpt"
    lr.save(path)  # type: ignore[attr-defined]
    back = type(lr).load(path, replay=True)  # bit-identical replay (for use: re-keyed)
    assert _drive(back, sets, 300, 700) == _drive(lr, sets, 300, 700)
    assert np.array_equal(back._engine.released(), lr._engine.released())  # type: ignore[attr-defined]
    assert back.privacy == lr.privacy  # type: ignore[attr-defined]
    raw = path.read_bytes()
    key, value = ("epsilon", 2.0) if "laplace" in name else ("delta", 0.2)
    (tmp_path / "forged.ckpt").write_bytes(forge(raw, set_config(key, value)))
    with pytest.raises(CheckpointError):
        type(lr).load(tmp_path / "forged.ckpt")


def test_fork_reseeds_and_spawn_restarts() -> None:
    sets, _ = _contexts(8, 400, 10, 5)
    a = LocalLinUCB(5, 1000, 1.0, 0.1, seed=1)
    _drive(a, sets, 0, 50)
    b = a.fork(seed=99)
    c = a.fork(seed=99)
    _drive(a, sets, 50, 60)
    _drive(b, sets, 50, 60)
    _drive(c, sets, 50, 60)
    assert np.array_equal(b._engine.released(), c._engine.released())
    assert not np.array_equal(a._engine.released(), b._engine.released())
    assert a.spawn(5).t == 0 and a.spawn(5).seed == 5


def test_simulate_and_sweep_run_both_learners() -> None:
    env = dp.ShariffSheffetEnv(5, 25, gap=0.1)
    res = dp.simulate_many({"local": LocalLinUCB(5, 3000, 1.0, 0.1), "shuffle": ShuffleLinUCB(5, 3000, 1.0, 0.1),
                            "linucb": LinUCB(5, 3000)}, env, 3000, seeds=2, record_every=1000)
    for r in res.values():
        assert np.all(np.isfinite(r.regret)) and r.regret.shape[0] == 2
    again = dp.simulate(LocalLinUCB(5, 3000, 1.0, 0.1), env, 3000, seeds=2, record_every=1000)
    assert np.array_equal(again.regret, res["local"].regret)  # seeds reproduce
    grid = {f"eps{e}": {"learners": {"local": LocalLinUCB(5, 2000, e, 0.1), "shuffle": ShuffleLinUCB(5, 2000, e, 0.1)},
                        "env": env, "horizon": 2000} for e in (0.5, 2.0)}
    sw = dp.sweep(grid, seeds=1, n_jobs=1, progress=False)
    direct = dp.simulate(ShuffleLinUCB(5, 2000, 2.0, 0.1), env, 2000, seeds=[0])
    assert np.array_equal(sw.results()[("eps2.0", "shuffle")].regret, direct.regret)


@pytest.mark.parametrize(
    ("make", "argument"),
    [
        (lambda: LocalLinUCB(5, 100, -1.0, 0.1), "epsilon"),
        (lambda: LocalLinUCB(5, 100, 1.0), "delta"),
        (lambda: LocalLinUCB(5, 100, 1.0, 0.1, noise="laplace"), "delta"),
        (lambda: LocalLinUCB(5, 100, 1.0, 0.1, noise="wishart"), "noise"),  # type: ignore[arg-type]
        (lambda: LocalLinUCB(5, 100, 2.0, 0.1, calibration="classical"), "epsilon"),
        (lambda: LocalLinUCB(0, 100, 1.0, 0.1), "d"),
        (lambda: LocalLinUCB(5, 100, 1.0, 0.1, sampler="exact"), "sampler"),  # type: ignore[arg-type]
        (lambda: LocalLinUCB(5, 100, 1.0, 0.1, regularizer=0.0), "regularizer"),
        (lambda: LocalLinUCB(5, 100, epsilon=None, sampler="float", secure=True), "secure"),
        (lambda: ShuffleLinUCB(5, 100, 1.0, 0.1, batch_size=0), "batch_size"),
        (lambda: ShuffleLinUCB(5, 100, 1.0, 0.1, batch_size=101), "batch_size"),
        (lambda: ShuffleLinUCB(5, 100, 1.0, 0.1, protocol="tree"), "protocol"),  # type: ignore[arg-type]
        (lambda: ShuffleLinUCB(5, 100, 1.0, 0.1, sampler="float"), "sampler"),
        (lambda: ShuffleLinUCB(5, 100, 1.0), "delta"),
        (lambda: ShuffleLinUCB(5, 100, 1.0, 0.1, shuffle_method="exact"), "shuffle_method"),  # type: ignore[arg-type]
        (lambda: ShuffleLinUCB(5, 100, 1.0, 0.1, bounds="ignore"), "bounds"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_names_the_argument(make, argument: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=f"`{argument}`"):
        make()


def test_bounds_and_horizon_are_enforced() -> None:
    lr = LocalLinUCB(2, 3, 1.0, 0.1, bounds="error", seed=0)
    with pytest.raises(ValueError, match="x"):
        lr.update(np.array([3.0, 4.0]), 0.5)
    with pytest.raises(ValueError, match="reward"):
        lr.update(np.array([0.3, 0.4]), 1.5)
    with pytest.raises(ValueError, match="decision_set"):
        lr.select(np.ones((3, 5)))
    for _ in range(3):
        lr.update(np.array([0.3, 0.4]), 0.5)
    with pytest.raises(dp.errors.StateError):
        lr.update(np.array([0.3, 0.4]), 0.5)


def test_lattice_reports_are_lattice_values() -> None:
    lr = LocalLinUCB(3, 100, 1.0, 0.1, seed=0)
    reports = lr._engine._report_runs(np.array([0.6, 0.0, 0.8]), 0.3, 50)
    steps = reports * 2.0 ** lr.describe()["lattice_exponent"]
    assert np.array_equal(steps, np.round(steps))
    assert len(np.unique(reports[:, 0])) > 40  # noisy, not constant


# --- audits (slow) ------------------------------------------------------------------------------

N = 1_000_000
# Neighbours attaining (nearly) the L2 sensitivity: x = e1, y = 1 against x' = (1/2, sqrt 3/2), y' = -1.
X0, Y0 = np.array([1.0, 0.0]), 1.0
X1, Y1 = np.array([0.5, math.sqrt(3) / 2]), -1.0


def _projected(runs: np.ndarray, direction: np.ndarray) -> np.ndarray:
    return runs @ direction


@pytest.mark.slow
def test_audit_local_randomizer_meets_its_claim_and_half_noise_is_flagged() -> None:
    eps, delta = 1.0, 1e-3
    lr = LocalLinUCB(2, 10, eps, delta, seed=0)
    direction = _report(X1, Y1) - _report(X0, Y0)

    def mechanism_of(learner):  # type: ignore[no-untyped-def]
        def mechanism(side: int, count: int, seed: int) -> np.ndarray:
            learner._engine.reseed(seed)
            x, y = (X1, Y1) if side else (X0, Y0)
            return _projected(learner._engine._report_runs(x, y, count), direction)
        return mechanism

    ok = audit(mechanism_of(lr), epsilon=eps, delta=delta, n=N, seed=11)
    print("[audit] local randomizer:", ok)
    assert ok.epsilon_lower_bound <= eps
    # Planted bug: the engine given half the calibrated sigma (as if the
    # sensitivity had been halved).
    sigma = lr.describe()["scale"]
    from dpbandits import _core
    from dpbandits.privacy.linucb_trust import lattice_report_noise

    half = lattice_report_noise("gaussian", sigma / 2, 2, 1.0, 1.0, 10)
    bug = LocalLinUCB(2, 10, eps, delta, seed=0)
    r = bug.radius
    bug._engine = _core.TrustLinUcbEngine(2, 10, batch=1, regularizer=1.0, upsilon_rate=r.upsilon_rate,
                                          noise_sd=r.noise_sd, log_offset=r.log_offset, s=r.S,
                                          gamma_rate=r.gamma_rate, seed=0, noise=half.wire())
    flagged = audit(mechanism_of(bug), epsilon=eps, delta=delta, n=N, seed=12)
    print("[audit] local randomizer, half sigma:", flagged)
    assert flagged.epsilon_lower_bound > eps


@pytest.mark.slow
def test_audit_shuffle_analyzer_output_meets_its_claim_and_dropped_blanket_bits_are_flagged() -> None:
    eps, delta, batch = 1.0, 1e-3, 8
    lr = ShuffleLinUCB(2, 100, eps, delta, batch_size=batch, seed=0)
    others = np.tile(np.array([[0.0, 1.0]]), (batch - 1, 1))
    xs = [np.vstack([X0, others]), np.vstack([X1, others])]
    ys = [np.array([Y0] + [0.0] * (batch - 1)), np.array([Y1] + [0.0] * (batch - 1))]
    direction = _report(X1, Y1) - _report(X0, Y0)

    def mechanism_of(learner):  # type: ignore[no-untyped-def]
        def mechanism(side: int, count: int, seed: int) -> np.ndarray:
            learner._engine.reseed(seed)
            return _projected(learner._engine._batch_release_runs(xs[side], ys[side], count), direction)
        return mechanism

    ok = audit(mechanism_of(lr), epsilon=eps, delta=delta, n=N, seed=21)
    print("[audit] shuffle vector sum:", ok)
    assert ok.epsilon_lower_bound <= eps
    # Planted bug: the users' blanket Ber(p) bits dropped (b = 1 bit with
    # p ~ 1e-12 instead of the Lemma 3.1 count): the analyzer's output is
    # then the rounded sum alone.
    from dpbandits import _core

    r = lr.radius
    bug = ShuffleLinUCB(2, 100, eps, delta, batch_size=batch, seed=0)
    bug._engine = _core.TrustLinUcbEngine(2, 100, batch=batch, regularizer=1.0, upsilon_rate=r.upsilon_rate,
                                          noise_sd=r.noise_sd, log_offset=r.log_offset, s=r.S,
                                          gamma_rate=r.gamma_rate, seed=0,
                                          shuffle_sum=[2.0, 4.0, 1e-12, 1e-13], range=1.0)
    flagged = audit(mechanism_of(bug), epsilon=eps, delta=delta, n=N, seed=22)
    print("[audit] shuffle vector sum without blanket bits:", flagged)
    assert flagged.epsilon_lower_bound > eps


def test_exact_binomial_delta_matches_brute_force_and_beats_lemma_3_1() -> None:
    from scipy import stats

    from dpbandits.privacy.linucb_trust import binomial_shift_delta, exact_blanket_coefficients
    from dpbandits.privacy.shuffle_sum import shuffle_sum_coefficients

    for N, p, k, eps in [(200, 0.5, 3, 0.3), (1000, 0.3, 7, 0.8), (50, 0.45, 1, 0.05)]:
        y = np.arange(-k, N + k + 1)
        a, c = stats.binom.pmf(y, N, p), stats.binom.pmf(y - k, N, p)
        brute = max(np.maximum(a - math.exp(eps) * c, 0).sum(), np.maximum(c - math.exp(eps) * a, 0).sum())
        assert binomial_shift_delta(eps, N, p, k) == pytest.approx(brute, rel=1e-9, abs=1e-15)
    coef = exact_blanket_coefficients(0.1, 0.01, 64)
    lemma = shuffle_sum_coefficients(0.1, 0.01)
    assert coef[2] < lemma[2] / 10  # Lemma 3.1's blanket is >10x the exact need here
