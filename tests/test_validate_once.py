"""Arguments are validated once, at the public boundary: a learner checks
its own arguments and hands typed values to the privacy formulas, which
trust them (their public functions still check what users pass them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import dpbandits
import dpbandits.learners.mab as learners_mab
import dpbandits.privacy.calibration as calibration
import dpbandits.privacy.mishra_thakurta as mishra_thakurta


@pytest.fixture
def epsilon_checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The modules (learner, privacy formulas) that check ``epsilon`` while
    a learner is built."""
    seen: list[str] = []
    for module in (learners_mab, calibration, mishra_thakurta):
        original = module.positive

        def counted(name: str, value: Any, *args: Any, _m: str = module.__name__, _f: Any = original,
                    **kwargs: Any) -> Any:
            if name == "epsilon":
                seen.append(_m)
            return _f(name, value, *args, **kwargs)

        monkeypatch.setattr(module, "positive", counted)
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
