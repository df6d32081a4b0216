"""LazyPrivateExperts (after Asi, Koren, Liu & Talwar 2024) and
BatchedPrivateEXP3 (Asi, Raman & Talwar 2025): their privacy constants
against hand-computed values, the protocol, checkpoints, hostile input,
the simulation loop and the regret slope in T."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.errors import StateError
from dpbandits.experiments.report import fit_loglog
from dpbandits.privacy.private_experts import (
    batched_bandit_parameters,
    lazy_epsilon,
    lazy_lattice_exponent,
    lazy_parameters,
)


def test_lazy_epsilon_matches_the_hand_computed_accounting() -> None:
    # eta 0.01, gamma 0.1, 10 switches, delta 1e-6:
    # eps_coin = ln(1 + 0.01 * 0.9 / 0.1) = ln 1.09; pure = eps_coin + 2 * 0.01 * 10;
    # rho = eps_coin^2 / 2 + 10 * 0.01^2 / 2; approx = rho + 2 sqrt(rho ln 1e6).
    coin = math.log(1.09)
    pure = coin + 0.2
    rho = coin**2 / 2 + 10 * 1e-4 / 2
    approx = rho + 2 * math.sqrt(rho * math.log(1e6))
    assert lazy_epsilon(0.01, 0.1, 10, 1e-6) == pytest.approx(min(pure, approx), rel=1e-12)
    assert min(pure, approx) == pytest.approx(0.286178, abs=1e-6)
    # Many switches: the zCDP conversion wins.
    rho = coin**2 / 2 + 10_000 * 1e-4 / 2
    assert lazy_epsilon(0.01, 0.1, 10_000, 1e-6) == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e6)))
    p = lazy_parameters(1024, 2**16, 0.1)
    assert p.guarantee.epsilon <= 0.1 and p.guarantee.delta == 1e-6 and p.guarantee.sampler == "lattice"
    assert p.guarantee.epsilon == lazy_epsilon(p.eta, p.gamma, p.max_switches, 1e-6)
    f = lazy_parameters(1024, 2**16, 0.1, sampler="float")
    assert f.guarantee.epsilon <= 0.1 + 1e-12 and f.guarantee.sampler == "float" and f.lattice is None
    assert f.guarantee.epsilon == pytest.approx(lazy_epsilon(f.eta, f.gamma, f.max_switches, 1e-6))


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 1.0, None])
def test_exact_lazy_parameters_are_dyadic_and_meet_epsilon(epsilon: float | None) -> None:
    """The exact sampler's eta and gamma are multiples of 2^-40 (exact coins
    in the engine), eta rounded down and gamma up from the floating-point
    search (both only lower the accounting), and the guarantee is
    recomputed at the rounded values."""
    exact = lazy_parameters(1024, 2**16, epsilon)
    f = lazy_parameters(1024, 2**16, epsilon, sampler="float")
    for v in (exact.eta, exact.gamma):
        assert math.ldexp(v, 40) == math.floor(math.ldexp(v, 40))
    assert exact.lattice == lazy_lattice_exponent(2**16) == 30
    assert exact.batch == f.batch and exact.eta <= f.eta < exact.eta + 2.0**-40
    if epsilon is not None:
        assert f.gamma <= exact.gamma < f.gamma + 2.0**-40
        assert exact.guarantee.epsilon <= epsilon
        assert exact.guarantee.epsilon == lazy_epsilon(exact.eta, exact.gamma, exact.max_switches, 1e-6)


def test_the_loss_lattice_keeps_cumulative_losses_exact() -> None:
    # T 2^j <= 2^51: j = 30 up to T = 2^21, then one bit less per doubling.
    assert [lazy_lattice_exponent(h) for h in (2, 2**21, 2**21 + 1, 2**40, 2**51)] == [30, 30, 29, 11, 0]
    with pytest.raises(ValueError, match="horizon"):
        lazy_lattice_exponent(2**51 + 1)
    with pytest.raises(ValueError, match="sampler"):
        lazy_parameters(4, 100, 1.0, sampler="exact")  # type: ignore[arg-type]


def test_the_float_sampler_stays_selectable() -> None:
    lr = dp.LazyPrivateExperts(8, 2**12, 1.0, seed=2, sampler="float")
    assert lr.privacy.sampler == "float" and lr.lattice is None
    with pytest.raises(ValueError, match="sampler"):
        dp.LazyPrivateExperts(8, 2**12, 1.0, sampler="exact")  # type: ignore[arg-type]
    res = dp.simulate(lr, dp.StochasticLosses([0.4] + [0.5] * 7), seeds=2)
    assert res.final_regret.shape == (2,)


def test_batched_bandit_constants() -> None:
    p = batched_bandit_parameters(16, 10**6, 1.0)
    # Laplace(1) on a sum of losses in [0, 1]: j = 19, t = 2^19 steps, eps met = 1.
    assert p.wire == ("lattice_laplace", 2**19, 19) and p.guarantee.epsilon == 1.0
    assert 1 < p.batch < 20
    rounds = -(-10**6 // p.batch)
    spread = 1 + 2 * (1 / p.batch) ** 2 * math.log(16 * rounds)
    assert p.eta == pytest.approx(math.sqrt(math.log(16) / (2 * 16 * rounds * spread)))
    assert p.gamma == pytest.approx(p.eta * 16 * math.sqrt(spread))
    assert batched_bandit_parameters(16, 1000, 1.0, batch=7).batch == 7
    with pytest.raises(ValueError, match="batch"):
        batched_bandit_parameters(16, 1000, 1.0, batch=1001)


def test_lazy_protocol_checkpoints_and_hostile_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    d, horizon = 8, 512
    rng = np.random.default_rng(0)
    losses = (rng.random((horizon, d)) < 0.5).astype(float)
    a = dp.LazyPrivateExperts(d, horizon, 1.0, seed=1)
    played = []
    for row in losses[:200]:
        played.append(a.select())
        a.update(row)
    changes = [t for t in range(1, 200) if played[t] != played[t - 1]]
    assert all(t % a.batch == 0 for t in changes)
    assert a.switches <= a.max_switches
    a.save(tmp_path / "lazy.ckpt")
    b = dp.LazyPrivateExperts.load(tmp_path / "lazy.ckpt", replay=True)  # bit-identical research replay
    for row in losses[200:]:
        assert a.select() == b.select()
        a.update(row)
        b.update(row)
    with pytest.raises(StateError):
        a.update(losses[0])
    with pytest.raises(ValueError, match="losses"):
        dp.LazyPrivateExperts(d, horizon, 1.0, bounds="error").update([2.0] * d)
    with pytest.raises(ValueError, match="losses"):
        a.update([0.1] * (d + 1))
    with pytest.raises(ValueError, match="delta"):
        dp.LazyPrivateExperts(d, horizon, 1.0, delta=0.0)
    with pytest.raises(ValueError, match="state"):
        type(a._engine).from_bytes(bytes(a._engine.to_bytes())[:-4])


def test_batched_exp3_protocol_checkpoints_and_hostile_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lr = dp.BatchedPrivateEXP3(4, 1000, 1.0, seed=2)
    with pytest.raises(StateError):
        lr.update(0.5)
    arms = []
    for _ in range(100):
        i = lr.select()
        arms.append(i)
        lr.update(0.1 if i == 0 else 0.9)
    assert all(arms[t] == arms[t - 1] for t in range(1, 100) if t % lr.batch)
    lr.save(tmp_path / "b.ckpt")
    other = dp.BatchedPrivateEXP3.load(tmp_path / "b.ckpt", replay=True)  # bit-identical research replay
    for _ in range(300):
        i, j = lr.select(), other.select()
        assert i == j
        lr.update(0.3)
        other.update(0.3)
    np.testing.assert_array_equal(lr.probabilities(), other.probabilities())
    strict = dp.BatchedPrivateEXP3(4, 1000, 1.0, bounds="error")
    strict.select()
    with pytest.raises(ValueError, match="loss"):
        strict.update(1.5)
    with pytest.raises((TypeError, ValueError), match="loss"):
        strict.update("high")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`k`"):
        dp.BatchedPrivateEXP3(1, 1000, 1.0)
    assert dp.BatchedPrivateEXP3(4, 1000, 1.0, secure=True).secure


def test_lazy_beats_private_ftrl_on_the_oblivious_switching_instance() -> None:
    d, horizon, eps = 64, 2**13, 0.5
    env = dp.SwitchingBestExpert(d)
    lazy = dp.simulate(dp.LazyPrivateExperts(d, horizon, eps, seed=0), env, seeds=3).final_regret
    ftrl = dp.simulate(dp.PrivateFTRL(d, horizon, eps, seed=0), env, seeds=3).final_regret
    assert lazy.mean() + 3 * lazy.std() < ftrl.mean(), (lazy, ftrl)


def test_batched_exp3_runs_in_simulate_and_its_regret_slope_is_within_the_rate() -> None:
    """Regret of BatchedPrivateEXP3 on a 4-armed Bernoulli-loss instance
    against T = 2^13 .. 2^17 (eps = 1, 6 seeds): the log-log slope is at
    most the local exponent of the tuned rate over the same horizons
    (sqrt(K T / eps) with the tuning's log factor: about 0.52 here) + 3
    standard errors of the fitted slope."""
    means = [0.1, 0.9, 0.9, 0.9]
    horizons = [2**13, 2**14, 2**15, 2**16, 2**17]
    regrets = []
    for horizon in horizons:
        lr = dp.BatchedPrivateEXP3(4, horizon, 1.0, seed=5)
        regrets.append(float(np.mean(dp.simulate(lr, dp.StochasticLosses(means), seeds=6).final_regret)))
    fit = fit_loglog(horizons, regrets)
    rate = fit_loglog(horizons, [batched_bandit_parameters(4, h, 1.0).regret_model for h in horizons])
    assert 0.5 <= rate["slope"] < 0.55
    assert fit["slope"] <= rate["slope"] + 3 * fit["slope_se"], (regrets, fit, rate)


def test_lazy_regret_slope_in_t_is_within_the_rate() -> None:
    """LazyPrivateExperts on 8 stochastic experts, eps = 1, T = 2^10 .. 2^14:
    slope at most 1/2 (sqrt(T log d) dominates T^(1/3)) + 3 standard errors."""
    means = [0.4] + [0.5] * 7
    horizons = [2**10, 2**11, 2**12, 2**13, 2**14]
    regrets = []
    for horizon in horizons:
        lr = dp.LazyPrivateExperts(8, horizon, 1.0, seed=3)
        regrets.append(float(np.mean(dp.simulate(lr, dp.StochasticLosses(means), seeds=6).final_regret)))
    fit = fit_loglog(horizons, regrets)
    assert fit["slope"] <= 0.5 + 3 * fit["slope_se"], (regrets, fit)
