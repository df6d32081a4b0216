"""calibration="tight": the least noise that still meets (epsilon, delta).

The Gaussian tree of Shariff & Sheffet §4.2 is accounted exactly: one row
reaches tree_levels(n) = floor(log2 n) + 1 nodes, each a Gaussian mechanism
with mu = Ltilde^2 / sigma in whitened coordinates, so the tree is a
Gaussian mechanism with mu = sqrt(levels) Ltilde^2 / sigma, whose exact
(epsilon, delta) curve is Balle & Wang's.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from pytest import approx

import dpbandits as dp
from dpbandits.privacy import (
    gaussian_delta,
    gaussian_mu,
    gaussian_tree_sigma,
    laplace_epsilon,
    laplace_tree_scale,
    shariff_sheffet_gaussian,
    tree_depth,
    tree_levels,
)
from dpbandits.privacy.tables import DELTAS, EPSILONS, HORIZONS, markdown_sigma_table, sigma_table

DOCS = Path(__file__).resolve().parents[1] / "docs" / "privacy-calibration.md"


@pytest.mark.parametrize(("n", "levels"), [(1, 1), (2, 2), (3, 2), (7, 3), (8, 4), (9, 4), (50_000_000, 26)])
def test_tree_levels_count_the_nodes_one_leaf_reaches(n: int, levels: int) -> None:
    assert tree_levels(n) == levels
    # Brute force: leaf 1 lies in node (i, 0) for every level i with 2^i <= n.
    assert sum(1 for i in range(64) if 2**i <= n) == levels
    assert levels <= tree_depth(n)


def test_gaussian_tree_sigma_by_hand() -> None:
    # n = 8: 4 levels; Ltilde^2 = 2; sigma = sqrt(4) * 2 / mu*(1, 0.1).
    mu_star = gaussian_mu(1.0, 0.1)
    assert gaussian_tree_sigma(8, 1.0, 0.1, sensitivity=2.0, calibration="tight") == approx(4.0 / mu_star, rel=1e-11)
    # mu* for (1, 0.1) lies between 0.92 and 0.921: delta(0.92) < 0.1 < delta(0.921).
    assert gaussian_delta(0.92, 1.0) < 0.1 < gaussian_delta(0.921, 1.0)


@pytest.mark.parametrize("n", [100_000, 50_000_000])
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_tight_sigma_meets_the_target_and_no_smaller_sigma_does(n: int, eps: float, delta: float) -> None:
    c = shariff_sheffet_gaussian(5, n, eps, delta, calibration="tight")
    lt2 = c.L_tilde**2
    mu_tree = math.sqrt(tree_levels(n)) * lt2 / c.sigma
    assert gaussian_delta(mu_tree, eps) <= delta
    # 0.1% less noise breaks the guarantee: sigma is the least that works.
    assert gaussian_delta(mu_tree / 0.999, eps) > delta


def test_tight_never_uses_more_noise_than_paper_and_reports_its_basis() -> None:
    for row in sigma_table():
        if row.paper is not None:
            assert row.tight < row.paper
    c = shariff_sheffet_gaussian(5, 50_000_000, 1.0, 0.1, calibration="tight")
    g = c.guarantee
    assert g.calibration == "tight" and g.model == "joint"
    assert (g.epsilon, g.delta) == (1.0, 0.1)
    assert "Balle & Wang" in g.basis
    # The bounds of Prop. 11 follow the smaller sigma: Upsilon and the shift
    # scale with sigma, rho_max = 3 rho_min still.
    p = shariff_sheffet_gaussian(5, 50_000_000, 1.0, 0.1)
    assert c.upsilon / p.upsilon == approx(c.sigma / p.sigma, rel=1e-12)
    assert c.rho_max == approx(3 * c.rho_min, rel=1e-12)


def test_tight_sigma_is_monotone() -> None:
    s = lambda n, e, d: shariff_sheffet_gaussian(5, n, e, d, calibration="tight").sigma  # noqa: E731
    assert s(10**5, 0.5, 0.1) > s(10**5, 1.0, 0.1) > s(10**5, 2.0, 0.1)
    assert s(10**3, 1.0, 0.1) < s(10**5, 1.0, 0.1) < s(10**7, 1.0, 0.1)
    assert s(10**5, 1.0, 1e-6) > s(10**5, 1.0, 1e-3) > s(10**5, 1.0, 0.1)


def test_tight_tree_against_dp_accounting() -> None:
    dpa = pytest.importorskip("dp_accounting")
    n, eps, delta = 100_000, 1.0, 1e-6
    c = shariff_sheffet_gaussian(5, n, eps, delta, calibration="tight")
    multiplier = c.sigma / c.L_tilde**2
    event = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(multiplier), tree_levels(n))
    accountant = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(event)
    # Their near-exact PLD epsilon never exceeds the epsilon we claim
    # (their discretization errs upwards by < 1e-3 here).
    assert accountant.get_epsilon(delta) <= eps + 1e-3
    assert dpa.get_epsilon_gaussian(multiplier / math.sqrt(tree_levels(n)), delta) <= eps + 1e-9


def test_laplace_tree_scales() -> None:
    # T = 8: paper b = log2(8)/eps = 3, tight b = 4 levels / eps = 4.
    assert laplace_tree_scale(8, 1.0, calibration="paper") == 3.0
    assert laplace_tree_scale(8, 1.0, calibration="tight") == 4.0
    # The paper's count misses a level: its true epsilon is levels / log2 T times the target.
    b = laplace_tree_scale(1024, 0.5, calibration="paper")
    assert tree_levels(1024) * laplace_epsilon(1.0, b) == approx(0.5 * 11 / 10)
    b = laplace_tree_scale(1000, 0.5, sensitivity=2.0, calibration="tight")
    assert tree_levels(1000) * laplace_epsilon(2.0, b) == approx(0.5)
    with pytest.raises(ValueError, match="calibration"):
        laplace_tree_scale(8, 1.0, calibration="loose")
    with pytest.raises(ValueError, match="horizon"):
        laplace_tree_scale(1, 1.0, calibration="paper")


def test_documented_table_is_current() -> None:
    text = DOCS.read_text()
    assert markdown_sigma_table() in text, "regenerate the table in docs/privacy-calibration.md"
    assert {r.horizon for r in sigma_table()} == set(HORIZONS)


def test_tight_learner_uses_the_tight_sigma_and_refuses_wishart() -> None:
    learner = dp.JointDPLinUCB(5, 10_000, 1.0, 0.1, calibration="tight", seed=0, sampler="float")
    assert learner.calibration.sigma == gaussian_tree_sigma(10_000, 1.0, 0.1, sensitivity=2.0, calibration="tight")
    # The lattice default: the discreteness allowance and the rounding
    # allowance make sigma larger, by well under 0.1%, and a whole number of steps.
    lattice = dp.JointDPLinUCB(5, 10_000, 1.0, 0.1, calibration="tight", seed=0).calibration
    assert learner.calibration.sigma < lattice.sigma < learner.calibration.sigma * 1.001
    assert math.ldexp(lattice.sigma, lattice.lattice_exponent).is_integer()
    assert learner.privacy.calibration == "tight"
    assert "calibration='tight'" in repr(learner)
    with pytest.raises(ValueError, match="calibration"):
        dp.JointDPLinUCB(5, 10_000, 1.0, 0.1, noise="wishart", calibration="tight")
    with pytest.raises(ValueError, match="calibration"):
        dp.JointDPLinUCB(5, 10_000, 1.0, 0.1, calibration="exact")


def test_less_noise_means_less_regret_on_d2() -> None:
    # Same seeds (common random numbers), App. D.2 with gap 0.1, n = 20000.
    env = dp.ShariffSheffetEnv(5, gap=0.1)
    n, seeds = 20_000, 6
    paper = dp.simulate(dp.JointDPLinUCB(5, n, 1.0, 0.1), env, seeds=seeds).final_regret
    tight = dp.simulate(dp.JointDPLinUCB(5, n, 1.0, 0.1, calibration="tight"), env, seeds=seeds).final_regret
    diff = paper - tight
    # Paired one-sided test at level 1e-3: t > t_{0.999, 5} = 5.893.
    t = diff.mean() / (diff.std(ddof=1) / np.sqrt(seeds))
    assert t > 5.893, (paper, tight)
