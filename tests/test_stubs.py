"""The hand-written stubs of the extension cannot drift from it."""

from __future__ import annotations

import ast
from pathlib import Path

import dpbandits
from dpbandits import _core

STUB = Path(dpbandits.__file__).with_name("_core.pyi")


def _stub_names() -> dict[str, set[str]]:
    tree = ast.parse(STUB.read_text())
    names: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = set()
        elif isinstance(node, ast.ClassDef):
            names[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = set()
    return names


def test_every_extension_name_has_a_stub_and_back() -> None:
    stubbed = _stub_names()
    public = {n for n in dir(_core) if not n.startswith("__") or n == "__version__"}
    public -= {"_core"}
    assert public == set(stubbed), (
        f"missing stubs: {sorted(public - set(stubbed))}; stale stubs: {sorted(set(stubbed) - public)}"
    )


def test_every_stubbed_method_exists() -> None:
    for name, methods in _stub_names().items():
        obj = getattr(_core, name)
        for m in methods - {"__init__"}:
            assert hasattr(obj, m), f"{name}.{m} is stubbed but missing"
