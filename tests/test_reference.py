"""The documentation is complete and self-contained.

- every public name of ``dpbandits.__all__`` is documented in the API
  reference (``docs/api/*.md`` renders its defining module);
- every learner's docstring has numpy-style Parameters, Raises and
  Examples sections (the examples run in tests/test_doctests.py);
- no document or docstring points to a file outside the repository (the
  design notes and paper files the project was built from are not part of
  it: papers are cited by author, title and section), and every relative
  link of the Markdown files resolves;
- no issue numbers, commit hashes or dates in the README, the docs or the
  package's docstrings and comments (history lives in git).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import dpbandits

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "docs" / "api"
DIRECTIVE = re.compile(r"^::: ([\w.]+)", re.MULTILINE)
DOCUMENTS = [ROOT / "README.md", ROOT / "REPRODUCTION.md", ROOT / "mkdocs.yml",
             *sorted(p for p in (ROOT / "docs").rglob("*.md") if "results" not in p.parts)]
SOURCES = [*sorted((ROOT / "python" / "dpbandits").rglob("*.py")), ROOT / "python" / "dpbandits" / "_core.pyi"]
#: The rest of the product a user reads: the Rust core, the examples, the benchmarks.
CODE = [*sorted((ROOT / "rust" / "src").rglob("*.rs")), *sorted((ROOT / "examples").rglob("*.py")),
        *sorted((ROOT / "benches").rglob("*.py"))]

OUTSIDE = re.compile(r"DESIGN\.md|STYLE\.md|\bpapers/|/work/|/tmp/\w")
ISSUE = re.compile(r"\b[Ii]ssues?\s+#?\d+|\(#\d+\)")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
# A hexadecimal word of 7 to 40 characters with both a digit and a letter.
# Not a number's digits (1.28101e7, 5.9e-05): no '.', letter or digit before it.
HASH = re.compile(r"(?<![.\w-])(?!\d+e\d*\b)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
# History notes: fixes, dropped attempts, earlier values ("51.7 -> 48.9 ns").
NOTE = re.compile(r"\bBug fix|\b[Tt]ried and dropped|\b[Pp]reviously\b"
                  r"|\d[\d.,]* ?-> ?\d[\d.,]* ?(?:ns|us|µs|ms|instructions)\b")


def _rendered_modules(with_members: bool = True) -> set[str]:
    """Modules a ``::: module`` directive of docs/api renders (with their
    members, unless ``with_members`` is False: then the module page alone)."""
    found: set[str] = set()
    for page in API.glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for m in DIRECTIVE.finditer(text):
            options = text[m.end():m.end() + 120].split(":::")[0]
            if not with_members or "members: false" not in options:
                found.add(m.group(1))
    return found


@pytest.mark.parametrize("name", [n for n in dpbandits.__all__ if n != "__version__"])
def test_every_public_name_is_in_the_reference(name: str) -> None:
    obj = getattr(dpbandits, name)
    where = obj.__name__ if inspect.ismodule(obj) else obj.__module__
    rendered = _rendered_modules(with_members=not inspect.ismodule(obj))
    assert where in rendered, f"dpbandits.{name} ({where}) is not rendered by any docs/api page"
    if not inspect.ismodule(obj):
        module = __import__(where, fromlist=["__all__"])
        assert name in getattr(module, "__all__", [name]), f"{where}.__all__ hides {name} from the reference"


LEARNERS = [n for n in dpbandits.__all__
            if inspect.isclass(getattr(dpbandits, n)) and hasattr(getattr(dpbandits, n), "select")]


def test_the_learners_are_enumerated() -> None:
    assert {"DPKLUCB", "JointDPLinUCB", "LocalLinUCB", "ShuffleLinUCB", "PrivateFTRL", "UCB1"} <= set(LEARNERS)


@pytest.mark.parametrize("name", LEARNERS)
def test_every_learner_docstring_has_parameters_raises_and_examples(name: str) -> None:
    doc = inspect.getdoc(getattr(dpbandits, name)) or ""
    for section in ("Parameters", "Raises", "Examples"):
        assert re.search(rf"^{section}\n-{{{len(section)}}}$", doc, re.MULTILINE), f"{name}: no {section} section"
    examples = doc.split("Examples\n--------", 1)[1]
    assert ">>>" in examples and f"dp.{name}(" in examples, f"{name}: its Examples do not build it"


def _lines(paths: list[Path]) -> list[tuple[str, int, str]]:
    return [(str(p.relative_to(ROOT)), i, line) for p in paths
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)]


def test_no_pointer_outside_the_repository() -> None:
    bad = [f"{f}:{i}: {line.strip()}" for f, i, line in _lines(DOCUMENTS + SOURCES + CODE) if OUTSIDE.search(line)]
    assert not bad, "\n".join(bad)


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_relative_links_resolve() -> None:
    bad = []
    for doc in DOCUMENTS:
        if doc.suffix != ".md":
            continue
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+://|^#|^mailto:", target):
                continue
            path = target.split("#", 1)[0]
            if path and not (doc.parent / path).exists() and not (ROOT / path).exists():
                bad.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(("what", "pattern"), [("issue number", ISSUE), ("date", DATE), ("commit hash", HASH),
                                               ("history note", NOTE)])
def test_no_history_in_documents_docstrings_or_comments(what: str, pattern: re.Pattern[str]) -> None:
    bad = [f"{f}:{i}: {line.strip()}" for f, i, line in _lines(DOCUMENTS + SOURCES + CODE) if pattern.search(line)]
    assert not bad, f"{len(bad)} line(s) with a {what}:\n" + "\n".join(bad[:40])


ENVIRONMENTS = [n for n in dpbandits.__all__ if inspect.isclass(getattr(dpbandits, n))
                and getattr(dpbandits, n).__module__.startswith("dpbandits.envs")]


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_every_environment_docstring_has_parameters_and_examples(name: str) -> None:
    doc = inspect.getdoc(getattr(dpbandits, name)) or ""
    for section in ("Parameters", "Examples"):
        assert re.search(rf"^{section}\n-{{{len(section)}}}$", doc, re.MULTILINE), f"{name}: no {section} section"
    assert f"dp.{name}(" in doc.split("Examples\n--------", 1)[1]
