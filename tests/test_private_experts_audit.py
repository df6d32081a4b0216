"""Privacy audit of PrivateStochasticExperts on its exact released values
(dpbandits.audit): one report-noisy-min selection, computed by the
engine's own selection code (``_selection_runs``) with the learner's own
noise value (``noise_wire``, read from the learner, never re-derived here).

Neighbouring batches of one round, d = 32 experts: side 0 has loss vector
(0, 1, ..., 1), side 1 (1, 0, ..., 0) (every score moves by the
sensitivity 1, expert 0 against all others: the case where the factor 2 of
report-noisy-min is attained in the tail). The statistic is the indicator
"expert 0 selected". A correct selection must not exceed its claim; the
planted bug (half the noise) must be flagged. N = 10^6 outputs per side
(+ N/2 for the event selection). Each loss vector enters exactly one
selection, so this selection's epsilon is the learner's (parallel
composition, dpbandits.privacy.private_experts).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.learners.private_experts import PrivateStochasticExperts

N = 1_000_000
D = 32
# Pure DP attained in the tails: a 95% lower bound may exceed a tight claim
# by chance; at 0.9999 a correct mechanism fails with probability <= 1e-4
# while the planted bug (eps 2 at claim 1) is still flagged.
AT_CLAIM = 0.9999


def selection(wire: tuple, horizon: int):  # type: ignore[no-untyped-def, type-arg]
    batches = [np.ones((1, D)), np.zeros((1, D))]
    batches[0][0, 0], batches[1][0, 0] = 0.0, 1.0

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        engine = _core.StochasticExpertsEngine(D, horizon, noise=wire, seed=seed)
        return (engine._selection_runs(batches[side], count) == 0).astype(np.float64)

    return mechanism


def _report(name: str, result, record_property) -> None:  # type: ignore[no-untyped-def]
    line = f"[audit] {name}: {result}"
    print(line)
    record_property(name, line)


def test_selection_runs_use_the_learners_noise_and_code() -> None:
    lr = PrivateStochasticExperts(D, 1000, 1.0, seed=0)
    mech = selection(lr.noise_wire, lr.horizon)
    a, b = mech(0, 20_000, 1), mech(1, 20_000, 1)
    # Expert 0 is favoured on side 0 (loss 0) and disfavoured on side 1.
    assert a.mean() > b.mean() > 0.0
    engine = _core.StochasticExpertsEngine(D, 1000, noise=lr.noise_wire, seed=0)
    with pytest.raises(ValueError, match="losses"):
        engine._selection_runs(np.zeros((1, D + 1)), 3)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 0.25])
def test_selection_meets_epsilon_and_half_noise_is_flagged(epsilon: float, record_property) -> None:  # type: ignore[no-untyped-def]
    lr = PrivateStochasticExperts(D, 10_000, epsilon, seed=0)
    eps, wire = lr.privacy.epsilon, lr.noise_wire
    assert eps <= epsilon and wire[0] == "lattice_laplace"
    ok = audit(selection(wire, lr.horizon), epsilon=eps, n=N, seed=4201, confidence=AT_CLAIM)
    _report(f"PrivateStochasticExperts selection, eps {eps:g}, {wire}", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.6 * eps
    kind, steps, exponent = wire
    bug = audit(selection((kind, steps // 2, exponent), lr.horizon), epsilon=eps, n=N, seed=4202)
    _report(f"PrivateStochasticExperts selection, eps {eps:g}, planted bug: half the noise", bug, record_property)
    assert not bug.passed


# --- LazyPrivateExperts: the coin and the draw of one batch -------------------------
#
# One batch of B = 1 round, d = 2 experts, at most one switch: the released
# values are x_0 (the first expert, data independent) and x_1. Side 0 has
# loss vector (0, 1), side 1 (1, 0). The statistic (CODES) puts
# {x_0 = 0, x_1 = 1} at the top, so a threshold event isolates it: a switch away
# from an expert with loss 0, which only the switching floor gamma allows
# (the (L1) term of dpbandits.privacy.private_experts). The claim is the
# pure accounting eps_coin + 2 eta for one draw; the planted bug drops the
# floor (gamma ~ 0), which that term exists for. The engine draws exactly,
# as the learner's default does: the loss lattice of the learner
# (lazy_lattice_exponent), dyadic eta and gamma, exact keep coins and
# rejection-sampled redraws.


#: (x_0, x_1) -> statistic: the switch away from expert 0 is the largest value.
CODES = ((0.0, 3.0), (2.0, 1.0))


def lazy_release(eta: float, gamma: float, lattice: int | None):  # type: ignore[no-untyped-def]
    rows = [np.array([0.0, 1.0]), np.array([1.0, 0.0])]

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        out = np.empty(count)
        loss = rows[side]
        engine_cls = _core.LazyExpertsEngine
        for r in range(count):
            e = engine_cls(2, 2, 1, eta, gamma, 1, lattice=lattice, seed=(seed * 10_000_019 + r) % 2**64)
            x0 = e.select()
            e.observe(loss)
            out[r] = CODES[x0][e.select()]
        return out

    return mechanism


def test_the_lazy_audit_runs_the_learners_exact_engine() -> None:
    from dpbandits import LazyPrivateExperts
    from dpbandits.privacy.private_experts import lazy_lattice_exponent

    lr = LazyPrivateExperts(2, 2, 4.0, seed=0)
    assert lr.sampler == "lattice" and lr.lattice == lazy_lattice_exponent(2) and lr.privacy.sampler == "lattice"
    a, b = lazy_release(0.5, 0.3125, lr.lattice)(0, 20_000, 1), lazy_release(0.5, 0.3125, lr.lattice)(1, 20_000, 1)
    # {x_0 = 0, x_1 = 1} (a switch away from expert 0) is rarer where expert 0 has loss 0 (side 0).
    assert (a == 3.0).mean() < (b == 3.0).mean()
    with pytest.raises(ValueError, match="gamma"):
        _core.LazyExpertsEngine(2, 2, 1, 0.5, 1e-10, 1, lattice=lr.lattice, seed=0)


@pytest.mark.slow
def test_lazy_batch_meets_its_accounting_and_a_dropped_floor_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    from dpbandits.privacy.private_experts import lazy_epsilon, lazy_lattice_exponent

    eta, gamma, lattice = 0.5, 0.3125, lazy_lattice_exponent(2)
    claim = lazy_epsilon(eta, gamma, 1, 1e-6)
    assert claim == pytest.approx(np.log1p(eta * (1 - gamma) / gamma) + 2 * eta)
    ok = audit(lazy_release(eta, gamma, lattice), epsilon=claim, n=N, seed=4301, confidence=AT_CLAIM)
    _report(f"LazyPrivateExperts one batch (exact draws), eta {eta}, gamma {gamma}, claim {claim:.3f}", ok,
            record_property)
    # The event {x_0 = 0, x_1 = 1} has probability gamma / (1 + e^eta) / 2 on
    # side 0 and (1 - (1 - gamma) e^-eta) / (1 + e^-eta) / 2 on side 1:
    # log ratio 1.124, what a correct audit finds (the claim covers the draw's
    # 2 eta as well).
    exact = np.log((1 - (1 - gamma) * np.exp(-eta)) / (1 + np.exp(-eta)) / (gamma / (1 + np.exp(eta))))
    assert exact == pytest.approx(1.124, abs=1e-3)
    assert ok.passed and ok.epsilon_lower_bound > exact - 0.1
    bug = audit(lazy_release(eta, 2.0**-13, lattice), epsilon=claim, n=N, seed=4302)
    _report("LazyPrivateExperts one batch (exact draws), planted bug: no switching floor", bug, record_property)
    assert not bug.passed


# --- BatchedPrivateEXP3: the noisy batch sum, read back from the released policy ---
#
# K = 2, one batch of tau = 1 round: EXP3's next distribution p is a
# strictly monotone function of the noisy value v = l + Z it received
# (log p_0 - log p_1 moves by -eta v / p(i) in the played arm's favour),
# so s = (log p_0 - log p_1) (+1 if arm 0 was played, -1 otherwise) is a
# released statistic as informative as v. Losses 0 (side 0) vs 1 (side 1).


def batched_release(wire: tuple):  # type: ignore[no-untyped-def, type-arg]
    losses = [0.0, 1.0]

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        p0, sign = np.empty(count), np.empty(count)
        engine_cls, loss = _core.BatchedExp3Engine, losses[side]
        for r in range(count):
            e = engine_cls(2, 2, 1, 0.5, 0.1, noise=wire, seed=(seed * 10_000_019 + r) % 2**64)
            arm = e.select()
            e.observe(arm, loss)
            p0[r], sign[r] = e.probabilities()[0], 1.0 - 2.0 * arm
        return (np.log(p0) - np.log1p(-p0)) * sign

    return mechanism


@pytest.mark.slow
def test_batched_exp3_batch_sum_meets_epsilon_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    from dpbandits.learners.private_experts import BatchedPrivateEXP3

    lr = BatchedPrivateEXP3(2, 1000, 1.0, seed=0)
    eps, wire = lr.privacy.epsilon, lr.noise_wire
    ok = audit(batched_release(wire), epsilon=eps, n=N, seed=4401, confidence=AT_CLAIM)
    _report(f"BatchedPrivateEXP3 batch sum, {wire}", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.9 * eps
    kind, steps, exponent = wire
    bug = audit(batched_release((kind, steps // 2, exponent)), epsilon=eps, n=N, seed=4402)
    _report("BatchedPrivateEXP3 batch sum, planted bug: half the noise", bug, record_property)
    assert not bug.passed


# --- PrivateDartboardExperts: the switching test (D1) and one draw (D2) -------------
#
# (D1) The switching test of one batch of one round, read with the
# learner's own test noise (``noise_wire``): the current expert's batch
# loss is 0 (side 0) or 1 (side 1). eta = 64 and shift 0 make the test
# nearly the threshold event {a + Z <= 0} (keep) whose probability moves
# by the Laplace ratio in the tail, so a correct test is audited close to
# its claim eps_test = 2^j / t; the planted bug halves the noise.
# (D2) One exponential-mechanism draw of d = 32 experts from cumulative
# losses (0, 1, ..., 1) vs (1, 0, ..., 0): the statistic "expert 0 drawn"
# has log ratio eta + ln((31 + e^-eta) / (1 + 31 e^-eta)) = 0.967 at
# eta = 1/2, near the claim 2 eta; the planted bug draws with 2 eta.


def dartboard_test(wire: tuple):  # type: ignore[no-untyped-def, type-arg]
    rows = [np.array([0.0, 1.0]), np.array([1.0, 0.0])]

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        engine = _core.DartboardExpertsEngine(2, 10, 1, 64.0, 0.0, 10, noise=wire, seed=seed)
        return engine._switch_runs(rows[side][:1], count).astype(np.float64)

    return mechanism


def dartboard_draw(eta: float):  # type: ignore[no-untyped-def]
    rows = [np.ones((1, D)), np.zeros((1, D))]
    rows[0][0, 0], rows[1][0, 0] = 0.0, 1.0

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        engine = _core.DartboardExpertsEngine(D, 10, 1, eta, 0.0, 10, seed=seed)
        return (engine._draw_runs(rows[side], count) == 0).astype(np.float64)

    return mechanism


@pytest.mark.slow
def test_dartboard_test_and_draw_meet_their_accounting_and_planted_bugs_are_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    from dpbandits.learners.private_experts import PrivateDartboardExperts

    lr = PrivateDartboardExperts(D, 10_000, 4.0, seed=0)
    kind, steps, exponent = lr.noise_wire
    claim = 2.0**exponent / steps
    ok = audit(dartboard_test(lr.noise_wire), epsilon=claim, n=N, seed=4501, confidence=AT_CLAIM)
    _report(f"PrivateDartboardExperts switching test, {lr.noise_wire}, claim {claim:.3f}", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.6 * claim
    bug = audit(dartboard_test((kind, steps // 2, exponent)), epsilon=claim, n=N, seed=4502)
    _report("PrivateDartboardExperts switching test, planted bug: half the noise", bug, record_property)
    assert not bug.passed
    eta = 0.5
    exact = eta + np.log((31 + np.exp(-eta)) / (1 + 31 * np.exp(-eta)))
    assert exact == pytest.approx(0.967, abs=1e-3)
    ok = audit(dartboard_draw(eta), epsilon=2 * eta, n=N, seed=4503, confidence=AT_CLAIM)
    _report(f"PrivateDartboardExperts draw, eta {eta}, claim {2 * eta}", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > exact - 0.1
    bug = audit(dartboard_draw(2 * eta), epsilon=2 * eta, n=N, seed=4504)
    _report("PrivateDartboardExperts draw, planted bug: twice eta", bug, record_property)
    assert not bug.passed


# --- LazyPrivateOCO: one batch on the ball of R^1 ----------------------------------
#
# n = 1 (the ball is [-1, 1]), one batch of B = 1 round, at most one
# switch: the released values are x_0 (uniform, data independent) and x_1.
# Side 0 has loss +1, side 1 loss -1. The statistic (1 - x_0) if the point
# switched, else 0, puts "switched away from x_0 near -1" at the top: on
# side 0 the batch loss <g, x_0> + ||g|| = x_0 + 1 is near 0 there and
# only the floor gamma makes a switch likely; on side 1 it is near 2. The
# claim is the pure accounting eps_coin + 4 eta for one draw ((B1)-(B2));
# the planted bug drops the floor (gamma ~ 0).


def lazy_ball_release(eta: float, gamma: float, lattice: tuple[int, int] | None = None):  # type: ignore[no-untyped-def]
    rows = [np.array([1.0]), np.array([-1.0])]

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        out = np.empty(count)
        loss, engine_cls = rows[side], _core.LazyBallEngine
        for r in range(count):
            e = engine_cls(1, 2, 1, eta, gamma, 1, lattice=lattice, seed=(seed * 10_000_019 + r) % 2**64)
            x0 = float(e.decision()[0])
            e.observe(loss)
            out[r] = (1.0 - x0) if e.switches else 0.0
        return out

    return mechanism


def test_the_exact_lazy_ball_audit_runs_the_learners_exact_engine_on_released_lattice_points() -> None:
    from dpbandits import LazyPrivateOCO
    from dpbandits.privacy.private_experts import BALL_POINT_BITS, lazy_ball_lattice_exponent

    lr = LazyPrivateOCO(1, 2, 4.0, seed=0)
    assert lr.sampler == "lattice" and lr.privacy.sampler == "lattice"
    assert lr.lattice == (lazy_ball_lattice_exponent(2), BALL_POINT_BITS)
    a = lazy_ball_release(0.5, 0.3125, lr.lattice)(0, 20_000, 1)
    b = lazy_ball_release(0.5, 0.3125, lr.lattice)(1, 20_000, 1)
    # Switching away from x_0 near -1 is rarer where the loss is +1 (side 0).
    assert ((a > 1.5).mean() < (b > 1.5).mean())
    # The released statistic is a function of lattice points: 1 - x_0 on 2^-16.
    assert np.array_equal(a * 2**16, np.round(a * 2**16))


@pytest.mark.slow
def test_lazy_ball_batch_meets_its_accounting_and_a_dropped_floor_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    from dpbandits.privacy.private_experts import lazy_ball_epsilon

    eta, gamma = 0.5, 0.3
    claim = lazy_ball_epsilon(eta, gamma, 1, 1e-6)
    assert claim == pytest.approx(max(4 * eta, np.log1p(4 * eta * (1 - gamma) / gamma)) + 4 * eta)
    ok = audit(lazy_ball_release(eta, gamma), epsilon=claim, n=N, seed=4601, confidence=AT_CLAIM)
    _report(f"LazyPrivateOCO one batch, eta {eta}, gamma {gamma}, claim {claim:.3f}", ok, record_property)
    # The switch from x_0 -> -1 has probability gamma on side 0 and
    # 1 - (1 - gamma) e^(-2 eta) on side 1: log ratio 0.906 in the limit.
    limit = np.log((1 - (1 - gamma) * np.exp(-2 * eta)) / gamma)
    assert limit == pytest.approx(0.906, abs=1e-3)
    assert ok.passed and ok.epsilon_lower_bound > limit - 0.25
    bug = audit(lazy_ball_release(eta, 1e-4), epsilon=claim, n=N, seed=4602)
    _report("LazyPrivateOCO one batch, planted bug: no switching floor", bug, record_property)
    assert not bug.passed


@pytest.mark.slow
def test_exact_lazy_ball_batch_meets_its_accounting_and_a_dropped_floor_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    # The default exact draws (the released x_0, x_1 are lattice points of
    # [-1, 1]; the coin has the public shift B = 1 = ||g|| here): the same
    # claim, limit and planted bug as the floating-point audit above.
    from dpbandits.privacy.private_experts import BALL_POINT_BITS, lazy_ball_epsilon, lazy_ball_lattice_exponent

    eta, gamma, lattice = 0.5, 0.3125, (lazy_ball_lattice_exponent(2), BALL_POINT_BITS)
    claim = lazy_ball_epsilon(eta, gamma, 1, 1e-6)
    ok = audit(lazy_ball_release(eta, gamma, lattice), epsilon=claim, n=N, seed=4603, confidence=AT_CLAIM)
    _report(f"LazyPrivateOCO one batch (exact draws), eta {eta}, gamma {gamma}, claim {claim:.3f}", ok,
            record_property)
    limit = np.log((1 - (1 - gamma) * np.exp(-2 * eta)) / gamma)
    assert ok.passed and ok.epsilon_lower_bound > limit - 0.25
    bug = audit(lazy_ball_release(eta, 2.0**-13, lattice), epsilon=claim, n=N, seed=4604)
    _report("LazyPrivateOCO one batch (exact draws), planted bug: no switching floor", bug, record_property)
    assert not bug.passed
