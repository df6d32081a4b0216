"""Empirical privacy audits of the package's mechanisms (dpbandits.audit).

Each audit draws N = 10^6 outputs per side (plus N/2 per side to choose the
event) and reports a 95% Clopper–Pearson lower bound on epsilon at the
claimed delta. A correct mechanism must not exceed its claim (failure
probability <= 5% per audit, at fixed seeds: deterministic); a planted bug
(half the noise) must be flagged. The numbers are printed (run with -s).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbandits.audit import (
    audit,
    clopper_pearson,
    gaussian_tree_mechanism,
    laplace_tree_mechanism,
    wishart_node_mechanism,
)
from dpbandits.privacy import gaussian_tree_sigma, laplace_tree_scale, tree_levels
from dpbandits.privacy.calibration import wishart_node_degrees_of_freedom

N = 1_000_000
HORIZON = 8  # leaf 1 lies in the 4 nodes of levels 0..3


def _report(name: str, result, record_property) -> None:  # type: ignore[no-untyped-def]
    line = f"[audit] {name}: {result}"
    print(line)
    record_property(name, line)


# --- fast checks of the machinery ------------------------------------------


def test_clopper_pearson_matches_the_exact_binomial_tail() -> None:
    from scipy.stats import binom

    lo, hi = clopper_pearson(30, 100, 0.975)
    # The one-sided bounds are where the binomial tail equals 2.5%.
    assert binom.sf(29, 100, lo) == pytest.approx(0.025, rel=1e-6)
    assert binom.cdf(30, 100, hi) == pytest.approx(0.025, rel=1e-6)
    assert clopper_pearson(0, 100, 0.975)[0] == 0.0
    assert clopper_pearson(100, 100, 0.975)[1] == 1.0


def test_audit_of_a_numpy_laplace_is_close_below_its_epsilon() -> None:
    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        return side + np.random.default_rng(seed).laplace(scale=2.0, size=count)

    r = audit(mechanism, epsilon=0.5, n=100_000, seed=1)
    print(f"[audit] numpy Laplace(2), Delta = 1, N = 1e5: {r}")
    assert r.passed and r.epsilon_lower_bound > 0.35


def test_audit_refuses_bad_arguments() -> None:
    def m(side: int, count: int, seed: int) -> np.ndarray:
        return np.zeros(count)

    for kwargs in ({"epsilon": 0.0}, {"epsilon": 1.0, "delta": 1.0}, {"epsilon": 1.0, "n": 10},
                   {"epsilon": 1.0, "confidence": 1.0}):
        with pytest.raises(ValueError):
            audit(m, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="returned 1 outputs"):
        audit(lambda s, c, seed: np.zeros(1), epsilon=1.0, n=1000)
    # Identical outputs on both sides: no event separates them.
    r = audit(m, epsilon=1.0, n=1000)
    assert r.epsilon_lower_bound <= 0.0 and r.passed


# --- the audits at N = 10^6 (slow) -------------------------------------------


@pytest.mark.slow
def test_laplace_tree_meets_its_pure_epsilon_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    eps = 1.0
    scale = laplace_tree_scale(HORIZON, eps, calibration="tight")  # levels / eps = 4
    ok = audit(laplace_tree_mechanism(HORIZON, scale), epsilon=eps, n=N, seed=11)
    _report("Laplace tree, tight calibration", ok, record_property)
    assert ok.passed
    assert ok.epsilon_lower_bound > 0.9  # the bound is informative: the calibration is tight
    bug = audit(laplace_tree_mechanism(HORIZON, scale / 2), epsilon=eps, n=N, seed=12)
    _report("Laplace tree, planted bug: half the noise", bug, record_property)
    assert not bug.passed


@pytest.mark.slow
def test_audit_flags_the_paper_laplace_tree_count(record_property) -> None:  # type: ignore[no-untyped-def]
    # Mishra & Thakurta / Agarwal & Singh count log2 T nodes per leaf; a leaf
    # lies in tree_levels(T) = 4 nodes at T = 8, so the true epsilon is 4/3.
    eps = 1.0
    scale = laplace_tree_scale(HORIZON, eps, calibration="paper")
    assert tree_levels(HORIZON) / (scale) == pytest.approx(4 / 3)
    r = audit(laplace_tree_mechanism(HORIZON, scale), epsilon=eps, n=N, seed=13)
    _report("Laplace tree, paper calibration (log2 T count)", r, record_property)
    assert not r.passed


@pytest.mark.slow
def test_gaussian_tree_meets_its_tight_epsilon_delta_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    eps, delta = 1.0, 1e-3
    sigma = gaussian_tree_sigma(HORIZON, eps, delta, 1.0, calibration="tight")
    ok = audit(gaussian_tree_mechanism(HORIZON, sigma), epsilon=eps, delta=delta, n=N, seed=21)
    _report("Gaussian tree, tight calibration", ok, record_property)
    assert ok.passed
    assert ok.epsilon_lower_bound > 0.8
    bug = audit(gaussian_tree_mechanism(HORIZON, sigma / 2), epsilon=eps, delta=delta, n=N, seed=22)
    _report("Gaussian tree, planted bug: half the noise", bug, record_property)
    assert not bug.passed


@pytest.mark.slow
def test_wishart_node_meets_its_claim_and_a_missing_privacy_term_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    # One node of Shariff & Sheffet's Wishart tree, d = 1 (2 x 2 Gram
    # matrix), rows of norm Ltilde = 1, at Thm 8's (eps0, delta0) = (1, 1e-3).
    eps, delta, d = 1.0, 1e-3, 1
    k0 = wishart_node_degrees_of_freedom(d, eps, delta)
    assert k0 == 2 + math.ceil(28 * math.log(4000))
    ok = audit(wishart_node_mechanism(d + 1, 1.0, float(k0)), epsilon=eps, delta=delta, n=N, seed=31)
    _report(f"Wishart node, k0 = {k0}", ok, record_property)
    assert ok.passed
    # Half the noise (k0 / 2 degrees of freedom) is NOT detectable: Thm 8's
    # constant 28 leaves a large slack (the measured bound stays ~0.2).
    half = audit(wishart_node_mechanism(d + 1, 1.0, k0 / 2), epsilon=eps, delta=delta, n=N // 4, seed=32)
    _report(f"Wishart node, half the degrees of freedom (k = {k0 / 2}), N/4", half, record_property)
    assert half.passed
    # A calibration that forgot the privacy term (k = d + 2) is flagged.
    bug = audit(wishart_node_mechanism(d + 1, 1.0, float(d + 2)), epsilon=eps, delta=delta, n=N // 4, seed=33)
    _report("Wishart node, planted bug: k = d + 2", bug, record_property)
    assert not bug.passed


@pytest.mark.slow
def test_secure_laplace_tree_meets_its_lattice_epsilon(record_property) -> None:  # type: ignore[no-untyped-def]
    from dpbandits.privacy.secure import secure_laplace_epsilon

    eps = 1.0
    scale = laplace_tree_scale(HORIZON, eps, calibration="tight")
    # Per node: the discrete Laplace with the rounded-input sensitivity.
    claim = tree_levels(HORIZON) * secure_laplace_epsilon(1.0, scale)
    assert eps <= claim < eps + 4 * 2.0**-19 * 2
    r = audit(laplace_tree_mechanism(HORIZON, scale, secure=True), epsilon=claim, n=N // 4, seed=41)
    _report("secure (discrete, OS entropy) Laplace tree, N/4", r, record_property)
    assert r.passed and r.epsilon_lower_bound > 0.85
