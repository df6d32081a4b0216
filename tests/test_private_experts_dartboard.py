"""PrivateDartboardExperts (after Asi, Feldman, Koren & Talwar 2023, oblivious
adversaries) and the ChasingAdversary environment: the privacy constants
against hand-computed values and over the (epsilon, delta) grid, the
protocol, checkpoints, hostile input, the simulation loop, the adaptive
separation and the regret slope in T."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.errors import StateError
from dpbandits.experiments.report import fit_loglog
from dpbandits.privacy.private_experts import dartboard_epsilon, dartboard_parameters, dartboard_shift


def test_dartboard_epsilon_matches_the_hand_computed_accounting() -> None:
    # eps_test 0.5, eta 0.01, 10 switches, delta 1e-6: pure 0.5 + 2 * 0.01 * 10 = 0.7;
    # rho = 0.5^2 / 2 + 10 * 0.01^2 / 2 = 0.1255, approx = rho + 2 sqrt(rho ln 1e6) = 2.7589.
    assert dartboard_epsilon(0.5, 0.01, 10, 1e-6) == pytest.approx(0.7, rel=1e-12)
    # Many switches: the zCDP conversion wins. eps_test 0.01, eta 0.001, 10^5 switches:
    # pure 200.01; rho = 5e-5 + 0.05 = 0.05005, approx = 0.05005 + 2 sqrt(0.05005 * 13.8155) = 1.713139.
    assert dartboard_epsilon(0.01, 0.001, 100_000, 1e-6) == pytest.approx(1.713139, abs=1e-6)
    # The shift: c >= ln(1 / (1 - (eta b)^2)) / eta and b ln(T K / (2 (1 - eta b))).
    assert dartboard_shift(0.01, 10.0, 100, 1000) == pytest.approx(10.0 * math.log(1e5 / (2 * 0.9)))
    with pytest.raises(ValueError, match="eta"):
        dartboard_shift(0.2, 10.0, 100, 1000)


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-12])
def test_parameters_meet_every_epsilon_delta_of_the_grid(epsilon: float, delta: float) -> None:
    for sampler in ("lattice", "float"):
        p = dartboard_parameters(64, 2**14, epsilon, delta, sampler)  # type: ignore[arg-type]
        g = p.guarantee
        assert g.epsilon <= epsilon * (1 + 1e-12) and g.delta == delta and g.sampler == sampler
        # eta is a multiple of 2^-40 (exact exponents on the lattice), the shift a lattice value.
        assert math.ldexp(p.eta, 40) == int(math.ldexp(p.eta, 40)) and p.eta * p.scale < 1
        if sampler == "lattice":
            kind, steps, exponent = p.wire  # type: ignore[misc]
            assert kind == "lattice_laplace" and math.ldexp(p.shift, exponent) == int(math.ldexp(p.shift, exponent))
            assert g.epsilon == pytest.approx(dartboard_epsilon(2.0**exponent / steps, p.eta, p.max_switches, delta))
    lr = dp.PrivateDartboardExperts(64, 2**14, epsilon, delta=delta, seed=0)
    lr.select()
    lr.update(np.full(64, 0.5))
    assert lr.privacy.epsilon <= epsilon * (1 + 1e-12)


def test_protocol_checkpoints_and_hostile_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    d, horizon = 8, 512
    rng = np.random.default_rng(0)
    losses = (rng.random((horizon, d)) < 0.5).astype(float)
    a = dp.PrivateDartboardExperts(d, horizon, 1.0, seed=1)
    played = []
    for row in losses[:200]:
        played.append(a.select())
        a.update(row)
    changes = [t for t in range(1, 200) if played[t] != played[t - 1]]
    assert all(t % a.batch == 0 for t in changes)
    assert a.switches <= a.max_switches
    a.save(tmp_path / "dartboard.ckpt")
    b = dp.PrivateDartboardExperts.load(tmp_path / "dartboard.ckpt", replay=True)  # bit-identical research replay
    for row in losses[200:]:
        assert a.select() == b.select()
        a.update(row)
        b.update(row)
    with pytest.raises(StateError):
        a.update(losses[0])
    with pytest.raises(ValueError, match="losses"):
        dp.PrivateDartboardExperts(d, horizon, 1.0, bounds="error").update([2.0] * d)
    with pytest.raises(ValueError, match="losses"):
        b.update([0.1] * (d + 1))
    with pytest.raises(ValueError, match="delta"):
        dp.PrivateDartboardExperts(d, horizon, 1.0, delta=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        dp.PrivateDartboardExperts(d, horizon, 1e-9)
    with pytest.raises(ValueError, match="state"):
        type(a._engine).from_bytes(bytes(a._engine.to_bytes())[:-4])
    assert dp.PrivateDartboardExperts(d, horizon, 1.0, secure=True).secure
    assert dp.PrivateDartboardExperts(d, horizon, None).privacy.epsilon == math.inf


def test_the_engine_refuses_what_the_exact_draws_cannot_take() -> None:
    from dpbandits import _core

    wire = dp.PrivateDartboardExperts(4, 100, 1.0).noise_wire
    with pytest.raises(ValueError, match="shift"):
        _core.DartboardExpertsEngine(4, 100, 2, 0.25, 0.1 + 2.0**-60, 10, noise=wire)  # not a lattice value
    with pytest.raises(ValueError, match="eta"):
        _core.DartboardExpertsEngine(4, 100, 2, 1e-30, 0.0, 10, noise=wire)  # 1e-30 needs 2^-152
    with pytest.raises(ValueError, match="batch"):
        _core.DartboardExpertsEngine(4, 100, 101, 0.25, 0.0, 10, noise=wire)


def test_dartboard_beats_private_ftrl_on_the_oblivious_switching_instance() -> None:
    d, horizon, eps = 64, 2**13, 0.5
    env = dp.SwitchingBestExpert(d)
    board = dp.simulate(dp.PrivateDartboardExperts(d, horizon, eps, seed=0), env, seeds=3).final_regret
    ftrl = dp.simulate(dp.PrivateFTRL(d, horizon, eps, seed=0), env, seeds=3).final_regret
    assert board.mean() + 3 * board.std() < ftrl.mean(), (board, ftrl)


def test_dartboard_regret_slope_in_t_is_within_the_rate() -> None:
    """PrivateDartboardExperts on the oblivious switching instance (d = 16,
    eps = 1), T = 2^10 .. 2^14, 6 seeds: log-log slope at most 1/2 (the
    rate's exponent: sqrt(T log d) dominates T^(1/3)) + 3 standard errors."""
    horizons = [2**10, 2**11, 2**12, 2**13, 2**14]
    regrets = []
    for horizon in horizons:
        lr = dp.PrivateDartboardExperts(16, horizon, 1.0, seed=3)
        regrets.append(float(np.mean(dp.simulate(lr, dp.SwitchingBestExpert(16), seeds=6).final_regret)))
    fit = fit_loglog(horizons, regrets)
    assert fit["slope"] <= 0.5 + 3 * fit["slope_se"], (regrets, fit)


def test_the_slope_criterion_flags_a_learner_that_does_not_learn() -> None:
    """The criterion of the slope tests (slope <= exponent + 3 se) is not
    vacuous: on the same switching workload PrivateStochasticExperts, whose
    doubling batches align with the phases (no guarantee against an
    adversary), has regret linear in T, and the criterion rejects it."""
    horizons = [2**10, 2**11, 2**12, 2**13, 2**14]
    regrets = []
    for horizon in horizons:
        lr = dp.PrivateStochasticExperts(16, horizon, 1.0, seed=3)
        regrets.append(float(np.mean(dp.simulate(lr, dp.SwitchingBestExpert(16), seeds=6).final_regret)))
    fit = fit_loglog(horizons, regrets)
    assert fit["slope"] > 0.5 + 3 * fit["slope_se"], (regrets, fit)


def test_the_chasing_adversary_separates_lazy_from_fresh_draws() -> None:
    """Adaptive adversary (loss 1 on the previous play): the learners that
    hold an expert for a batch pay about T, PrivateFTRL (a fresh draw each
    round) a small fraction of it."""
    d, horizon = 16, 4096
    env = dp.ChasingAdversary(d)
    held = [dp.PrivateDartboardExperts(d, horizon, 1.0, seed=0), dp.PrivateStochasticExperts(d, horizon, 1.0, seed=0)]
    lows = []
    for lr in held:
        r = dp.simulate(lr, env, seeds=2).final_regret
        assert r.min() > 0.5 * horizon, (type(lr).__name__, r)
        lows.append(r.min())
    fresh = dp.simulate(dp.PrivateFTRL(d, horizon, 1.0, seed=0), env, seeds=2).final_regret
    assert fresh.max() < 0.5 * min(lows), (fresh, lows)


def test_the_chasing_adversary_online_and_its_refusals() -> None:
    env = dp.ChasingAdversary(3)
    assert env.next_round().tolist() == [0.0, 0.0, 0.0]
    env.record_play(1)
    assert env.next_round().tolist() == [0.0, 1.0, 0.0]
    assert env.regret(1) == 1.0
    with pytest.raises(StateError, match="record_play"):
        env.next_round()
    with pytest.raises(ValueError, match="index"):
        env.record_play(3)
    with pytest.raises(ValueError, match="`n`"):
        dp.ChasingAdversary(1)
    two = {"a": dp.PrivateFTRL(3, 100, 1.0, seed=0), "b": dp.PrivateFTRL(3, 100, 1.0, seed=1)}
    with pytest.raises(StateError, match="one learner"):
        dp.simulate_many(two, dp.ChasingAdversary(3), seeds=1)


# --- LazyPrivateOCO: lazy exponential weights on the unit ball ---------------------


def test_lazy_ball_epsilon_matches_the_hand_computed_accounting() -> None:
    from dpbandits.privacy.private_experts import lazy_ball_epsilon, lazy_ball_parameters

    # eta 0.01, gamma 0.1, 10 switches, delta 1e-6: eps_coin = ln(1 + 0.04 * 0.9 / 0.1) = ln 1.36;
    # pure = eps_coin + 4 * 0.01 * 10 = 0.707485; rho = eps_coin^2 / 2 + 2 * 10 * 1e-4 = 0.049273,
    # approx = rho + 2 sqrt(rho ln 1e6) = 1.69941: the pure accounting wins.
    coin = math.log(1.36)
    assert lazy_ball_epsilon(0.01, 0.1, 10, 1e-6) == pytest.approx(coin + 0.4, rel=1e-12)
    assert coin + 0.4 == pytest.approx(0.707485, abs=1e-6)
    rho = coin**2 / 2 + 2 * 10_000 * 1e-4
    assert lazy_ball_epsilon(0.01, 0.1, 10_000, 1e-6) == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e6)))
    for eps in (0.05, 1.0):
        for delta in (1e-3, 1e-6, 1e-12):
            p = lazy_ball_parameters(8, 2**14, eps, delta)
            assert p.guarantee.epsilon <= eps * (1 + 1e-12) and p.guarantee.delta == delta
            assert p.guarantee.sampler == "lattice" and p.lattice == 16
            # Exact draws: eta a multiple of 2^-40, gamma of 2^-40 (exact coins).
            assert math.ldexp(p.eta, 40).is_integer() and math.ldexp(p.gamma, 40).is_integer()
            assert lazy_ball_epsilon(p.eta, p.gamma, p.max_switches, delta) == p.guarantee.epsilon
            f = lazy_ball_parameters(8, 2**14, eps, delta, "float")
            assert f.guarantee.sampler == "float" and f.lattice is None
            assert f.guarantee.epsilon <= eps * (1 + 1e-12)


def test_lazy_oco_protocol_checkpoints_and_hostile_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    n, horizon = 4, 512
    rng = np.random.default_rng(0)
    losses = rng.normal(size=(horizon, n))
    losses /= np.maximum(1.0, np.linalg.norm(losses, axis=1))[:, None]
    a = dp.LazyPrivateOCO(n, horizon, 1.0, seed=1)
    played = []
    for row in losses[:200]:
        x = a.decision()
        assert float(x @ x) <= 1.0 + 1e-12
        played.append(x)
        a.update(row)
    changes = [t for t in range(1, 200) if not np.array_equal(played[t], played[t - 1])]
    assert changes and all(t % a.batch == 0 for t in changes)
    a.save(tmp_path / "ball.ckpt")
    b = dp.LazyPrivateOCO.load(tmp_path / "ball.ckpt", replay=True)  # bit-identical research replay
    for row in losses[200:]:
        np.testing.assert_array_equal(a.decision(), b.decision())
        a.update(row)
        b.update(row)
    with pytest.raises(StateError):
        a.update(losses[0])
    with pytest.raises(ValueError, match="losses"):
        dp.LazyPrivateOCO(n, horizon, 1.0, bounds="error").update([1.0] * n)
    with pytest.raises(ValueError, match="losses"):
        b.update([0.1] * (n + 1))
    with pytest.raises(ValueError, match="epsilon"):
        dp.LazyPrivateOCO(n, horizon, 1e-20)
    with pytest.raises(ValueError, match="state"):
        type(a._engine).from_bytes(bytes(a._engine.to_bytes())[:-4])


def test_lazy_oco_sampler_has_the_exponential_weights_law() -> None:
    """n = 1: p ∝ exp(-eta L x) on [-1, 1], E[x] = 1 / kappa - coth(kappa)
    at kappa = eta L; n = 3: the mean point is -m(kappa) L / ||L|| with
    m(kappa) = E[s] of exp(kappa s) (1 - s^2) on [-1, 1] (quadrature)."""
    from dpbandits import _core

    runs = 100_000
    e = _core.LazyBallEngine(1, 10, 1, 0.5, 0.1, 10, seed=3)
    pts = e._draw_runs(np.array([4.0]), runs)[:, 0]
    kappa = 2.0
    want = 1 / kappa - 1 / math.tanh(kappa)
    assert abs(pts.mean() - want) < 5 * pts.std() / math.sqrt(runs), (pts.mean(), want)
    e3 = _core.LazyBallEngine(3, 10, 1, 0.25, 0.1, 10, seed=4)
    pts3 = e3._draw_runs(np.array([0.0, 8.0, 0.0]), runs)
    assert np.all(np.linalg.norm(pts3, axis=1) <= 1 + 1e-12)
    s = np.linspace(-1, 1, 400_001)[1:-1]
    w = np.exp(2.0 * s) * (1 - s**2)
    m = float((s * w).sum() / w.sum())
    se = pts3.std(axis=0) / math.sqrt(runs)
    assert abs(pts3[:, 1].mean() + m) < 5 * se[1] and abs(pts3[:, 0].mean()) < 5 * se[0], (pts3.mean(axis=0), m)


def test_lazy_oco_exact_sampler_has_the_exponential_weights_law_on_lattice_points() -> None:
    """The exact draws (losses on 2^-16, points on 2^-16): every coordinate
    an integer times 2^-16 and the point in the ball; n = 1 and n = 3 means
    as for the continuous law above (the lattice moves them by O(2^-32))."""
    from dpbandits import _core

    runs = 100_000
    e = _core.LazyBallEngine(1, 10, 1, 0.5, 0.25, 10, lattice=(16, 16), seed=3)
    pts = e._draw_runs(np.array([4.0]), runs)[:, 0]
    assert np.array_equal(pts * 2**16, np.round(pts * 2**16)) and np.all(np.abs(pts) <= 1.0)
    kappa = 2.0
    want = 1 / kappa - 1 / math.tanh(kappa)
    assert abs(pts.mean() - want) < 5 * pts.std() / math.sqrt(runs), (pts.mean(), want)
    e3 = _core.LazyBallEngine(3, 10, 1, 0.25, 0.25, 10, lattice=(16, 16), seed=4)
    pts3 = e3._draw_runs(np.array([0.0, 8.0, 0.0]), runs)
    assert np.all((pts3**2).sum(axis=1) <= 1.0)
    assert np.array_equal(pts3 * 2**16, np.round(pts3 * 2**16))
    s = np.linspace(-1, 1, 400_001)[1:-1]
    w = np.exp(2.0 * s) * (1 - s**2)
    m = float((s * w).sum() / w.sum())
    se = pts3.std(axis=0) / math.sqrt(runs)
    assert abs(pts3[:, 1].mean() + m) < 5 * se[1] and abs(pts3[:, 0].mean()) < 5 * se[0], (pts3.mean(axis=0), m)
    # A rate that is not dyadic enough, or a non-dyadic floor, is refused for exact draws.
    with pytest.raises(ValueError, match="eta"):
        _core.LazyBallEngine(3, 10, 1, 0.1, 0.25, 10, lattice=(16, 16), seed=4)
    with pytest.raises(ValueError, match="gamma"):
        _core.LazyBallEngine(3, 10, 1, 0.25, 1e-10, 10, lattice=(16, 16), seed=4)


def test_lazy_oco_float_sampler_stays_selectable_and_secure_needs_the_lattice() -> None:
    f = dp.LazyPrivateOCO(4, 512, 1.0, seed=0, sampler="float")
    assert f.privacy.sampler == "float" and f.lattice is None
    x = f.decision()
    assert float(x @ x) <= 1.0 + 1e-12
    with pytest.raises(ValueError, match="secure"):
        dp.LazyPrivateOCO(4, 512, 1.0, sampler="float", secure=True)
    with pytest.raises(ValueError, match="secure"):
        dp.LazyPrivateOCO(4, 512, None, secure=True)
    s = dp.LazyPrivateOCO(4, 512, 1.0, secure=True)
    assert s._engine.os_entropy and "operating-system" in s.privacy.basis
    for _ in range(64):
        s.update([0.5, -0.5, 0.0, 0.0])
    assert s.t == 64 and s._engine.os_entropy


def test_lazy_oco_learns_within_its_modelled_bound() -> None:
    """Stochastic linear losses on the ball (n = 4, eps = 0.5, T = 2^13):
    the regret is below the tuned parameters' modelled bound and below
    the no-learning regret T ||c|| (c: the mean loss vector)."""
    n, horizon, eps = 4, 2**13, 0.5
    centre = [0.3, -0.2, 0.1, 0.0]
    lr = dp.LazyPrivateOCO(n, horizon, eps, seed=0)
    regret = dp.simulate(lr, dp.UniformLosses(centre, 0.5), seeds=3).final_regret
    assert regret.max() < lr.regret_model, (regret, lr.regret_model)
    assert regret.max() < 0.75 * horizon * float(np.linalg.norm(centre)), regret


def test_lazy_oco_regret_slope_in_t_is_within_the_rate() -> None:
    """LazyPrivateOCO on stochastic linear losses (n = 3, eps = 4),
    T = 2^12 .. 2^16, 6 seeds: log-log slope at most 1/2 (the exponent of
    the rate's sqrt(T), which dominates T^(1/3)) + 3 standard errors."""
    horizons = [2**12, 2**13, 2**14, 2**15, 2**16]
    regrets = []
    for horizon in horizons:
        lr = dp.LazyPrivateOCO(3, horizon, 4.0, seed=3)
        env = dp.UniformLosses([0.3, -0.2, 0.1], 0.5)
        regrets.append(float(np.mean(dp.simulate(lr, env, seeds=6).final_regret)))
    fit = fit_loglog(horizons, regrets)
    assert fit["slope"] <= 0.5 + 3 * fit["slope_se"], (regrets, fit)
