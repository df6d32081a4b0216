"""The accounting of lattice Gaussian noise (dpbandits.privacy.discrete_gaussian),
checked by exact summation over the integers.

The claims: the discrete Gaussian's Renyi divergence at every order is at
most the continuous Gaussian's, a * k^2 / (2 sigma^2), with equality at
integer orders (hand-computed below); a mechanism calibrated on the
continuous curve at the delta of ``lattice_gaussian_calibration_delta``
is (epsilon, delta)-DP when drawn on the lattice, whatever the number of
draws; and the released doubles of such a learner at delta = 1e-6 meet
their claim under the audit, which flags a planted bug (half the noise).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.privacy.analytic_gaussian import gaussian_delta, gaussian_epsilon, gaussian_mu
from dpbandits.privacy.conversion import max_zcdp_rho
from dpbandits.privacy.discrete_gaussian import (
    discrete_gaussian_delta_allowance,
    lattice_gaussian_calibration_delta,
    renyi_calibration_delta,
)


def _log_weights(sigma: float, half_width: float = 40.0, margin: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Support and unnormalised log-masses of N_Z(0, sigma^2), cut where the
    mass is below e^-800 (far below double precision), with ``margin``
    more points on each side for shifted copies."""
    reach = math.ceil(half_width * sigma) + margin + 2
    k = np.arange(-reach, reach + 1)
    return k, -(k**2) / (2.0 * sigma * sigma)


def _renyi_divergence(order: float, shift: int, sigma: float) -> float:
    """D_order(N_Z(0, sigma^2) || shift + N_Z(0, sigma^2)) by summation."""
    k, log_p = _log_weights(sigma)
    log_q = -((k - shift) ** 2) / (2.0 * sigma * sigma)
    log_z = np.logaddexp.reduce(log_p)
    terms = order * (log_p - log_z) + (1.0 - order) * (log_q - log_z)
    return float(np.logaddexp.reduce(terms)) / (order - 1.0)


def test_renyi_divergence_at_integer_orders_equals_the_continuous_one() -> None:
    # sigma = 1, shift 1, order 2: sum_j p(j)^2 / p(j - 1) = e theta(0) / theta(0)
    # (2 j^2 - (j - 1)^2 = (j + 1)^2 - 2), so D_2 = 1 = 2 * 1 / 2 exactly.
    assert _renyi_divergence(2.0, 1, 1.0) == pytest.approx(1.0, abs=1e-14)
    for order, shift, sigma in [(3.0, 2, 1.5), (5.0, 1, 0.7), (2.0, 7, 4.0)]:
        assert _renyi_divergence(order, shift, sigma) == pytest.approx(
            order * shift**2 / (2 * sigma**2), rel=1e-12
        )


@pytest.mark.parametrize("sigma", [0.4, 0.7, 1.0, 3.0])
@pytest.mark.parametrize("shift", [1, 2, 5])
@pytest.mark.parametrize("order", [1.25, 1.5, 2.5, 7.3])
def test_renyi_divergence_never_exceeds_the_continuous_one(order: float, shift: int, sigma: float) -> None:
    bound = order * shift**2 / (2 * sigma**2)
    exact = _renyi_divergence(order, shift, sigma)
    assert exact <= bound * (1 + 1e-12)
    if sigma >= 1.0:
        # theta(c) / theta(0) >= (1 - 2x) / (1 + 2x) >= exp(-5x), x = exp(-2 pi^2 sigma^2)
        # (Poisson summation; x <= 3e-9 here), so the bound is tight to 5x / (a - 1).
        x = math.exp(-2 * math.pi**2 * sigma**2)
        assert exact >= bound - 5 * x / (order - 1.0) - 1e-13 * bound


def _hockey_stick_2d(epsilon: float, shift: tuple[int, int], sigma: float) -> float:
    """sum over k in Z^2 of (p(k) - e^epsilon p(k - shift))_+, p the product
    discrete Gaussian N_Z(0, sigma^2)^2: the exact delta of the mechanism
    x -> x + noise on integer inputs differing by ``shift``."""
    k, log_w = _log_weights(sigma, half_width=14.0)
    log_z = float(np.logaddexp.reduce(log_w))
    p1 = np.exp(log_w - log_z)
    p = p1[:, None] * p1[None, :]
    q1 = np.exp(-((k - shift[0]) ** 2) / (2 * sigma * sigma) - log_z)
    q2 = np.exp(-((k - shift[1]) ** 2) / (2 * sigma * sigma) - log_z)
    q = q1[:, None] * q2[None, :]
    return float(np.clip(p - math.exp(epsilon) * q, 0.0, None).sum())


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-6), (0.1, 1e-3), (3.0, 1e-9)])
def test_the_renyi_calibration_meets_epsilon_delta_on_the_lattice(epsilon: float, delta: float) -> None:
    # Calibrate as a learner does: mu from the continuous curve at delta',
    # then sigma = ||shift|| / mu on a 2-D integer statistic (shift (3, 4)).
    budget = renyi_calibration_delta(epsilon, delta)
    assert 0.0 < budget <= delta
    mu = gaussian_mu(epsilon, budget)
    assert mu * mu / 2 <= max_zcdp_rho(epsilon, delta) * (1 + 1e-12)
    sigma = 5.0 / mu
    exact = _hockey_stick_2d(epsilon, (3, 4), sigma)
    assert exact <= delta
    # And it is close to the continuous curve's delta at that mu (the
    # lattice differs from the line by O(1 / sigma^2) here, sigma ~ 10-50
    # steps; a learner's sigma spans >= 2^10 steps).
    assert exact == pytest.approx(gaussian_delta(mu, epsilon), rel=1e-2)


def test_calibration_delta_takes_the_better_argument() -> None:
    # Few coordinates on a fine lattice: the coupling's delta - allowance.
    allowance = discrete_gaussian_delta_allowance(1.0, 120, 2.0**19)
    assert allowance == pytest.approx((1 + math.e) * 120 / 2.0**40, rel=1e-12)
    assert lattice_gaussian_calibration_delta(1.0, 1e-6, 120, 2.0**19) == (1e-6 - allowance, "coupling")
    # A factorization counter's 2.1e7 coordinates: the allowance would exceed
    # delta; the Renyi argument does not depend on the count.
    renyi = renyi_calibration_delta(1.0, 1e-6)
    assert lattice_gaussian_calibration_delta(1.0, 1e-6, 21_000_000, 2.0**19) == (renyi, "renyi")
    assert lattice_gaussian_calibration_delta(1.0, 1e-6, 10**15, 2.0**10) == (renyi, "renyi")
    # Below 2^10 steps the coupling bound does not hold: Renyi only.
    assert lattice_gaussian_calibration_delta(1.0, 1e-3, 1, 100.0) == (renyi_calibration_delta(1.0, 1e-3), "renyi")
    # What it costs: sigma grows by mu(eps, delta) / mu(eps, delta'), 3-10% at delta <= 1e-6.
    for eps, dlt in [(1.0, 1e-6), (0.1, 1e-9), (10.0, 1e-12)]:
        ratio = gaussian_mu(eps, dlt) / gaussian_mu(eps, renyi_calibration_delta(eps, dlt))
        assert 1.0 < ratio < 1.11


@pytest.mark.parametrize("name", ["epsilon", "delta", "coordinates", "steps"])
def test_calibration_delta_checks_its_arguments(name: str) -> None:
    args = {"epsilon": 1.0, "delta": 1e-6, "coordinates": 10, "steps": 2.0**19}
    bad = {"epsilon": 0.0, "delta": 1.0, "coordinates": 0, "steps": -1.0}
    with pytest.raises(ValueError, match=name):
        lattice_gaussian_calibration_delta(**{**args, name: bad[name]})


def test_joint_dp_linucb_at_deployment_deltas_reports_what_was_asked() -> None:
    # The defaults a deployment takes, which the coupling allowance alone refused.
    for counter in ("binary", "blt"):
        for delta in (1e-6, 1e-9):
            lr = dp.JointDPLinUCB(5, 10_000, 1.0, delta, calibration="tight", counter=counter)
            assert (lr.privacy.epsilon, lr.privacy.delta) == (1.0, delta)
            assert lr.privacy.sampler == "lattice"
    lr = dp.LocalLinUCB(5, 4000, 1.0, 1e-5)
    assert (lr.privacy.epsilon, lr.privacy.delta) == (1.0, 1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("factor", [1.0, 0.5])
def test_lattice_gaussian_release_at_delta_1e_6_meets_its_claim_and_half_noise_is_flagged(factor: float) -> None:
    # The released Gram entry (0, 0) of JointDPLinUCB (tight, BLT counter,
    # Renyi-calibrated at delta = 1e-6), audited on the exact released
    # doubles of one node with inputs 0 and 10: the node is a Gaussian
    # mechanism with mu = 10 / (sigma' sqrt 2) (the diagonal's variance is
    # 2 sigma'^2), whose claim at delta = 1e-6 is gaussian_epsilon(mu, 1e-6).
    learner = dp.JointDPLinUCB(2, 10_000, 1.0, 1e-6, calibration="tight", counter="blt", seed=0)
    kind, steps, exponent = learner.calibration.noise.wire()
    assert kind == "lattice_symmetric_gaussian"
    mu = 10.0 / (math.ldexp(steps, -exponent) * math.sqrt(2.0))
    claim = gaussian_epsilon(mu, 1e-6)
    noise = (kind, round(steps * factor), exponent)

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        counter = _core.TreeCounter([3, 3], 2, noise, seed)
        x = np.zeros((1, 3, 3))
        x[0, 0, 0] = 10.0 * side
        return np.asarray(counter._release_runs(x, count)).reshape(count, -1)[:, 0]

    result = audit(mechanism, epsilon=claim, delta=1e-6, n=1_000_000, seed=61)
    print(f"[audit] JointDPLinUCB lattice release at delta 1e-6, noise x {factor}: {result}")
    if factor == 1.0:
        assert result.epsilon_lower_bound <= claim
    else:
        assert result.epsilon_lower_bound > claim


def test_a_vanishing_epsilon_terminates_with_a_delta_only_guarantee() -> None:
    # At epsilon = 5e-324 Bun-Steinke's starting rho underflows to 0; the
    # search must still terminate. rho-zCDP with rho small enough
    # is (0, delta)-DP (CKS 2020, Cor. 13 has a negative infimum), so the
    # answer is positive, and the Renyi calibration still gives a delta'.
    from dpbandits.privacy.conversion import zcdp_to_dp_epsilon_cks

    rho = max_zcdp_rho(5e-324, 1e-6)
    assert 0.0 < rho < 1e-10 and zcdp_to_dp_epsilon_cks(rho, 1e-6) == 0.0
    assert 0.0 < renyi_calibration_delta(5e-324, 1e-6) <= 1e-6
    budget, argument = lattice_gaussian_calibration_delta(5e-324, 1e-6, 10**9, 2.0**10)
    assert (argument, budget > 0.0) == ("renyi", True)
