"""The release artefacts: ``scripts/build-wheels.sh`` builds an sdist and,
from a fresh unpack of it, a manylinux2014 abi3 wheel; the wheel installs
into a fresh virtual environment whose PATH has no ``cargo`` or ``rustc``
and runs a private simulation and a checkpoint round trip there.

One release build (a few minutes on two cores: the compiled dependencies
are shared with the development build's target directory), so the test is
marked ``slow``; CI runs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "build-wheels.sh"

pytestmark = pytest.mark.slow

SMOKE = """
import os, sys, tempfile
import dpbandits as dp
assert dp.__version__ == sys.argv[1], (dp.__version__, sys.argv[1])
assert "site-packages" in dp.__file__, dp.__file__
learner = dp.DPKLUCB(3, 2000, 1.0, seed=1)
result = dp.simulate(learner, dp.BernoulliBandit([0.8, 0.5, 0.2]), seeds=2)
assert result.final_regret.shape == (2,)
online = dp.DPKLUCB(3, 100, 1.0, seed=5)
for _ in range(10):
    online.select()
    online.update(1.0)
path = os.path.join(tempfile.mkdtemp(), "learner.ckpt")
online.save(path)
restored = dp.DPKLUCB.load(path)
assert restored.t == online.t == 10
print("smoke ok", dp.__version__, learner.privacy.epsilon)
"""


def _crate_version() -> str:
    # The [package] table comes first in Cargo.toml: its first `version` line.
    match = re.search(r'^version = "([^"]+)"$', (ROOT / "Cargo.toml").read_text(), re.MULTILINE)
    assert match is not None
    return match.group(1)


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    assert out.returncode == 0, f"{cmd}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    if shutil.which("cargo") is None:
        pytest.skip("the release build needs cargo")
    out_dir = tmp_path_factory.mktemp("dist")
    build = _run(["bash", str(SCRIPT), str(out_dir)], cwd=ROOT, timeout=1800)
    (wheel,) = out_dir.glob("dpbandits-*.whl")
    (sdist,) = out_dir.glob("dpbandits-*.tar.gz")
    return wheel, sdist, build.stdout


def test_version_is_declared_once() -> None:
    project = (ROOT / "pyproject.toml").read_text().split("[project]", 1)[1].split("\n[", 1)[0]
    assert re.search(r"^version\s*=", project, re.MULTILINE) is None
    assert re.search(r'^dynamic = \[[^\]]*"version"', project, re.MULTILINE) is not None


def test_wheel_is_manylinux2014_abi3_with_stubs(release: tuple[Path, Path, str]) -> None:
    wheel, sdist, report = release
    version = _crate_version()
    assert wheel.name.startswith(f"dpbandits-{version}-cp310-abi3-"), wheel.name
    assert "manylinux_2_17_x86_64" in wheel.name or "manylinux2014_x86_64" in wheel.name, wheel.name
    assert sdist.name == f"dpbandits-{version}.tar.gz"
    assert "manylinux_2_17_x86_64" in report  # auditwheel's verdict on the linked symbols
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    for member in ("dpbandits/__init__.py", "dpbandits/_core.pyi", "dpbandits/py.typed"):
        assert member in names
    assert any(n.startswith("dpbandits/_core.") and n.endswith(".so") for n in names)


def test_wheel_runs_without_rust(release: tuple[Path, Path, str], tmp_path: Path) -> None:
    wheel, _, _ = release
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    bin_dir = venv / "bin"
    # A PATH with the venv and the system tools only: no cargo, no rustc.
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    env = {"PATH": path, "HOME": str(tmp_path), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    probe = _run([str(bin_dir / "python"), "-c", "import shutil; print(shutil.which('cargo'), shutil.which('rustc'))"],
                 env=env, timeout=60)
    assert probe.stdout.split() == ["None", "None"]
    _run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)], env=env, timeout=900, cwd=tmp_path)
    smoke = _run([str(bin_dir / "python"), "-c", SMOKE, _crate_version()], env=env, timeout=300, cwd=tmp_path)
    assert "smoke ok" in smoke.stdout
