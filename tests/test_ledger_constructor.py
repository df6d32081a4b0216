"""``ledger=`` / ``dataset=`` constructor arguments: every learner class
registers at construction exactly as ``ledger.register(learner,
dataset=...)`` would (one mechanism in ``LearnerBase``), charging the same
guarantee; refusals leave the ledger untouched."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _hostile_kinds import KINDS

import dpbandits as dp
from dpbandits.errors import PrivacyBudgetError
from dpbandits.learners.online import LearnerBase

#: Learner classes of dpbandits.__all__ that the hostile-state registry does
#: not build.
EXTRA = {
    "PrivateStochasticExperts": lambda: dp.PrivateStochasticExperts(3, 40, 1.0, seed=1),
    "LazyPrivateExperts": lambda: dp.LazyPrivateExperts(3, 40, 1.0, 0.1, seed=1),
    "BatchedPrivateEXP3": lambda: dp.BatchedPrivateEXP3(3, 40, 1.0, batch=4, seed=1),
    "DPTopTwo": lambda: dp.DPTopTwo(3, 0.05, 1.0, seed=1),
    "AdaPTT": lambda: dp.AdaPTT(3, 0.05, 1.0, seed=1),
    "AdaPTTStar": lambda: dp.AdaPTTStar(3, 0.05, 1.0, seed=1),
    "TopTwoBAI": lambda: dp.TopTwoBAI(3, 0.05, seed=1),
    "CTBTT": lambda: dp.CTBTT(3, 0.05, 1.0, seed=1),
}


def _learner_classes() -> list[str]:
    return [n for n in dp.__all__ if isinstance(getattr(dp, n), type) and issubclass(getattr(dp, n), LearnerBase)]


def _make(name: str) -> Any:
    if name in EXTRA:
        return EXTRA[name]()
    return KINDS[name][0](40, 1)


def test_every_learner_class_is_covered() -> None:
    names = _learner_classes()
    assert len(names) >= 25
    for name in names:
        params = inspect.signature(getattr(dp, name)).parameters
        assert params["ledger"].kind is inspect.Parameter.KEYWORD_ONLY and params["ledger"].default is None
        assert params["dataset"].kind is inspect.Parameter.KEYWORD_ONLY and params["dataset"].default is None
        assert "ledger:" in getattr(dp, name).__doc__ and "dataset:" in getattr(dp, name).__doc__
        assert type(_make(name)).__name__ == name


def test_the_parameters_are_declared_for_type_checkers_and_the_api_reference() -> None:
    # In the source, not only at run time: the constructor's own signature
    # (unwrapped) and the class's source docstring name both.
    import ast
    import textwrap

    for name in _learner_classes():
        cls = getattr(dp, name)
        owner = next(c for c in cls.__mro__ if "__init__" in c.__dict__)
        init = inspect.unwrap(owner.__dict__["__init__"])
        params = inspect.signature(init).parameters
        assert {"ledger", "dataset"} <= set(params), name
        assert params["ledger"].annotation == "Ledger | None" and params["dataset"].annotation == "str | None"
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        doc = ast.get_docstring(tree.body[0], clean=False) or ""
        assert "    ledger:\n" in doc and "    dataset:\n" in doc, name


@pytest.mark.parametrize("name", _learner_classes())
def test_constructor_registration_equals_register(tmp_path: Path, name: str) -> None:
    template = _make(name)
    cls, config = type(template), dict(template.config)
    with dp.Ledger(tmp_path / "by_hand.db") as by_hand, dp.Ledger(tmp_path / "at_init.db") as at_init:
        for ledger in (by_hand, at_init):
            ledger.set_budget("d", epsilon=100.0, delta=0.5, model=None)
        if not template._is_private():
            with pytest.raises(PrivacyBudgetError):
                by_hand.register(cls(**config), dataset="d")
            with pytest.raises(PrivacyBudgetError):
                cls(**config, ledger=at_init, dataset="d")
            assert at_init.spends() == () and by_hand.spends() == ()
            return
        manual = cls(**config)
        by_hand.register(manual, dataset="d")
        built = cls(**config, ledger=at_init, dataset="d")
        assert built.config == manual.config  # the ledger is not configuration
        assert "ledger" not in repr(built)
        (a,), (b,) = by_hand.spends("d"), at_init.spends("d")
        assert (a.kind, a.model, a.epsilon, a.delta, a.rho) == (b.kind, b.model, b.epsilon, b.delta, b.rho)
        assert b.kind == "register" and b.learner_id == built.lineage["learner_id"]
        assert built.lineage["ledger"] == {"path": at_init.path, "dataset": "d", "registration": b.registration}
        assert at_init.totals("d") == by_hand.totals("d")
        # A spawned learner is a new configuration: registered by its own call only.
        assert built.spawn(2).lineage["ledger"] is None


def test_restores_of_a_constructor_registered_learner_are_recorded(tmp_path: Path) -> None:
    with dp.Ledger(tmp_path / "l.db") as ledger:
        ledger.set_budget("clicks", epsilon=2.5, delta=0.0, model="central")
        learner = dp.DPKLUCB(k=3, horizon=1000, epsilon=1.0, seed=0, ledger=ledger, dataset="clicks")
        for r in (1.0, 0.0, 1.0):
            learner.update(learner.select(), r)
        learner.save(tmp_path / "c.ckpt")
        first = dp.DPKLUCB.load(tmp_path / "c.ckpt")
        assert first.lineage["ledger"]["registration"] == learner.lineage["ledger"]["registration"]
        with pytest.raises(PrivacyBudgetError, match="already restored"):
            dp.DPKLUCB.load(tmp_path / "c.ckpt")
        dp.DPKLUCB.load(tmp_path / "c.ckpt", charge=True)
        assert [s.kind for s in ledger.spends("clicks")] == ["register", "restore"]
        assert ledger.spent("clicks").epsilon == 2.0


def test_an_over_spend_fails_the_construction(tmp_path: Path) -> None:
    with dp.Ledger(tmp_path / "l.db") as ledger:
        ledger.set_budget("clicks", epsilon=1.0, delta=0.0, model="central")
        dp.PrivateUCB(3, 100, 0.75, ledger=ledger, dataset="clicks")
        with pytest.raises(PrivacyBudgetError, match=r"'clicks'.*\(1, 0\)-DP budget"):
            dp.PrivateUCB(3, 100, 0.5, ledger=ledger, dataset="clicks")
        assert len(ledger.spends("clicks")) == 1
        # A guarantee in a weaker trust model than the budget's is refused too.
        ledger.set_budget("joint-only", epsilon=10.0, delta=0.5, model="central")
        with pytest.raises(PrivacyBudgetError, match="does not imply central"):
            dp.JointDPLinUCB(2, 100, 1.0, 0.1, ledger=ledger, dataset="joint-only")


def test_bad_ledger_arguments_are_refused_before_anything_is_built(tmp_path: Path) -> None:
    with dp.Ledger(tmp_path / "l.db") as ledger:
        ledger.set_budget("clicks", epsilon=1.0)
        with pytest.raises(ValueError, match="`dataset`: `ledger` needs `dataset`"):
            dp.DPKLUCB(3, 100, 1.0, ledger=ledger)
        with pytest.raises(ValueError, match="`ledger`: `dataset` needs `ledger`"):
            dp.DPKLUCB(3, 100, 1.0, dataset="clicks")
        with pytest.raises(TypeError, match=r"expected a dpbandits\.Ledger"):
            dp.DPKLUCB(3, 100, 1.0, ledger=str(tmp_path / "l.db"), dataset="clicks")
        with pytest.raises(PrivacyBudgetError, match="no budget"):
            dp.DPKLUCB(3, 100, 1.0, ledger=ledger, dataset="other")
        with pytest.raises(ValueError, match="epsilon"):
            dp.DPKLUCB(3, 100, -1.0, ledger=ledger, dataset="clicks")
        assert ledger.spends() == ()
        assert np.isfinite(ledger.totals("clicks")["epsilon"])
