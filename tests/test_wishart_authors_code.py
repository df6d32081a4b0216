"""The Wishart constants of the authors' code (PrivateBandits.jl), against
hand computations and the numbers its notebook prints (REPRODUCTION.md,
"App. D.2 Wishart ordering")."""

from __future__ import annotations

import math

import pytest

from dpbandits.privacy.calibration import shariff_sheffet_wishart
from dpbandits.privacy.wishart_authors_code import authors_code_wishart, authors_code_wishart_dof


def test_degrees_of_freedom_of_the_code() -> None:
    # m = 27, delta = 0.1: delta_fail = delta_0 = 0.1 / 28, eps_0^-2 = 8 * 27 * ln(280);
    # k = 6 + floor(28 ln(1120) * 8 * 27 * ln(280)) = 6 + floor(239272.98) = 239278.
    assert authors_code_wishart_dof(5, 27, 1.0, 0.1) == 239278
    # The paper's k (§4.1) for the same m: 6 + ceil(224 * 27 * ln(2160) ln(20)) = 139115.
    assert shariff_sheffet_wishart(5, 50_000_000, 1.0, 0.1).k == 139115


def test_bounds_of_the_code_match_its_notebook() -> None:
    # private-bandits.ipynb (Experiment 3 output): rho_min 1.28101e7 unshifted, 2.22336e5 shifted.
    unshifted = authors_code_wishart(5, 50_000_000, 1.0, 0.1, shift=False)
    shifted = authors_code_wishart(5, 50_000_000, 1.0, 0.1, shift=True)
    assert unshifted.rho_min == pytest.approx(1.28101e7, rel=1e-5)
    assert shifted.rho_min == pytest.approx(2.22336e5, rel=1e-5)
    # By hand: sqrt(mk) = sqrt(27 * 239278) = 2541.75; alpha' = 1 / (2n 2^26);
    # a' = sqrt(5) + sqrt(2 ln(4 / alpha')) = 10.9342; Ltilde^2 = 2.
    smk, a = math.sqrt(27 * 239278), math.sqrt(5) + math.sqrt(2 * math.log(8 * 50_000_000 * 2**26))
    assert unshifted.rho_max == pytest.approx(2 * (smk + a) ** 2)
    assert unshifted.gamma == pytest.approx(math.sqrt(2) * (math.sqrt(5) + math.sqrt(2 * math.log(1e8 * 2**26))))
    assert shifted.rho_min == pytest.approx(8 * smk * a)
    assert shifted.rho_max == pytest.approx(2 * shifted.rho_min)  # rho_max - c, as Prop. 9
    assert shifted.shift == pytest.approx(unshifted.rho_min - shifted.rho_min)  # Eq. (4)
    # Claim 20's gamma, not Prop. 9's relaxed sqrt(sqrt(mk) b).
    assert shifted.gamma == pytest.approx(unshifted.gamma * math.sqrt(unshifted.rho_min / shifted.rho_min))
    assert shifted.alpha == unshifted.alpha == pytest.approx(1e-8)  # make_alg: 1 / (2n)


def test_refuses_a_float_shift() -> None:
    with pytest.raises(ValueError, match="`shift`"):
        authors_code_wishart(5, 1000, 1.0, 0.1, shift=1.0)  # type: ignore[arg-type]
