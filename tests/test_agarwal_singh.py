"""Agarwal & Singh 2017 calibration: every formula against hand-computed values."""

from __future__ import annotations

import math

import pytest

from dpbandits.privacy.agarwal_singh import (
    exp2_parameters,
    ftpl_sigma,
    ftrl_eta,
    ftrl_laplace_scale,
    loss_sensitivity_l1,
    loss_sensitivity_l2,
    scrible_parameters,
    scrible_regret_bound,
)


def test_cor_3_2_laplace_scales_paper_and_tight() -> None:
    # Experts, N = 10, T = 1024 (log2 T = 10, tree_levels = 11), eps = 1.
    paper = ftrl_laplace_scale("simplex", 10, 1024, 1.0, "paper")
    assert paper.scale == pytest.approx(10 * 10 / 1.0)  # N log T / eps
    assert paper.guarantee.epsilon == pytest.approx(10 * 11 / 100)  # 1.1: one level more than log2 T
    tight = ftrl_laplace_scale("simplex", 10, 1024, 1.0, "tight")
    assert tight.scale == pytest.approx(10 * 11 / 1.0)
    assert tight.guarantee.epsilon == pytest.approx(1.0)
    assert tight.guarantee.is_pure and tight.guarantee.model == "central"
    assert "loss sequence" in tight.guarantee.protects
    # Sphere, N = 4, eps = 2: paper sqrt(N) log T / eps = 2 * 10 / 2; sensitivity 2 sqrt(N) = 4.
    ball = ftrl_laplace_scale("ball", 4, 1024, 2.0, "paper")
    assert ball.scale == pytest.approx(10.0)
    assert ball.guarantee.epsilon == pytest.approx(4 * 11 / 10)
    assert ftrl_laplace_scale("ball", 4, 1024, 2.0).scale == pytest.approx(4 * 11 / 2)
    # Cube, N = 3, T = 8 (log2 = 3, levels = 4): paper log T / eps = 3; sensitivity 2.
    cube = ftrl_laplace_scale("cube", 3, 8, 1.0, "paper")
    assert cube.scale == pytest.approx(3.0)
    assert cube.guarantee.epsilon == pytest.approx(2 * 4 / 3)
    assert ftrl_laplace_scale("cube", 3, 8, 1.0).scale == pytest.approx(8.0)


def test_sensitivities_of_the_loss_sets() -> None:
    assert loss_sensitivity_l1("simplex", 5) == 5.0
    assert loss_sensitivity_l1("ball", 9) == 6.0
    assert loss_sensitivity_l1("cube", 9) == 2.0
    assert loss_sensitivity_l2("simplex", 9) == 3.0
    assert loss_sensitivity_l2("ball", 9) == 2.0


def test_thm_3_1_eta_minimizes_the_bound() -> None:
    assert ftrl_eta("simplex", 4, 100) == pytest.approx(math.sqrt(math.log(4) / 100))  # 0.11774
    assert ftrl_eta("simplex", 4, 100) == pytest.approx(0.117741, rel=1e-5)
    assert ftrl_eta("ball", 7, 200) == pytest.approx(0.1)  # sqrt(2 / 200)
    assert ftrl_eta("cube", 8, 16) == pytest.approx(1.0)  # sqrt(2 * 8 / 16)
    # The bound eta T G^2 + D_R / eta is smallest there (experts: G^2 = 1, D_R = log N).
    n, T = 6, 500
    eta = ftrl_eta("simplex", n, T)

    def bound(e: float) -> float:
        return e * T + math.log(n) / e

    assert bound(eta) <= min(bound(eta * 0.9), bound(eta * 1.1))


def test_thm_3_5_sigma() -> None:
    # N = 4, T = 1024, ||Y||_2 = sqrt(4) = 2: regret term 2 sqrt(1024 / (2 * 10)) = 14.3108.
    sigma, g = ftpl_sigma("simplex", 4, 1024, None)
    assert sigma == pytest.approx(2 * math.sqrt(1024 / 20))
    assert sigma == pytest.approx(14.310835, rel=1e-6)
    assert not g.is_private
    # Paper privacy term ||Y||_2 log2 T ln(log2 T / delta) / eps = 2 * 10 * ln(1e6) = 276.310.
    sigma, g = ftpl_sigma("simplex", 4, 1024, 1.0, 1e-5, "paper")
    assert sigma == pytest.approx(20 * math.log(1e6))
    assert (g.epsilon, g.delta) == (1.0, 1e-5)
    # Tight: sqrt(levels) * Delta_2 / mu(1, 1e-5) = sqrt(11) * 2 / 0.268051 = 24.746.
    sigma, _ = ftpl_sigma("simplex", 4, 1024, 1.0, 1e-5)
    assert sigma == pytest.approx(math.sqrt(11) * 2 / 0.2680511, rel=1e-5)
    # The paper's sigma is refused when it does not meet (eps, delta) exactly.
    with pytest.raises(ValueError, match="calibration"):
        # T = 2: log2 T = 1 but a loss reaches 2 nodes; the paper's
        # 1 * 1 * ln(1 / 0.1) / 1 = 2.30 < sqrt(2) * 2 / mu(1, 0.1).
        ftpl_sigma("ball", 2, 2, 1.0, 0.1, "paper")


def test_thm_4_1_eta_and_gamma() -> None:
    # N = 10, T = 1000, eps = 1: lambda = 1, log(NT) = ln(1e4) = 9.21034,
    # eta = sqrt(ln 10 / (2 * 10 * 1000 * (1 + 2 * 9.21034))) = 2.43479e-3,
    # gamma = eta * 10 * sqrt(19.42068) = 0.107298 = sqrt(10 ln 10 / 2000).
    p = exp2_parameters(10, 1000, 1.0)
    assert p.scale == 1.0
    assert p.eta == pytest.approx(2.43479e-3, rel=1e-5)
    assert p.gamma == pytest.approx(0.107298, rel=1e-5)
    assert p.gamma == pytest.approx(math.sqrt(10 * math.log(10) / 2000))
    assert p.guarantee.epsilon == 1.0 and p.guarantee.is_pure
    q = exp2_parameters(10, 1000, None)
    assert q.scale == 0.0 and q.eta == pytest.approx(math.sqrt(math.log(10) / 20000))
    with pytest.raises(ValueError, match="horizon"):
        exp2_parameters(100, 10, 1.0)  # gamma = sqrt(100 ln 100 / 20) > 1


def test_thm_4_5_step_size() -> None:
    # N = 4, T = 1000, eps = 2, tight lambda = 2 sqrt(4) / 2 = 2:
    # eta = sqrt(ln 1000 / (2 * 16 * 1000 * (1 + 4 * 4))) = 3.56344e-3.
    p = scrible_parameters(4, 1000, 2.0)
    assert p.scale == pytest.approx(2.0)
    assert p.eta == pytest.approx(3.56344e-3, rel=1e-5)
    assert p.guarantee.epsilon == pytest.approx(2.0)
    paper = scrible_parameters(4, 1000, 2.0, "paper")
    assert paper.scale == pytest.approx(1.0)  # ||Y||_1 / eps = sqrt(4) / 2
    assert paper.guarantee.epsilon == pytest.approx(4.0)  # sensitivity 2 sqrt(N) = 4 over lambda 1
    assert scrible_parameters(4, 1000, None).eta == pytest.approx(math.sqrt(math.log(1000) / 32000))


def test_thm_4_5_explicit_regret_bound() -> None:
    # App. D's last line before the O, plus P(F) T <= 1. N = 4, T = 1000,
    # eps = 2, tight lambda = 2: M^2 + lambda^2 N ||X||^2 = 1 + 16 = 17; with
    # the theorem's eta the first two terms are each
    # sqrt(2 * 16 * 1000 * ln 1000 * 17) = 1938.5094; the third is
    # 8 * 2 * 1 * sqrt(4) * ln 4000 = 265.4096; + 2M + 1 = 3.
    assert scrible_regret_bound(4, 1000, 2.0) == pytest.approx(2 * 1938.5094 + 265.4096 + 3.0, rel=1e-6)
    # Non-private (lambda = 0): 2 sqrt(2 * 16 * 1000 * ln 1000) + 3.
    assert scrible_regret_bound(4, 1000, None) == pytest.approx(2 * 470.1576 + 3.0, rel=1e-6)
    # The paper's lambda (sqrt(N)/eps = 1) gives a smaller bound than the tight one.
    assert scrible_regret_bound(4, 1000, 2.0, "paper") < scrible_regret_bound(4, 1000, 2.0)


def test_bad_inputs_name_the_argument() -> None:
    with pytest.raises(ValueError, match="`geometry`"):
        ftrl_eta("sphere", 3, 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`epsilon`"):
        ftrl_laplace_scale("simplex", 3, 10, -1.0)
    with pytest.raises(ValueError, match="`calibration`"):
        ftrl_laplace_scale("simplex", 3, 10, 1.0, "loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`n`"):
        ftrl_eta("simplex", 1, 10)
    with pytest.raises(ValueError, match="`delta`"):
        ftpl_sigma("simplex", 3, 10, 1.0, 0.0)
