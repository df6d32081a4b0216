"""Released values without a floating-point channel (issue: released values
and sizes).

A floating-point Laplace draw added to a floating-point value lands on a
grid of doubles that depends on the value (Mironov 2012), so an event on
the low bits of the exact released double can tell neighbours apart even
when every rounded statistic cannot. These audits (dpbandits.audit, 10^6
runs per side) take a statistic of the exact released double y (no
rounding first): -log2(y) when 0 < y < 1/2 and y 2^53 is an odd integer,
else 0. Why it separates the floating-point law: the release 1 + z of a
draw z in (-1, -1/2) is exact (Sterbenz), so it is a multiple of 2^-53
however small it is, and odd multiples are common; a draw z near 0 released
as is (neighbour 0) has a finer grid, and z 2^53 is an odd integer only
with probability about y; the neighbour -1 never releases an odd multiple
there (z - 1 for z in (1, 3/2) is a multiple of 2^-52). The lattice law
(the default) releases multiples of 2^-j, j <= 52, so the statistic is 0
on both sides and must stay within the claim; the floating-point opt-in
must be flagged by the same audit, so the test can fail.

Each mechanism is the learner's own: the noise value is read from the
learner object and fed, unchanged, to the Rust tree counter, which runs the
same code path (round to the lattice, add the node's discrete noise) as the
engines.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.noise import NoiseWire
from dpbandits.privacy.discrete_gaussian import discrete_gaussian_delta_allowance
from dpbandits.privacy.secure import (
    lattice_gaussian,
    lattice_laplace,
    round_to_lattice_steps,
)

N = 1_000_000


def low_bits(x: np.ndarray) -> np.ndarray:
    """-log2(y) > 1 for releases 0 < y < 1/2 with y 2^53 an odd integer (see
    the module docstring); otherwise minus the low 20 bits of y's IEEE
    representation over 2^20, a value in (-1, 0], so that the audit's
    quantile thresholds can isolate the rare events (a lattice release has
    those bits zero: 0 on both sides)."""
    y = np.asarray(x, dtype=np.float64)
    scaled = y * 2.0**53  # exact: a power-of-two scaling
    odd = (y > 0) & (y < 0.5) & (scaled == np.floor(scaled)) & (np.fmod(scaled, 2.0) == 1.0)
    low = (np.ascontiguousarray(y).view(np.uint64) & np.uint64(0xFFFFF)).astype(np.float64) / 2.0**20
    return np.where(odd, -np.log2(np.where(odd, y, 1.0)), -low)


def noise_scale(noise: NoiseWire) -> float:
    """The scale (Laplace b or Gaussian sigma) of a noise value: steps
    2^-exponent for lattice noise, the parameter itself otherwise."""
    if noise[0].startswith("lattice_"):
        _, steps, exponent = noise
        assert isinstance(steps, int) and isinstance(exponent, int)
        return math.ldexp(steps, -exponent)
    return float(noise[1])


def first_release(noise: NoiseWire, values: tuple[float, float]):  # type: ignore[no-untyped-def]
    """The exact release after one addition of values[side] to a counter
    with the given noise, statistic = its low bits."""

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        counter = _core.TreeCounter([], 2, noise, seed)
        out = np.asarray(counter._release_runs(np.array([values[side]]), count))
        return low_bits(out.reshape(count))

    return mechanism


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["lattice", "float"])
def test_private_ucb_released_sums_have_no_low_bit_channel(sampler: str) -> None:
    learner = dp.PrivateUCB(1, 2, 1.0, calibration="tight", sampler=sampler, seed=0)
    result = audit(first_release(learner.noise_wire, (0.0, 1.0)), epsilon=1.0, n=N, seed=11)
    print(f"[audit] PrivateUCB released sum, {sampler}: {result}")
    if sampler == "lattice":
        assert result.epsilon_lower_bound <= 1.0
    else:  # the floating-point opt-in leaks through its low bits
        assert result.epsilon_lower_bound > 2.0


def _gaussian_claim(mu: float, delta: float) -> float:
    from dpbandits.privacy.analytic_gaussian import gaussian_epsilon

    return gaussian_epsilon(mu, delta)


def _releases() -> dict[str, Any]:
    """name -> (learner factory taking the sampler, function of the learner
    returning (noise, shape, padded, horizon, (x0, x1), claim, delta,
    divisor)); noise is the learner's own noise value. x0, x1: the neighbouring first inputs; the statistic is read
    from entry 0 of the first release, divided by ``divisor`` (the batch
    mean of PrivateThompsonSampling divides the released sum by m)."""
    def elim(model: str):  # type: ignore[no-untyped-def]
        def wire(le):  # type: ignore[no-untyped-def]
            b = le.noise_scales[0]
            noise = le.noise_wire[0]
            # The batch's noise value is the calibrated scale on its lattice.
            assert noise_scale(noise) == b
            assert (noise[2] == le.lattice_exponents[0]) if le.lattice_exponents else noise[0] == "laplace"
            return noise, (), False, 2, (-1.0, 1.0), 2.0 / b, 0.0, 1.0
        return wire

    def exp2(le):  # type: ignore[no-untyped-def]
        b = le.noise_scale
        noise = le.noise_wire
        assert noise_scale(noise) == b
        return noise, (), False, 2, (0.0, 1.0), 1.0 / b, 0.0, 1.0

    # FTRL / FTPL: the node release. The published release adds the
    # data-independent padding of Alg. 2 (post-processing of the node; on a
    # lattice it is itself a lattice value).
    def ftrl(le):  # type: ignore[no-untyped-def]
        noise = le.noise_wire
        return noise, (4,), False, 64, (0.0, 1.0), 1.0 / noise_scale(noise), 0.0, 1.0

    def ftpl(le):  # type: ignore[no-untyped-def]
        noise = le.noise_wire
        return noise, (4,), False, 64, (0.0, 1.0), _gaussian_claim(1.0 / noise_scale(noise), 1e-6), 1e-6, 1.0

    def jdp(le):  # type: ignore[no-untyped-def]
        noise = le.calibration.noise.wire()
        # Entry (0, 0) of the symmetric noise has variance 2 sigma^2.
        mu = 1.0 / (noise_scale(noise) * math.sqrt(2.0))
        return noise, (3, 3), False, 2, (0.0, 1.0), _gaussian_claim(mu, 1e-6), 1e-6, 1.0

    def pts(le):  # type: ignore[no-untyped-def]
        # The noise value of the first batch's released sum; the engine
        # publishes it divided by m (post-processing).
        noise = le.batch_noise[0]
        b = noise_scale(noise)
        # Never less noise than the schedule's Laplace(b_1) on the mean.
        m = le.schedule.batch_sizes[0]
        assert b >= le.schedule.batch_scales[0] * m * (1 - 1e-12)
        return noise, (), False, 2, (0.0, 1.0), 1.0 / b, 0.0, 1.0

    def mt(le):  # type: ignore[no-untyped-def]
        noise_a, _ = le.noise_wire
        return noise_a, (), False, 2, (0.0, 1.0), 1.0 / noise_scale(noise_a), 0.0, 1.0

    return {
        "elimination central sums": (lambda s: dp.EliminationLinearBandit(np.eye(2), 1000, "central", 1.0,
                                                                          sampler=s), elim("central")),
        "elimination local report": (lambda s: dp.EliminationLinearBandit(np.eye(2), 1000, "local", 1.0,
                                                                          sampler=s), elim("local")),
        "EXP2 forwarded loss": (lambda s: dp.EXP2(4, 1000, 1.0, sampler=s), exp2),
        "PrivateFTRL released vector": (lambda s: dp.PrivateFTRL(4, 64, 1.0, sampler=s), ftrl),
        "PrivateFTPL released vector": (lambda s: dp.PrivateFTPL(4, 64, 1.0, 0.1, sampler=s), ftpl),
        "JointDPLinUCB released Gram matrix": (lambda s: dp.JointDPLinUCB(2, 1000, 1.0, 0.1, sampler=s), jdp),
        "PrivateThompsonSampling batch mean": (lambda s: dp.PrivateThompsonSampling(2, 10**8, 1.0, sampler=s), pts),
        "PrivateContextualUCB A entry": (lambda s: dp.PrivateContextualUCB(2, 1000, 1.0, sampler=s), mt),
    }


RELEASES = _releases()


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["lattice", "float"])
@pytest.mark.parametrize("name", list(RELEASES))
def test_each_released_value_has_no_low_bit_channel(name: str, sampler: str) -> None:
    make, wire = RELEASES[name]
    noise, shape, padded, horizon, (x0, x1), claim, delta, divisor = wire(make(sampler))
    assert noise[0].startswith("lattice_") == (sampler == "lattice")
    xs = [np.full((1, *shape), x0), np.full((1, *shape), x1)]

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        counter = _core.TreeCounter(list(shape), horizon, noise, seed, padded)
        assert counter.noise == noise
        out = np.asarray(counter._release_runs(xs[side], count)).reshape(count, -1)[:, 0]
        return low_bits(out / divisor)

    result = audit(mechanism, epsilon=claim, delta=delta, n=N, seed=17)
    print(f"[audit] {name}, {sampler}: {result}")
    if sampler == "lattice":
        assert result.epsilon_lower_bound <= claim
    else:  # the floating-point opt-in leaks through its low bits
        assert result.epsilon_lower_bound > claim


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RELEASES))
def test_each_secure_release_meets_its_claim(name: str) -> None:
    # The same mechanisms with secure=True: lattice noise from the
    # operating system (no seed), audited on the exact released value
    # itself (the statistic that sees the noise's scale: a wrong scale
    # would be flagged, as the half-noise test below shows).
    make, wire = RELEASES[name]
    learner = make("lattice")
    secure = type(learner)(**{**learner.config, "secure": True})
    assert secure.secure
    noise, shape, padded, horizon, (x0, x1), claim, delta, divisor = wire(secure)
    assert noise[0].startswith("lattice_")
    xs = [np.full((1, *shape), x0), np.full((1, *shape), x1)]

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        counter = _core.TreeCounter(list(shape), horizon, noise, seed=None, padded=padded, os_entropy=True)
        assert counter.os_entropy and counter.noise == noise
        return np.asarray(counter._release_runs(xs[side], count)).reshape(count, -1)[:, 0] / divisor

    # OS entropy: every run draws afresh, and these mechanisms sit exactly at
    # their claim, so the bound's own error rate is the test's: 1e-4 each.
    result = audit(mechanism, epsilon=claim, delta=delta, n=N, seed=19, confidence=0.9999)
    print(f"[audit] {name}, secure: {result}")
    assert result.epsilon_lower_bound <= claim


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1.0, 0.5])
def test_lattice_release_meets_its_claim_and_half_noise_is_flagged(factor: float) -> None:
    # The first release is one node: (1 / b)-DP, b the node scale (the
    # learner's epsilon covers the tree's two levels). Half the noise is a
    # planted bug the audit of the value itself must flag.
    learner = dp.PrivateUCB(1, 2, 1.0, calibration="tight", seed=0)
    kind, steps, j = learner.noise_wire
    assert kind == "lattice_laplace"
    claim = 1.0 / learner.node_scale
    # The planted bug scales the noise in whole lattice steps (t = steps: the
    # learner's node noise; factor 0.5: half of it, rounded up).
    buggy_steps = math.ceil(steps * factor)

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        counter = _core.TreeCounter([], 2, ("lattice_laplace", buggy_steps, j), seed)
        return np.asarray(counter._release_runs(np.array([float(side)]), count)).reshape(count)

    result = audit(mechanism, epsilon=claim, n=N, seed=13)
    print(f"[audit] lattice release, noise x {factor}: {result}")
    if factor == 1.0:
        assert result.epsilon_lower_bound <= claim
    else:
        assert result.epsilon_lower_bound > claim


def test_released_sums_lie_on_the_lattice_and_repeat_with_the_seed() -> None:
    def run(seed: int) -> list[np.ndarray]:
        learner = dp.PrivateUCB(3, 500, 1.0, calibration="tight", seed=seed)
        env = np.random.default_rng(5)
        out = []
        for _ in range(200):
            learner.select()
            learner.update(float(env.uniform()))
            out.append(learner.released_sums())
        return out

    a, b = run(7), run(7)
    learner = dp.PrivateUCB(3, 500, 1.0, calibration="tight", seed=7)
    j = learner.noise_wire[2]
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)
        steps = np.ldexp(x, j)
        assert np.array_equal(steps, np.round(steps))
    assert not all(np.array_equal(x, y) for x, y in zip(a, run(8), strict=True))


def test_elimination_and_online_releases_lie_on_their_lattice() -> None:
    learner = dp.EliminationLinearBandit(np.eye(2), 400, "central", 1.0, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(400):
        learner.select()
        learner.update(float(rng.uniform(-1, 1)))
    j = learner.lattice_exponents[0]
    sums = np.concatenate([np.asarray(h["released_sums"]) for h in learner.history])
    assert sums.size and np.array_equal(np.ldexp(sums, j), np.round(np.ldexp(sums, j)))
    ftrl = dp.PrivateFTRL(4, 64, 1.0, seed=1)
    assert ftrl.privacy.sampler == "lattice"
    assert dp.SCRiBLe(3, 100, 1.0).privacy.sampler == "float"
    assert dp.JointDPLinUCB(3, 100, 1.0, 0.1, noise="wishart").privacy.sampler == "float"
    assert "not protected against low-bit attacks" in str(dp.PrivateUCB(2, 10, 1.0, sampler="float").privacy)


def test_lattice_calibration_by_hand() -> None:
    # b = 20: 20 = 0.625 * 2^5, j = 20 - 5 = 15; [0, 1] on the lattice: S = 2^15 steps, no allowance.
    n = lattice_laplace(20.0, 1.0, value_range=(0.0, 1.0))
    assert (n.exponent, n.steps, n.scale) == (15, 20 * 2**15, 20.0)
    # Norm-bounded input: S = ceil(2^15) + 1 steps, t = ceil(S * 20) = 655380.
    n = lattice_laplace(20.0, 1.0)
    assert (n.exponent, n.steps) == (15, 655_380) and n.scale == 655_380 / 2**15
    # A range off the lattice: [0, 1 + 2^-17] rounds to [0, 2^15] steps (round half away:
    # 2^15 + 0.25 -> 2^15); the allowance is then below one.
    assert round_to_lattice_steps(1 + 2**-17, 15) == 2**15 and round_to_lattice_steps(-2.5 * 2**-15, 15) == -3
    # Gaussian: sigma = 30 (j = 15), dim 18: ratio 1 + sqrt(18) 2^-15 / 2.
    g = lattice_gaussian(30.0, 2.0, dim=18, kind="symmetric_gaussian")
    assert g.exponent == 15 and g.steps == math.ceil(30 * 2**15 * (1 + math.sqrt(18) * 2**-15 / 2))
    # TV allowance (1 + e^eps) c / (4 s^2): eps = 1, c = 10, s = 2^19.
    assert discrete_gaussian_delta_allowance(1.0, 10) == pytest.approx((1 + math.e) * 10 / 2**40, rel=1e-12)


def test_sampler_argument_is_checked() -> None:
    with pytest.raises(ValueError, match="sampler"):
        dp.PrivateUCB(2, 10, 1.0, sampler="floating")
    with pytest.raises(ValueError, match="Wishart"):
        dp.JointDPLinUCB(3, 100, 1.0, 0.1, noise="wishart", sampler="lattice")
