"""Formulas of ``dpbandits.privacy.elimination`` (Hanna et al. Alg. 1-3)
against hand-computed values.

Claims checked: the batch schedule q = (2T)^{1/ln T} = e^{1 + ln 2 / ln T},
m = floor(ln T) - 1 (Alg. 1 lines 3-4); Laplace scales sensitivity/epsilon
(Alg. 1 line 8, Alg. 2 line 7) with sensitivity r_max - r_min (declared)
or 1 (paper); gamma_i of Alg. 1 line 5 and Alg. 2 line 12 / Alg. 3 line
19; eps0^(i) = f^{-1}_{n_i,delta}(eps) (Alg. 3 line 8) inverts the
amplification bound at the batch's lower bound n_i >= floor(q^i); the
guarantee reports the true epsilon under the (under-noised) paper
calibration.
"""

from __future__ import annotations

import math

import pytest

from dpbandits.privacy.elimination import (
    batch_schedule,
    central_laplace_scale,
    elimination_guarantee,
    gamma_central,
    gamma_coefficients,
    gamma_local,
    local_laplace_scale,
    reward_sensitivity,
    shuffle_batch_epsilons,
)
from dpbandits.privacy.shuffle import closed_form_validity_limit, shuffle_amplification


def test_batch_schedule_matches_alg1_lines_3_4() -> None:
    s = batch_schedule(1_000_000)
    # (2T)^{1/ln T} = exp(ln(2T)/ln T) = e^{1 + ln 2/ln T}; e <= q <= e^2 (footnote 2).
    assert s.q == pytest.approx(2.85814172154871, rel=1e-13)
    assert s.batches == 12  # floor(ln 1e6 = 13.8155) - 1
    assert s.lengths[0] == pytest.approx(s.q) and s.lengths[-1] == pytest.approx(s.q**12)
    assert batch_schedule(200).min_batch_sizes() == (3, 9, 29, 92)
    assert batch_schedule(2).batches == 1


def test_sensitivity_and_laplace_scales() -> None:
    assert reward_sensitivity((-1.0, 1.0)) == 2.0
    assert reward_sensitivity((0.0, 1.0)) == 1.0
    assert reward_sensitivity((-1.0, 1.0), "paper") == 1.0
    assert central_laplace_scale(0.5, 2.0) == 4.0
    assert local_laplace_scale(0.25, 1.0) == 4.0


def test_gamma_central_alg1_line5_by_hand() -> None:
    # d = 2, q^i = 10, |A_i| = 5, T = 100, eps = 1, B = 1.5:
    # L = ln(4 * 5 * 100^2) = 12.206072645530174,
    # gamma = sqrt(4 * 2 / 10 * L) + (2 * 1.5 * 4 + 2 * 2 * L) / 10 = 3.124877... + 6.082429... = 9.2073064
    assert gamma_central(2, 10.0, 5, 100, 1.0, 1.5) == pytest.approx(9.207306354430937, rel=1e-12)


def test_gamma_local_alg2_line12_by_hand() -> None:
    # sqrt(L) (sqrt(0.8) + 2 * 2 * sqrt(12) / (10 * 2)) with n_i = 12, eps0 = 2.
    assert gamma_local(2, 10.0, 5, 100, 12, 2.0) == pytest.approx(5.545396841658335, rel=1e-12)


def test_gamma_coefficients_scale_with_the_laplace_scale() -> None:
    # Declared sensitivity 2: the noise terms double, the sampling term does not.
    a = gamma_coefficients("central", 3, 50.0, 1.0, 2.0)
    b = gamma_coefficients("central", 3, 50.0, 2.0, 2.0)
    assert b[0] == a[0] and b[1] == 2 * a[1] and b[2] == 2 * a[2]
    assert gamma_coefficients("none", 3, 50.0) == (math.sqrt(12 / 50.0), 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="model"):
        gamma_coefficients("gaussian", 3, 50.0, 1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["closed-form", "numerical"])
def test_batch_eps0_inverts_the_amplification_bound(method: str) -> None:
    s = batch_schedule(1_000_000)
    eps, delta = 1.0, 1e-6
    eps0 = shuffle_batch_epsilons(eps, delta, s, method)
    assert len(eps0) == s.batches
    for n, e0 in zip(s.min_batch_sizes(), eps0, strict=True):
        assert e0 >= eps
        if e0 > eps * (1 + 1e-9) and (method == "numerical" or e0 < closed_form_validity_limit(n, delta)):
            # Strictly inside the range where amplification applies: f(eps0) = eps.
            assert shuffle_amplification(e0, n, delta, method) == pytest.approx(eps, rel=1e-8)
        # Larger batches get less noise (f decreases in n).
    assert list(eps0) == sorted(eps0)
    assert eps0[-1] > 5.0  # n = 297170 reports amplify eps0 ~ 6.8 down to 1


def test_guarantees_report_the_true_epsilon() -> None:
    g = elimination_guarantee("central", 1.0, None, (-1.0, 1.0), "tight")
    assert (g.model, g.epsilon, g.delta) == ("central", 1.0, 0.0)
    # Paper calibration assumes sensitivity 1 where it is 2: the noise meets 2 eps only.
    g = elimination_guarantee("central", 1.0, None, (-1.0, 1.0), "paper")
    assert g.epsilon == 2.0 and "under-noised" in g.basis
    g = elimination_guarantee("local", 0.5, None, (0.0, 1.0), "paper")
    assert (g.model, g.epsilon) == ("local", 0.5)
    s = batch_schedule(10_000)
    e0 = shuffle_batch_epsilons(1.0, 1e-6, s)
    g = elimination_guarantee("shuffle", 1.0, 1e-6, (-1.0, 1.0), "tight", s, e0)
    assert (g.model, g.epsilon, g.delta) == ("shuffle", 1.0, 1e-6)
    g2 = elimination_guarantee("shuffle", 1.0, 1e-6, (-1.0, 1.0), "paper", s, e0)
    assert g2.epsilon > 1.0
    assert not elimination_guarantee("none", None, None, (-1.0, 1.0), "tight").is_private


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="horizon"):
        batch_schedule(1)
    with pytest.raises(ValueError, match="reward_range"):
        reward_sensitivity((1.0, -1.0))
    with pytest.raises(ValueError, match="calibration"):
        reward_sensitivity((-1.0, 1.0), "declared")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="epsilon"):
        central_laplace_scale(0.0, 1.0)


def test_gamma_log_offset_by_hand() -> None:
    # T = 1000: ln(4 * 10^6) = ln 4 + 6 ln 10 = 15.20180...
    from dpbandits.privacy.elimination import gamma_log_offset

    assert gamma_log_offset(1000) == pytest.approx(math.log(4.0) + 6.0 * math.log(10.0), rel=1e-15)
