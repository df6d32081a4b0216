"""The documentation site builds with no warning (``mkdocs build --strict``):
every page, every included file (README.md, REPRODUCTION.md, examples/),
every link and every API entry generated from the docstrings."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_docs_build_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                          str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
                         capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-5000:]
    assert "WARNING" not in out.stderr, out.stderr[-5000:]
    reference = (site / "api" / "learners" / "index.html").read_text(encoding="utf-8")
    assert 'id="dpbandits.learners.linucb.JointDPLinUCB"' in reference  # generated from the docstrings
    experiments = (site / "guide" / "experiments" / "index.html").read_text(encoding="utf-8")
    assert "shariff-sheffet-d2" in experiments  # REPRODUCTION.md is included
    assert (site / "figures" / "shariff-sheffet-d2.png").is_file()
    # Sphinx roles of the docstrings do not reach the pages verbatim.
    pages = [p.read_text(encoding="utf-8") for p in (site / "api").rglob("*.html")]
    leftovers = [p for p in pages if re.search(r":(class|func|meth|attr|mod|exc):<code>", p)]
    assert not leftovers, f"{len(leftovers)} API pages still show Sphinx roles"
    assert "<code>PrivacyBudget</code>" in (site / "api" / "privacy" / "index.html").read_text(encoding="utf-8")
    # Every public class and function of dpbandits has its entry in the built reference.
    import inspect

    import dpbandits

    html = "".join(p.read_text(encoding="utf-8") for p in (site / "api").rglob("*.html"))
    missing = [n for n in dpbandits.__all__ if n != "__version__"
               and not inspect.ismodule(getattr(dpbandits, n))
               and f'id="{getattr(dpbandits, n).__module__}.{n}"' not in html]
    assert not missing, f"not in the built API reference: {missing}"
    # The home page includes README sections, not the whole README under a second title.
    home = (site / "index.html").read_text(encoding="utf-8")
    assert home.count("<h1") == 1


def test_roles_become_code() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from mkdocs_hooks import strip_roles
    finally:
        sys.path.remove(str(ROOT))
    html = "see :class:<code>~dpbandits.errors.PrivacyBudgetError</code> and :func:<code>core_set</code>"
    assert strip_roles(html) == "see <code>PrivacyBudgetError</code> and <code>core_set</code>"
    assert strip_roles("a :ref:<code>x</code>") == "a :ref:<code>x</code>"  # other roles untouched
