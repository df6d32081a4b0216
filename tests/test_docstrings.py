"""Every public name has documentation: the API reference (docs/api, built
from the docstrings) must not show an undocumented entry.

Public: the names of ``dpbandits.__all__`` and of every public submodule
(no leading underscore in its path): its ``__all__``, or else the classes
and functions it defines. Classes and functions need a docstring, and so do
the public methods and properties a package class defines. Constants and
type aliases cannot carry ``__doc__``; they need an attribute docstring (a
string right after the assignment, which mkdocstrings renders) or a ``#:``
comment right above it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import types
from pathlib import Path

import dpbandits


def public_modules() -> list[types.ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(dpbandits.__path__, "dpbandits.")
             if not any(part.startswith("_") for part in m.name.split(".")[1:])]
    return [dpbandits, *(importlib.import_module(n) for n in names)]


def public_names(module: types.ModuleType) -> list[str]:
    if hasattr(module, "__all__"):
        return [n for n in module.__all__ if n != "__version__"]
    return [n for n, o in vars(module).items() if not n.startswith("_")
            and (inspect.isclass(o) or inspect.isfunction(o)) and o.__module__ == module.__name__]


def is_code(obj: object) -> bool:
    return inspect.isclass(obj) or inspect.isroutine(obj)


def documented_assignments(module: types.ModuleType) -> set[str]:
    """Names assigned at module level with an attribute docstring or a ``#:`` comment."""
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return set()
    source = Path(path).read_text(encoding="utf-8")
    lines = source.splitlines()
    body = ast.parse(source).body
    out = set()
    for i, node in enumerate(body):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if not names:
            continue
        after = body[i + 1] if i + 1 < len(body) else None
        has_string = (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                      and isinstance(after.value.value, str) and after.value.value.strip() != "")
        has_comment = node.lineno >= 2 and lines[node.lineno - 2].lstrip().startswith("#:")
        if has_string or has_comment:
            out.update(names)
    return out


def undocumented(modules: list[types.ModuleType]) -> list[str]:
    """The public names of ``modules`` that lack documentation."""
    documented_data: set[str] = set()
    for module in modules:
        documented_data |= {f"{module.__name__}.{n}" for n in documented_assignments(module)}
    missing = []
    for module in modules:
        if not (module.__doc__ or "").strip():
            missing.append(f"module {module.__name__}")
        for name in public_names(module):
            obj = getattr(module, name)
            if inspect.ismodule(obj):
                continue
            if is_code(obj):
                if not (obj.__doc__ or "").strip():
                    missing.append(f"{module.__name__}.{name}")
                if inspect.isclass(obj) and obj.__module__.split(".")[0] in ("dpbandits", module.__name__):
                    for attr, value in vars(obj).items():
                        if attr.startswith("_"):
                            continue
                        target = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                        if (isinstance(value, property) or inspect.isroutine(target)) \
                                and not (getattr(target, "__doc__", None) or "").strip():
                            missing.append(f"{module.__name__}.{name}.{attr}")
            elif not any(d.endswith(f".{name}") for d in documented_data):
                # A constant or alias: documented where it is defined (it may be re-exported).
                missing.append(f"{module.__name__}.{name} (constant: add a docstring after it)")
    return sorted(set(missing))


def test_every_public_name_has_a_docstring() -> None:
    missing = undocumented(public_modules())
    assert not missing, "public names without a docstring:\n" + "\n".join(missing)


def test_the_check_sees_a_missing_docstring(tmp_path: Path) -> None:
    # The check must be able to fail: an undocumented module, constant,
    # class, method, property and function are each reported.
    source = ("X = 1\n\n\nclass A:\n    def f(self):\n        pass\n\n    @property\n    def p(self):\n"
              "        return 1\n\n\ndef g():\n    pass\n")
    path = tmp_path / "undocumented.py"
    path.write_text(source)
    module = types.ModuleType("undocumented")
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    module.__all__ = ["X", "A", "g"]
    assert undocumented([module]) == ["module undocumented", "undocumented.A", "undocumented.A.f",
                                      "undocumented.A.p", "undocumented.X (constant: add a docstring after it)",
                                      "undocumented.g"]
    path.write_text('"""Doc."""\n\n#: documented\nX = 1\nY = 2\n"""Y, documented."""\n')
    assert documented_assignments(module) == {"X", "Y"}
