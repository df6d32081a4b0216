"""Arguments are validated once, at the public boundary: a learner checks
its own arguments and hands typed values to the privacy formulas, which
trust them (their public functions still check what users pass them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import dpbandits
import dpbandits.learners.linucb as learners_linucb
import dpbandits.learners.linucb_trust as learners_trust
import dpbandits.learners.mab as learners_mab
import dpbandits.privacy.analytic_gaussian as analytic_gaussian
import dpbandits.privacy.calibration as calibration
import dpbandits.privacy.discrete_gaussian as discrete_gaussian
import dpbandits.privacy.factorization as factorization
import dpbandits.privacy.linucb_trust as linucb_trust
import dpbandits.privacy.mishra_thakurta as mishra_thakurta
import dpbandits.privacy.secure as secure
import dpbandits.privacy.shuffle as shuffle
import dpbandits.privacy.tree as tree

USER_EPSILON = 1.0


@pytest.fixture
def epsilon_checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The modules (learner, privacy formulas) that check ``epsilon`` while
    a learner is built."""
    seen: list[str] = []
    modules = (learners_mab, learners_linucb, learners_trust, calibration, tree, mishra_thakurta, analytic_gaussian,
               factorization, secure, linucb_trust, shuffle)
    for module in modules:
        for check in ("positive", "non_negative"):
            if not hasattr(module, check):
                continue
            original = getattr(module, check)

            def counted(name: str, value: Any, *args: Any, _m: str = module.__name__, _f: Any = original,
                        **kwargs: Any) -> Any:
                # The user's epsilon (every learner below is built with
                # USER_EPSILON); formulas that search over a derived
                # per-message epsilon_0 check that one, not the user's.
                if name == "epsilon" and value == USER_EPSILON:
                    seen.append(_m)
                return _f(name, value, *args, **kwargs)

            monkeypatch.setattr(module, check, counted)
    yield seen


@pytest.mark.parametrize("calibration_kind", ["paper", "tight"])
def test_private_ucb_checks_epsilon_once_at_its_boundary(epsilon_checks: list[str], calibration_kind: str) -> None:
    dpbandits.PrivateUCB(k=5, horizon=1000, epsilon=1.0, calibration=calibration_kind, seed=0)
    assert epsilon_checks == ["dpbandits.learners.mab"]


def test_the_public_formula_still_checks_epsilon() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        mishra_thakurta.private_ucb_node_scale(5, 1000, -1.0)
    with pytest.raises(ValueError, match="epsilon"):
        dpbandits.PrivateUCB(k=5, horizon=1000, epsilon=0.0, seed=0)


def test_the_checked_formulas_equal_the_public_ones() -> None:
    for cal in ("paper", "tight"):
        for k, n, eps, w in [(5, 1000, 1.0, 1.0), (2, 2, 0.1, 3.0), (100, 10**7, 7.5, 0.5)]:
            b = mishra_thakurta.private_ucb_node_scale(k, n, eps, w, cal)
            assert mishra_thakurta.private_ucb_node_scale_checked(k, n, eps, w, cal) == b
            assert mishra_thakurta.lemma5_noise_bound_checked(b, k, n, 0.01, cal) == (
                mishra_thakurta.lemma5_noise_bound(b, k, n, 0.01, cal)
            )


@pytest.mark.parametrize("noise", ["gaussian", "wishart"])
def test_joint_dp_linucb_checks_epsilon_once_at_its_boundary(epsilon_checks: list[str], noise: str) -> None:
    # The paper calibration (the default): the class validates, the
    # formulas' checked forms trust it.
    dpbandits.JointDPLinUCB(d=5, horizon=1000, epsilon=1.0, delta=0.1, noise=noise, seed=0)
    assert epsilon_checks == ["dpbandits.learners.linucb"]


@pytest.mark.parametrize("sampler", ["lattice", "float"])
@pytest.mark.parametrize("counter", ["binary", "smooth-binary", "sqrt", "blt"])
def test_tight_joint_dp_linucb_checks_epsilon_once_at_its_boundary(
    epsilon_checks: list[str], sampler: str, counter: str
) -> None:
    # The tight calibration goes through gaussian_tree_sigma /
    # factorization_gaussian_sigma, gaussian_mu, the discrete-Gaussian
    # allowance and gaussian_epsilon: their checked forms, none re-checking.
    dpbandits.JointDPLinUCB(d=3, horizon=1000, epsilon=1.0, delta=0.1, calibration="tight", counter=counter,
                            sampler=sampler, seed=0)
    assert epsilon_checks == ["dpbandits.learners.linucb"]


def test_the_checked_gaussian_formulas_equal_the_public_ones() -> None:
    for eps, delta in [(1.0, 0.1), (0.05, 1e-6), (8.0, 0.3)]:
        assert analytic_gaussian.gaussian_mu_checked(eps, delta) == analytic_gaussian.gaussian_mu(eps, delta)
        for n, sens in [(1, 1.0), (1000, 2.0), (2**20 + 3, 0.5)]:
            assert tree.gaussian_tree_sigma_checked(n, eps, delta, sens) == (
                tree.gaussian_tree_sigma(n, eps, delta, sens, calibration="tight")
            )
            for counter in ("binary", "smooth-binary", "sqrt", "blt"):
                assert factorization.factorization_gaussian_sigma_checked(counter, n, eps, delta, sens) == (
                    factorization.factorization_gaussian_sigma(counter, n, eps, delta, sens)
                )
            assert discrete_gaussian.discrete_gaussian_delta_allowance_checked(eps, n, 2.0**19) == (
                discrete_gaussian.discrete_gaussian_delta_allowance(eps, n, 2.0**19)
            )
    for mu, delta in [(0.5, 0.1), (3.0, 1e-5)]:
        assert analytic_gaussian.gaussian_epsilon_checked(mu, delta) == analytic_gaussian.gaussian_epsilon(mu, delta)


def test_the_public_gaussian_formulas_still_check_their_arguments() -> None:
    for call in (
        lambda: analytic_gaussian.gaussian_mu(-1.0, 0.1),
        lambda: tree.gaussian_tree_sigma(1000, 0.0, 0.1, 1.0, calibration="tight"),
        lambda: factorization.factorization_gaussian_sigma("sqrt", 1000, float("nan"), 0.1, 1.0),
        lambda: discrete_gaussian.discrete_gaussian_delta_allowance(-2.0, 10),
    ):
        with pytest.raises(ValueError, match="epsilon"):
            call()
    with pytest.raises(ValueError, match="delta"):
        tree.gaussian_tree_sigma(1000, 1.0, 1.5, 1.0, calibration="tight")
    with pytest.raises(ValueError, match="horizon"):
        tree.gaussian_tree_sigma(0, 1.0, 0.1, 1.0, calibration="tight")


def test_joint_dp_linucb_still_refuses_bad_arguments_naming_them() -> None:
    for name, bad in [("epsilon", 0.0), ("delta", 1.0), ("alpha", 2.0), ("L", -1.0), ("B_tilde", float("nan")),
                      ("d", 0), ("horizon", 0)]:
        for noise in ("gaussian", "wishart"):
            kwargs: dict[str, Any] = {"d": 5, "horizon": 1000, "epsilon": 1.0, "delta": 0.1, "noise": noise, name: bad}
            with pytest.raises(ValueError, match=f"`{name}`"):
                dpbandits.JointDPLinUCB(**kwargs)


def test_the_checked_shariff_sheffet_calibrations_equal_the_public_ones() -> None:
    for d, n, eps, delta, alpha, L, B in [(5, 1000, 1.0, 0.1, None, 1.0, 1.0), (3, 10**6, 4.0, 1e-3, 0.01, 0.5, 2.0)]:
        a = calibration.failure_probability(alpha, n)
        for shift in (True, 3.0e6):
            for cal, sampler in [("paper", "float"), ("paper", "lattice"), ("tight", "lattice")]:
                public = calibration.shariff_sheffet_gaussian(
                    d, n, eps, delta, alpha, L, B, shift=shift, calibration=cal, sampler=sampler)
                checked = calibration.shariff_sheffet_gaussian_checked(
                    d, n, eps, delta, a, L, B, shift=shift, calibration=cal, sampler=sampler, counter="binary")
                assert checked == public
        for wshift in (True, False):
            assert calibration.shariff_sheffet_wishart_checked(d, n, eps, delta, a, L, B, shift=wshift) == (
                calibration.shariff_sheffet_wishart(d, n, eps, delta, alpha, L, B, shift=wshift))
        m = tree.tree_depth(n)
        assert tree.tree_depth_checked(n) == m
        assert tree.tree_node_epsilon_checked(eps, delta, m) == tree.tree_node_epsilon(eps, delta, m)
        assert calibration.wishart_degrees_of_freedom_checked(d, m, eps, delta) == (
            calibration.wishart_degrees_of_freedom(d, m, eps, delta))


@pytest.mark.parametrize("kwargs", [
    {"noise": "gaussian", "delta": 0.1, "sampler": "lattice"},
    {"noise": "gaussian", "delta": 0.1, "sampler": "float"},
    {"noise": "laplace", "sampler": "lattice"},
    {"noise": "laplace", "sampler": "float"},
])
def test_local_linucb_checks_epsilon_once_at_its_boundary(epsilon_checks: list[str], kwargs: dict[str, Any]) -> None:
    dpbandits.LocalLinUCB(d=3, horizon=1000, epsilon=1.0, seed=0, **kwargs)
    assert epsilon_checks == ["dpbandits.learners.linucb_trust"]


@pytest.mark.parametrize("kwargs", [
    {"protocol": "vector-sum", "calibration": "tight"},
    {"protocol": "vector-sum", "calibration": "paper"},
    {"protocol": "amplification", "shuffle_method": "numerical", "sampler": "lattice"},
    {"protocol": "amplification", "shuffle_method": "closed-form", "sampler": "float"},
])
def test_shuffle_linucb_checks_epsilon_once_at_its_boundary(epsilon_checks: list[str], kwargs: dict[str, Any]) -> None:
    dpbandits.ShuffleLinUCB(d=3, horizon=10_000, epsilon=1.0, delta=0.1, seed=0, **kwargs)
    assert epsilon_checks == ["dpbandits.learners.linucb_trust"]


def test_the_checked_trust_formulas_equal_the_public_ones() -> None:
    for eps, delta, d, L, B in [(1.0, 0.1, 3, 1.0, 1.0), (0.3, 1e-3, 5, 0.5, 2.0)]:
        m = linucb_trust.report_dimension(d)
        for cal in ("tight", "paper"):
            assert linucb_trust.vector_sum_coordinate_budget_checked(eps, delta, m, cal) == (
                linucb_trust.vector_sum_coordinate_budget(eps, delta, d, cal)
            )
        for lattice in (True, False):
            assert linucb_trust.local_gaussian_sigma_checked(
                eps, delta, m, linucb_trust.report_l2_sensitivity(L, B), "tight", lattice
            ) == linucb_trust.local_gaussian_sigma(eps, delta, d, L, B, "tight", lattice=lattice)
        assert linucb_trust.local_laplace_scale_checked(eps, d, L, B) == linucb_trust.local_laplace_scale(eps, d, L, B)
        for method in ("closed-form", "numerical"):
            assert linucb_trust.amplified_local_epsilon_checked(eps, delta, 4000, method) == (
                linucb_trust.amplified_local_epsilon(eps, delta, 4000, method)
            )


def test_trust_learners_still_refuse_bad_arguments_naming_them() -> None:
    for name, bad in [("epsilon", 0.0), ("epsilon", float("nan")), ("delta", 1.0), ("delta", 0.0)]:
        kwargs: dict[str, Any] = {"d": 3, "horizon": 1000, "epsilon": 1.0, "delta": 0.1, name: bad}
        with pytest.raises(ValueError, match=f"`{name}`"):
            dpbandits.LocalLinUCB(noise="gaussian", **kwargs)
        for protocol in ("vector-sum", "amplification"):
            with pytest.raises(ValueError, match=f"`{name}`"):
                dpbandits.ShuffleLinUCB(protocol=protocol, **kwargs)
