"""The docstrings' examples run (doctest) and print what they show.

Every public module of the package is collected; the main entry points
(simulate, simulate_many, sweep, JointDPLinUCB, LinUCB, PrivateUCB,
DPKLUCB, EliminationLinearBandit, PrivateFTRL, TreeCounter, audit) must
carry examples, so they cannot silently disappear.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dpbandits

MODULES = ["dpbandits"] + [m.name for m in pkgutil.walk_packages(dpbandits.__path__, "dpbandits.")
                           if not any(part.startswith("_") for part in m.name.split(".")[1:])]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

ENTRY_POINTS = [
    "dpbandits.sim.simulate", "dpbandits.sim.simulate_many", "dpbandits.sweeps.sweep",
    "dpbandits.learners.linucb.JointDPLinUCB", "dpbandits.learners.linucb.LinUCB",
    "dpbandits.learners.mab.PrivateUCB", "dpbandits.learners.phased_mab.DPKLUCB",
    "dpbandits.learners.elimination.EliminationLinearBandit", "dpbandits.learners.online_learning.PrivateFTRL",
    "dpbandits.mechanisms.TreeCounter", "dpbandits.audit.audit",
]


def examples(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    return [t for t in doctest.DocTestFinder().find(module, name) if t.examples]


@pytest.mark.parametrize("name", [m for m in MODULES if examples(m)])
def test_module_doctests(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in examples(name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {name} (see output)"


def test_entry_points_have_examples() -> None:
    found = {t.name for m in MODULES for t in examples(m)}
    assert sorted(set(ENTRY_POINTS) - found) == []
