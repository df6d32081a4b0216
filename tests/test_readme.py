"""README.md is a user's first page: its quickstarts run as written.

Every ```python block of the README that holds ``>>>`` examples is run as a
doctest (each block on its own, with ``dpbandits`` imported as ``dp``), and
each setting's quickstart has such a block, so an example cannot go stale
or silently disappear.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

import dpbandits

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _sections() -> dict[str, str]:
    """Each ``### `` heading of the Quickstart section -> its text."""
    quick = README.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### (.+)$", quick, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


BLOCKS = [b for b in BLOCK.findall(README) if ">>>" in b]


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int) -> None:
    test = doctest.DocTestParser().get_doctest(BLOCKS[index], {"dp": dpbandits}, f"README block {index}",
                                                "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"README example block {index} failed (see output)"


@pytest.mark.parametrize("setting", ["K-armed bandit", "Linear bandit with a fixed action set",
                                     "Contextual linear bandit", "Online learning with expert advice",
                                     "Deployment"])
def test_every_setting_has_an_executed_quickstart(setting: str) -> None:
    sections = _sections()
    assert setting in sections, f"README has no quickstart {setting!r}: {sorted(sections)}"
    assert any(">>>" in b for b in BLOCK.findall(sections[setting])), f"quickstart {setting!r} has no doctest"


def test_readme_is_short() -> None:
    assert len(README.splitlines()) <= 250


def test_readme_keeps_the_two_commands() -> None:
    # CI (.ci/run) runs exactly the test command; the main job is the first command.
    assert 'python3 -m pip install ".[test]" && cargo test && python3 -m pytest -q' in README
    assert 'python3 -m pip install ".[plot]" && python3 -m dpbandits run' in README
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'python3 -m pip install ".[test]" && cargo test && python3 -m pytest -q' in ci
