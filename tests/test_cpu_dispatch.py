"""Runtime CPU dispatch (rust/src/cpu_dispatch.rs): the AVX2 + FMA build of
the scoring kernels and the normal sampler agree with the baseline build."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from dpbandits import _core

_PROBE = """
import json, numpy as np, dpbandits as db
out = {"build": db._core.kernel_build()}
for d in (5, 20, 40):
    lin = db.JointDPLinUCB(d=d, horizon=1000, epsilon=1.0, delta=0.1, seed=3)
    rng = np.random.default_rng(d)
    for _ in range(50):
        x = rng.normal(size=(30, d)); x /= np.linalg.norm(x, axis=1, keepdims=True)
        a = lin.select(x)
        lin.update(x[a], float(rng.uniform(-1, 1)))
    out[f"ucb{d}"] = lin.ucb(x).tolist()
print(json.dumps(out))
"""


def _probe(mode: str) -> dict:
    env = {**os.environ, "DPBANDITS_CPU_DISPATCH": mode}
    run = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def test_kernel_build_names_a_known_build():
    assert _core.kernel_build() in ("avx2-fma", "baseline")


def test_the_environment_variable_forces_the_baseline_build_and_both_builds_agree():
    base, auto = _probe("baseline"), _probe("auto")
    assert base["build"] == "baseline"
    assert auto["build"] == _core.kernel_build()
    for d in (5, 20, 40):
        # Fused multiply-adds round once per step: agreement to rounding.
        np.testing.assert_allclose(auto[f"ucb{d}"], base[f"ucb{d}"], rtol=1e-11, atol=1e-11)
    # Trajectories are not compared: with unit-norm actions the first
    # round's scores tie exactly, and rounding then picks the action. The
    # normal sampler's bit-for-bit identity is a Rust test (cpu_dispatch.rs).
