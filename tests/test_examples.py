"""Every script in examples/ runs, with a small horizon (its first argument),
and prints what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: script -> (horizon for the test, text its output must contain)
SMALL = {
    "online_custom_env.py": (600, "online: 600 rounds"),
    "replay_logged_data.py": (300, "LinUCB: error rate"),
    "sweep_dask.py": (1000, "eps8   PrivateUCB"),
    "checkpointed_run.py": (2000, "regret after 2000 rounds"),
    "budget_across_learners.py": (2000, "refused PrivateUCB"),
}


#: Long-running examples with a test file of their own.
SERVICES = {"policy_service.py": "tests/test_service.py"}


def test_every_example_is_tested() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted([*SMALL, *SERVICES])


@pytest.mark.parametrize("script", sorted(SMALL))
def test_example_runs(script: str) -> None:
    horizon, expected = SMALL[script]
    env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    out = subprocess.run([sys.executable, str(EXAMPLES / script), str(horizon)], capture_output=True, text=True,
                         timeout=300, env=env, cwd=EXAMPLES.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    assert expected in out.stdout, out.stdout
