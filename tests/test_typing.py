"""The package type-checks: ``mypy python/dpbandits`` finds no error (it
ships ``py.typed``, so its users' type checkers read these annotations and
the stubs in ``_core.pyi``). Part of the test command, so CI keeps it at
zero."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_the_package() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", str(ROOT / "python" / "dpbandits")],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


def test_the_stubs_match_the_extension() -> None:
    """``mypy.stubtest`` imports ``dpbandits._core`` and compares every
    class, method, signature (names, kinds, defaults), property and
    ``__all__`` with ``_core.pyi``: zero errors, so the stubs cannot drift
    from the bindings."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "dpbandits._core"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout
