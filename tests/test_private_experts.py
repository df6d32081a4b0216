"""PrivateStochasticExperts (Asi, Feldman, Koren & Talwar 2023, Sec. 3):
the privacy constants against hand-computed values, the online protocol,
checkpoints, forks, hostile input, the simulation loop and the regret
slope in T."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.errors import CheckpointError, StateError
from dpbandits.experiments.report import fit_loglog, mean_se
from dpbandits.privacy.private_experts import (
    agarwal_singh_rate,
    batch_lengths,
    report_noisy_min_epsilon,
    report_noisy_min_noise,
    stochastic_rate,
)

BASIS = "test"


# --- privacy constants --------------------------------------------------------------


def test_report_noisy_min_constants_match_hand_computed_values() -> None:
    # Laplace(b) on scores of sensitivity 1: epsilon = 2 / b.
    assert report_noisy_min_epsilon(2.0) == 1.0
    assert report_noisy_min_epsilon(40.0) == 0.05
    # eps = 1: b = 2 = 0.5 * 2^2, j = 20 - 2 = 18, t = 2 * 2^18 = 524288 steps, eps met = 2^19 / t = 1.
    n = report_noisy_min_noise(1.0, 1000, "lattice", BASIS)
    assert n.wire == ("lattice_laplace", 524288, 18)
    assert n.guarantee.epsilon == 1.0 and n.guarantee.delta == 0.0 and n.guarantee.sampler == "lattice"
    # eps = 0.05: b = 40 = 0.625 * 2^6, j = 14, t = 40 * 2^14 = 655360, eps met = 2^15 / 655360 = 0.05.
    n = report_noisy_min_noise(0.05, 2**16, "lattice", BASIS)
    assert n.wire == ("lattice_laplace", 655360, 14)
    assert n.guarantee.epsilon == 2**15 / 655360
    # eps = 0.3: b = 6.67 = 0.833 * 2^3, j = 17, t = ceil(6.666... * 2^17) = 873814, eps met 2^18 / t < 0.3.
    n = report_noisy_min_noise(0.3, 1000, "lattice", BASIS)
    assert n.wire == ("lattice_laplace", 873814, 17)
    assert n.guarantee.epsilon == 2**18 / 873814 < 0.3
    f = report_noisy_min_noise(0.5, 1000, "float", BASIS)
    assert f.wire == ("laplace", 4.0) and f.guarantee.epsilon == 0.5 and f.guarantee.sampler == "float"
    with pytest.raises(ValueError, match="epsilon"):
        report_noisy_min_noise(0.0, 10, "lattice", BASIS)


def test_batches_and_rates() -> None:
    assert batch_lengths(100) == [1, 2, 4, 8, 16, 32, 37]
    assert batch_lengths(8, first_batch=3) == [3, 5]
    assert sum(batch_lengths(2**16)) == 2**16 and len(batch_lengths(2**16)) == 17
    with pytest.raises(ValueError, match="first_batch"):
        batch_lengths(4, first_batch=5)
    t, d, eps = 2**16, 1024, 0.05
    assert stochastic_rate(t, d, eps) == pytest.approx(math.sqrt(t * math.log(d)) + math.log(d) * math.log(t) / eps)
    assert stochastic_rate(t, d, None) == pytest.approx(math.sqrt(t * math.log(d)))
    assert agarwal_singh_rate(t, d, eps) > 100 * stochastic_rate(t, d, eps)


# --- the learner --------------------------------------------------------------------


def _losses(rounds: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    means = np.full(d, 0.5)
    means[0] = 0.3
    return (rng.random((rounds, d)) < means).astype(np.float64)


def test_the_expert_changes_only_at_batch_ends_and_update_many_equals_the_loop() -> None:
    d, horizon = 6, 200
    losses = _losses(horizon, d, 1)
    a = dp.PrivateStochasticExperts(d, horizon, 0.5, seed=3)
    played = []
    for row in losses:
        played.append(a.select())
        a.update(row)
    ends = np.cumsum(batch_lengths(horizon))
    changes = [t for t in range(1, horizon) if played[t] != played[t - 1]]
    assert set(changes) <= set(ends.tolist())
    assert a.selections == len(ends)
    b = dp.PrivateStochasticExperts(d, horizon, 0.5, seed=3)
    np.testing.assert_array_equal(b.update_many(losses), played)
    assert b.t == a.t == horizon
    with pytest.raises(StateError, match="horizon"):
        a.update(losses[0])


def test_noise_wire_and_guarantee_come_from_the_privacy_layer() -> None:
    lr = dp.PrivateStochasticExperts(16, 2**16, 0.05, seed=0)
    assert lr.noise_wire == report_noisy_min_noise(0.05, 2**16, "lattice", BASIS).wire
    assert lr.privacy.epsilon <= 0.05 and lr.privacy.delta == 0.0 and "Asi" in lr.privacy.basis
    assert "Lattice" in lr._engine.noise_parameters()["noise"]
    fl = dp.PrivateStochasticExperts(16, 1000, 1.0, sampler="float")
    assert fl.noise_wire == ("laplace", 2.0)
    np_ = dp.PrivateStochasticExperts(16, 1000, None)
    assert not np_.privacy.is_private and np_.noise_wire == ("zero",)


def test_hostile_inputs_are_refused_with_named_arguments() -> None:
    with pytest.raises(ValueError, match="`n`"):
        dp.PrivateStochasticExperts(1, 100, 1.0)
    with pytest.raises(ValueError, match="`horizon`"):
        dp.PrivateStochasticExperts(4, 1, 1.0)
    with pytest.raises(ValueError, match="`epsilon`"):
        dp.PrivateStochasticExperts(4, 100, -1.0)
    with pytest.raises(ValueError, match="`first_batch`"):
        dp.PrivateStochasticExperts(4, 100, 1.0, first_batch=101)
    with pytest.raises(ValueError, match="`sampler`"):
        dp.PrivateStochasticExperts(4, 100, 1.0, sampler="exact")
    with pytest.raises(ValueError, match="`bounds`"):
        dp.PrivateStochasticExperts(4, 100, 1.0, bounds="wrap")
    with pytest.raises(ValueError, match="secure"):
        dp.PrivateStochasticExperts(4, 100, None, secure=True)
    lr = dp.PrivateStochasticExperts(4, 100, 1.0, bounds="error", seed=1)
    for bad in ([0.1, 0.2, 0.3], [0.1, np.nan, 0.2, 0.3], [0.1, 1.5, 0.2, 0.3], [[0.1] * 4]):
        with pytest.raises(ValueError, match="losses"):
            lr.update(bad)
    with pytest.raises(ValueError, match="losses"):
        lr.update_many(np.zeros((3, 5)))
    assert lr.t == 0
    clip = dp.PrivateStochasticExperts(4, 100, 1.0, seed=1)
    clip.update([2.0, -1.0, 0.5, 0.5])
    assert clip.t == 1


def test_checkpoint_round_trip_continues_bit_identically(tmp_path) -> None:  # type: ignore[no-untyped-def]
    d, horizon = 8, 300
    losses = _losses(horizon, d, 2)
    a = dp.PrivateStochasticExperts(d, horizon, 0.2, seed=5)
    a.update_many(losses[:77])
    path = tmp_path / "experts.ckpt"
    a.save(path)
    # Research replays continue bit-identically (a restore for use re-keys).
    b = dp.PrivateStochasticExperts.load(path, replay=True)
    with dp.research_replay():
        c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.update_many(losses[77:]), b.update_many(losses[77:]))
    assert c.t == 77
    raw = bytes(c._engine.to_bytes())
    for bad in (raw[:-5], b"\x09" + raw[1:], b""):
        with pytest.raises(ValueError, match="state"):
            type(c._engine).from_bytes(bad)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError):
        dp.PrivateStochasticExperts.load(path)


def test_fork_draws_independent_noise() -> None:
    d, horizon = 32, 2**12
    losses = np.full((horizon, d), 0.5)  # all experts equal: selections are pure noise
    a = dp.PrivateStochasticExperts(d, horizon, 0.5, seed=7)
    a.update_many(losses[:15])
    f = a.fork(seed=8)
    same = a.fork(seed=8)
    pa, pf, ps = (x.update_many(losses[15:]) for x in (a, f, same))
    assert not np.array_equal(pa, pf)
    np.testing.assert_array_equal(pf, ps)  # a fork is reproducible from its seed


def test_runs_in_simulate_and_learns_the_best_expert() -> None:
    d, horizon = 16, 2**14
    means = [0.4] + [0.5] * (d - 1)
    lr = dp.PrivateStochasticExperts(d, horizon, 0.5, seed=0)
    res = dp.simulate(lr, dp.StochasticLosses(means), seeds=4)
    m, _ = mean_se(res.final_regret)
    # Far below 0.1 T (playing a wrong expert throughout) and below the rate with constant 2.
    assert m < 2 * stochastic_rate(horizon, d, 0.5) < 0.1 * horizon
    assert res.guarantee == lr.privacy


def test_regret_slope_in_t_is_within_the_rate_exponent() -> None:
    """Regret against T = 2^10 .. 2^14 (d = 8, eps = 0.5, 8 seeds each):
    the log-log slope of the mean regret is at most 1/2 (the exponent of
    sqrt(T log d)) + 3 standard errors of the fitted slope."""
    d, eps = 8, 0.5
    means = [0.45] + [0.5] * (d - 1)
    horizons = [2**10, 2**11, 2**12, 2**13, 2**14]
    regrets = []
    for horizon in horizons:
        lr = dp.PrivateStochasticExperts(d, horizon, eps, seed=11)
        regrets.append(float(np.mean(dp.simulate(lr, dp.StochasticLosses(means), seeds=8).final_regret)))
    fit = fit_loglog(horizons, regrets)
    assert fit["slope"] <= 0.5 + 3 * fit["slope_se"], (regrets, fit)


def test_secure_mode_draws_from_the_operating_system() -> None:
    lr = dp.PrivateStochasticExperts(4, 100, 1.0, secure=True)
    assert lr.secure and "operating-system" in lr.privacy.basis
    lr.update_many(_losses(10, 4, 0))
    with pytest.raises(ValueError, match="secure"):
        dp.PrivateStochasticExperts(4, 100, 1.0, sampler="float", secure=True)
