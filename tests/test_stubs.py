"""The hand-written stubs of the extension cannot drift from it."""

from __future__ import annotations

import ast
from pathlib import Path

import dpbandits
from dpbandits import _core

STUB = Path(dpbandits.__file__).with_name("_core.pyi")


def _is_protocol(node: ast.ClassDef) -> bool:
    return any(isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases)


def _stub_names() -> dict[str, set[str]]:
    """Every runtime name the stub declares, with a class's methods (its
    own and those of the stub-only protocols it derives from, which hold
    the surface `engine_methods!` shares and do not exist at runtime)."""
    tree = ast.parse(STUB.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def methods(node: ast.ClassDef) -> set[str]:
        own = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                own |= methods(classes[base.id])
        return own

    names: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = set()
        elif isinstance(node, ast.ClassDef) and not _is_protocol(node):
            names[node.name] = methods(node)
        elif isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            names.update({t.id: set() for t in targets if isinstance(t, ast.Name) and t.id != "__all__"})
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
        for m in methods - {"__init__", "__new__"}:
            assert hasattr(obj, m), f"{name}.{m} is stubbed but missing"
