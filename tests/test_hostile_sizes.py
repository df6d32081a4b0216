"""Hostile sizes: no process crash on any size.

The rule: every public constructor, and ``simulate``, given a size argument
of 2**31, 2**40 or 2**63 either works (a size that costs no memory, such
as a horizon: the trees keep O(log T) nodes) or raises a Python exception
that is a subclass of ``Exception`` and names the argument. Never a signal
(SIGABRT from a failed allocation, SIGKILL from the out-of-memory killer)
and never ``pyo3_runtime.PanicException`` (a BaseException). The calls run
in child processes under a 4 GiB address-space limit (RLIMIT_AS), so an
allocation that would have been attempted fails there instead of
swapping the machine.

Also: arithmetic that overflows for a tiny epsilon or a large d is a
ValueError naming the argument and the range that works, and a checkpoint
whose JSON header nests 100,000 arrays is a CheckpointError.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import struct
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core, checkpoint
from dpbandits._sizes import check_bytes, format_bytes, memory_limit
from dpbandits.errors import AllocationError, CheckpointError

SIZES = (2**31, 2**40, 2**63)
LIMIT = 4 << 30  # RLIMIT_AS of the child processes

# Each case: (label, argument, code, must_raise). ``must_raise`` False: the
# size may be fine (horizons cost O(log T) memory; the case then also
# takes a round, where lazily allocated state would show). ``{v}`` is the
# size. Names: dp (the package), np, mechanisms, nets.
SAMPLER = "lambda rng: np.eye(3)"
ENV = "dp.BernoulliBandit([0.1, 0.5, 0.9])"
CASES: dict[str, list[tuple[str, str, bool]]] = {
    "UCB1": [("k", "dp.UCB1({v}, 100)", True),
             ("horizon", "l = dp.UCB1(3, {v}); l.select(); l.update(0.5)", False)],
    "ThompsonSampling": [("k", "dp.ThompsonSampling({v}, 100)", True),
                         ("horizon", "l = dp.ThompsonSampling(3, {v}); l.select(); l.update(0.5)", False)],
    "PrivateUCB": [("k", "dp.PrivateUCB({v}, 100, 1.0)", True),
                   ("horizon", "l = dp.PrivateUCB(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "PrivateThompsonSampling": [
        ("k", "dp.PrivateThompsonSampling({v}, 100, 1.0)", True),
        ("horizon", "l = dp.PrivateThompsonSampling(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "KLUCB": [("k", "dp.KLUCB({v}, 100)", True),
             ("horizon", "l = dp.KLUCB(3, {v}); l.select(); l.update(0.5)", False)],
    "DPKLUCB": [("k", "dp.DPKLUCB({v}, 100, 1.0)", True),
               ("horizon", "l = dp.DPKLUCB(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "DPIMED": [("k", "dp.DPIMED({v}, 100, 1.0)", True),
              ("horizon", "l = dp.DPIMED(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "DPSE": [("k", "dp.DPSE({v}, 100, 1.0)", True),
            ("horizon", "l = dp.DPSE(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "DPTS": [("k", "dp.DPTS({v}, 100, 1.0)", True),
            ("horizon", "l = dp.DPTS(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "AdaPUCB": [("k", "dp.AdaPUCB({v}, 100, 1.0)", True),
               ("horizon", "l = dp.AdaPUCB(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "AdaPKLUCB": [("k", "dp.AdaPKLUCB({v}, 100, 1.0)", True),
                 ("horizon", "l = dp.AdaPKLUCB(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "AdaCUCB": [("k", "dp.AdaCUCB({v}, 100, 0.5)", True),
               ("horizon", "l = dp.AdaCUCB(3, {v}, 0.5); l.select(); l.update(0.5)", False)],
    "AdaCKLUCB": [("k", "dp.AdaCKLUCB({v}, 100, 0.5)", True),
                 ("horizon", "l = dp.AdaCKLUCB(3, {v}, 0.5); l.select(); l.update(0.5)", False)],
    "LinUCB": [("d", "dp.LinUCB({v}, 100)", True),
               ("horizon", "l = dp.LinUCB(3, {v}); l.select(np.eye(3)); l.update(0.5)", False),
               ("refactor_every", "l = dp.LinUCB(3, 100, refactor_every={v}); l.select(np.eye(3))", False)],
    "LocalLinUCB": [
        ("d", "dp.LocalLinUCB({v}, 100, 1.0, 0.1)", True),
        ("horizon", "l = dp.LocalLinUCB(3, {v}, 1.0, 0.1); l.select(np.eye(3)); l.update(0.5)", False)],
    "ShuffleLinUCB": [
        ("d", "dp.ShuffleLinUCB({v}, 100, 1.0, 0.1)", True),
        ("horizon", "l = dp.ShuffleLinUCB(3, {v}, 1.0, 0.1); l.select(np.eye(3)); l.update(0.5)", False),
        ("batch_size", "l = dp.ShuffleLinUCB(3, 1000, 1.0, 0.1, batch_size={v}); l.select(np.eye(3))", False)],
    "JointDPLinUCB": [
        ("d", "dp.JointDPLinUCB({v}, 100, 1.0, 0.1)", True),
        ("horizon", "l = dp.JointDPLinUCB(3, {v}, 1.0, 0.1); l.select(np.eye(3)); l.update(0.5)", False)],
    "PrivateContextualUCB": [
        ("d", "dp.PrivateContextualUCB({v}, 100, 1.0)", True),
        ("horizon", "l = dp.PrivateContextualUCB(3, {v}, 1.0); l.select(np.eye(3)); l.update(0.5)", False)],
    "PrivateContextualThompsonSampling": [
        ("d", "dp.PrivateContextualThompsonSampling({v}, 100, 1.0)", True),
        ("horizon", "l = dp.PrivateContextualThompsonSampling(3, {v}, 1.0); l.select(np.eye(3)); l.update(0.5)",
         False)],
    "EliminationLinearBandit": [
        ("d", "dp.EliminationLinearBandit('sphere', 1000, 'central', 1.0, d={v})", True),
        ("horizon", "l = dp.EliminationLinearBandit(np.eye(3), {v}, 'central', 1.0); l.select(); l.update(0.5)",
         False),
        ("horizon", "l = dp.EliminationLinearBandit(np.eye(3), {v}, 'shuffle', 1.0, 0.1); l.select(); l.update(0.5)",
         False),
        ("max_actions", "dp.EliminationLinearBandit('sphere', 1000, 'central', 1.0, d=3, zeta=0.5, "
                        "max_actions={v})", False)],
    "ContextualEliminationBandit": [
        ("d", f"dp.ContextualEliminationBandit('sphere', {SAMPLER}, 1000, 'local', 1.0, d={{v}}, n_samples=2)",
         True),
        ("horizon", f"l = dp.ContextualEliminationBandit(np.eye(3), {SAMPLER}, {{v}}, 'local', 1.0, n_samples=2); "
                    "l.select(np.eye(3)); l.update(0.5)", False)],
    "PrivateFTRL": [("n", "dp.PrivateFTRL({v}, 100, 1.0)", True),
                    ("horizon", "l = dp.PrivateFTRL(3, {v}, 1.0); l.select(); l.update([0.1, 0.2, 0.3])", False)],
    "PrivateStochasticExperts": [
        ("n", "dp.PrivateStochasticExperts({v}, 100, 1.0)", True),
        ("horizon", "l = dp.PrivateStochasticExperts(3, {v}, 1.0); l.select(); l.update([0.1, 0.2, 0.3])", False)],
    "LazyPrivateExperts": [
        ("n", "dp.LazyPrivateExperts({v}, 100, 1.0)", True),
        ("horizon", "l = dp.LazyPrivateExperts(3, {v}, 1.0); l.select(); l.update([0.1, 0.2, 0.3])", False)],
    "LazyPrivateOCO": [
        ("n", "dp.LazyPrivateOCO({v}, 100, 1.0)", True),
        ("horizon", "l = dp.LazyPrivateOCO(3, {v}, 1.0); l.decision(); l.update([0.1, 0.2, 0.3])", False)],
    "PrivateDartboardExperts": [
        ("n", "dp.PrivateDartboardExperts({v}, 100, 1.0)", True),
        ("horizon", "l = dp.PrivateDartboardExperts(3, {v}, 1.0); l.select(); l.update([0.1, 0.2, 0.3])", False)],
    "BatchedPrivateEXP3": [
        ("k", "dp.BatchedPrivateEXP3({v}, 100, 1.0)", True),
        ("horizon", "l = dp.BatchedPrivateEXP3(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "TopTwoBAI": [
        ("k", "dp.TopTwoBAI({v}, 0.1)", True),
        ("max_samples", "l = dp.TopTwoBAI(3, 0.1, max_samples={v}); l.update(l.select(), 0.5)", False)],
    "DPTopTwo": [
        ("k", "dp.DPTopTwo({v}, 0.1, 1.0)", True),
        ("max_samples", "l = dp.DPTopTwo(3, 0.1, 1.0, max_samples={v}); l.update(l.select(), 0.5)", False)],
    "CTBTT": [
        ("k", "dp.CTBTT({v}, 0.1, 1.0)", True),
        ("max_samples", "l = dp.CTBTT(3, 0.1, 1.0, max_samples={v}); l.update(l.select(), 0.5)", False)],
    "AdaPTT": [
        ("k", "dp.AdaPTT({v}, 0.1, 1.0)", True),
        ("max_samples", "l = dp.AdaPTT(3, 0.1, 1.0, max_samples={v}); l.update(l.select(), 0.5)", False)],
    "AdaPTTStar": [
        ("k", "dp.AdaPTTStar({v}, 0.1, 1.0)", True),
        ("max_samples", "l = dp.AdaPTTStar(3, 0.1, 1.0, max_samples={v}); l.update(l.select(), 0.5)", False)],
    "DPBAI": [
        ("k", "dp.DPBAI({v}, 10**6, 1.0)", True),
        ("budget", "l = dp.DPBAI(3, {v}, 1.0); l.update(l.select(), 0.5)", False)],
    "LinearDPBAI": [
        ("budget", "l = dp.LinearDPBAI(np.eye(3), {v}, 1.0); l.update(l.select(), 0.5)", False)],
    "SequentialHalving": [
        ("k", "dp.SequentialHalving({v}, 10**6)", True),
        ("budget", "l = dp.SequentialHalving(3, {v}); l.update(l.select(), 0.5)", False)],
    "PrivateFTPL": [
        ("n", "dp.PrivateFTPL({v}, 100, 1.0, 0.1)", True),
        ("horizon", "l = dp.PrivateFTPL(3, {v}, 1.0, 0.1); l.select(); l.update([0.1, 0.2, 0.3])", False)],
    "EXP2": [("n", "dp.EXP2({v}, 100, 1.0)", True),
             ("horizon", "l = dp.EXP2(3, {v}, 1.0); l.select(); l.update(0.5)", False)],
    "SCRiBLe": [("n", "dp.SCRiBLe({v}, 100, 1.0).select()", True),
                ("horizon", "l = dp.SCRiBLe(3, {v}, 1.0); l.select(); l.update(0.1)", False)],
    "LinearBanditEnv": [("actions", "dp.LinearBanditEnv({v}, d=3)", True),
                        ("d", "dp.LinearBanditEnv(3, d={v})", True)],
    "ShariffSheffetEnv": [("d", "dp.ShariffSheffetEnv({v})", True),
                          ("d", "dp.ShariffSheffetEnv({v}, k=2)", True),
                          ("k", "dp.ShariffSheffetEnv(3, k={v}).decision_set(1)", True)],
    "ChasingAdversary": [("n", "dp.ChasingAdversary({v})", True)],
    "ReweightedLinUCB": [("d", "dp.ReweightedLinUCB({v}, 100)", True),
                         ("horizon", "dp.ReweightedLinUCB(3, {v})", False),
                         ("first_epoch", "dp.ReweightedLinUCB(3, 100, first_epoch={v})", False)],
    "JointDPReweightedLinUCB": [("d", "dp.JointDPReweightedLinUCB({v}, 100, 1.0, 1e-6)", True),
                                ("horizon", "dp.JointDPReweightedLinUCB(3, {v}, 1.0, 1e-6)", False)],
    "LogisticUCB": [("d", "dp.LogisticUCB({v}, 100)", True), ("horizon", "dp.LogisticUCB(3, {v})", False)],
    "LogisticThompsonSampling": [("d", "dp.LogisticThompsonSampling({v}, 100)", True),
                                 ("horizon", "dp.LogisticThompsonSampling(3, {v})", False)],
    "ReweightedLogisticUCB": [("d", "dp.ReweightedLogisticUCB({v}, 100)", True),
                              ("horizon", "dp.ReweightedLogisticUCB(3, {v})", False),
                              ("first_epoch", "dp.ReweightedLogisticUCB(3, 100, first_epoch={v})", False)],
    "JointDPReweightedLogisticUCB": [("d", "dp.JointDPReweightedLogisticUCB({v}, 100, 1.0, 1e-6)", True),
                                     ("horizon", "dp.JointDPReweightedLogisticUCB(3, {v}, 1.0, 1e-6)", False)],
    "LocalDPReweightedLogisticUCB": [("d", "dp.LocalDPReweightedLogisticUCB({v}, 100, 1.0, 1e-6)", True),
                                     ("horizon", "dp.LocalDPReweightedLogisticUCB(3, {v}, 1.0, 1e-6)", False)],
    "LogisticContextualEnv": [("d", "dp.LogisticContextualEnv({v})", True),
                              ("k", "dp.LogisticContextualEnv(3, k={v}).decision_set(1)", True)],
    "SwitchingBestExpert": [("n", "dp.SwitchingBestExpert({v})", True),
                            ("first_phase", "dp.SwitchingBestExpert(3, first_phase={v})", False)],
    "TreeCounter": [
        ("shape", "mechanisms.TreeCounter(({v},), 100, mechanisms.LaplaceNoise(1.0))", True),
        ("shape", "mechanisms.TreeCounter((3, {v}), 100, mechanisms.LaplaceNoise(1.0))", True),
        ("horizon", "c = mechanisms.TreeCounter((3,), {v}, mechanisms.LaplaceNoise(1.0)); "
                    "c.add([1.0, 2.0, 3.0]); c.release()", False)],
    "EpochCounter": [
        ("shape", "mechanisms.EpochCounter(({v},), 100, 1.0, 1e-6)", True),
        ("shape", "mechanisms.EpochCounter((3, {v}), 100, 1.0, 1e-6)", True),
        ("horizon", "c = mechanisms.EpochCounter((3,), {v}, 1.0, 1e-6); c.add([0.1, 0.2, 0.3]); c.release()",
         False),
        ("first_epoch", "mechanisms.EpochCounter((3,), 100, 1.0, 1e-6, first_epoch={v})", True)],
    "laplace": [("size", "mechanisms.laplace(1.0, {v})", True)],
    "gaussian": [("size", "mechanisms.gaussian(1.0, {v})", True)],
    "symmetric_gaussian": [("p", "mechanisms.symmetric_gaussian(1.0, {v})", True),
                           ("size", "mechanisms.symmetric_gaussian(1.0, 3, {v})", True)],
    "wishart": [("size", "mechanisms.wishart(np.eye(2), 3.0, {v})", True)],
    "zeta_net": [("d", "nets.zeta_net('sphere', {v}, 0.5)", True),
                 ("max_actions", "nets.zeta_net('sphere', 3, 0.5, {v})", False)],
    "simulate": [
        ("seeds", f"dp.simulate(dp.PrivateUCB(3, 100, 1.0), {ENV}, seeds={{v}})", True),
        ("horizon", f"dp.simulate(dp.PrivateUCB(3, {{v}}, 1.0), {ENV}, seeds=2, record_every=1)", True),
        ("record_every", f"dp.simulate(dp.PrivateUCB(3, 100, 1.0), {ENV}, seeds=2, record_every={{v}})", False)],
    "sweep": [("seeds", "dp.sweep({'a': {'learners': {'u': dp.UCB1(3, 100)}, 'env': dp.BernoulliBandit([0.1, 0.9])}}, "
                        "seeds={v}, progress=False)", True)],
    "simulate_many": [
        ("seeds", f"dp.simulate_many({{'a': dp.UCB1(3, 100), 'b': dp.UCB1(3, 100)}}, {ENV}, seeds={{v}})", True)],
}

#: Public classes whose sizes are arrays the caller already built (nothing
#: is allocated from a number), result types, and the privacy ledger (a path).
NO_SIZE_ARGUMENT = {
    "BernoulliBandit", "GaussianBandit", "StochasticLosses", "LossArray", "UniformLosses", "ReplayEnv",
    "Environment", "SimulationResult", "SweepResult", "Ledger", "BAIRuns",
    "GaussianNoise", "LaplaceNoise", "SymmetricGaussianNoise", "WishartNoise", "ZeroNoise",
}

CHILD = textwrap.dedent(
    """
    import json, os, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import numpy as np
    import dpbandits as dp
    from dpbandits import mechanisms, nets
    for label, arg, code in json.loads(sys.stdin.read()):
        print(json.dumps({{"start": label}}), flush=True)
        try:
            exec(code, {{"dp": dp, "np": np, "mechanisms": mechanisms, "nets": nets}})
            out = {{"label": label, "outcome": "ok"}}
        except BaseException as e:  # PanicException included: reported, judged by the parent
            out = {{"label": label, "outcome": "raised", "type": type(e).__module__ + "." + type(e).__qualname__,
                   "is_exception": isinstance(e, Exception), "message": str(e)}}
        print(json.dumps(out), flush=True)
    """
).format(limit=LIMIT)


def _all_cases() -> list[tuple[str, str, str, bool]]:
    out = []
    for name, cases in CASES.items():
        for arg, code, must_raise in cases:
            for v in SIZES:
                call = code.replace("{v}", str(v))
                out.append((f"{name}[{arg}={v}]: {call}", arg, call, must_raise))
    return out


def _run_child(cases: list[tuple[str, str, str, bool]]) -> tuple[dict[str, dict[str, Any]], str | None, str]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "RAYON_NUM_THREADS": "2"}
    env.pop("DPBANDITS_MAX_BYTES", None)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], input=json.dumps([(c[0], c[1], c[2]) for c in cases]),
        capture_output=True, text=True, timeout=120, env=env,
    )
    results: dict[str, dict[str, Any]] = {}
    last = None
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        if "start" in record:
            last = record["start"]
        else:
            results[record["label"]] = record
            last = None
    died = None
    if proc.returncode != 0:
        died = f"child exited with {proc.returncode} during {last!r}; stderr tail: {proc.stderr[-2000:]}"
    return results, died, proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS semantics are Linux's")
def test_every_size_argument_raises_a_named_exception_under_an_address_space_limit() -> None:
    cases = _all_cases()
    results, died, _ = _run_child(cases)
    assert died is None, died
    failures = []
    for label, arg, _code, must_raise in cases:
        r = results[label]
        if r["outcome"] == "ok":
            if must_raise:
                failures.append(f"{label}: constructed (expected an error naming `{arg}`)")
            continue
        if not r["is_exception"] or "PanicException" in r["type"]:
            failures.append(f"{label}: {r['type']} is not an Exception: {r['message']}")
        elif f"`{arg}`" not in r["message"]:
            failures.append(f"{label}: {r['type']} does not name `{arg}`: {r['message']}")
    assert not failures, "\n".join(failures)
    print(f"{len(cases)} hostile-size calls checked under RLIMIT_AS = {format_bytes(LIMIT)}")


def test_every_public_class_has_a_size_case() -> None:
    from dpbandits import envs, learners, mechanisms

    public = {
        name for module in (dp, learners, envs, mechanisms) for name in module.__all__
        if inspect.isclass(getattr(module, name))
    }
    missing = public - set(CASES) - NO_SIZE_ARGUMENT
    assert not missing, f"public classes without a hostile-size case: {sorted(missing)}"
    for fn in ("simulate", "simulate_many", "sweep"):
        assert fn in CASES


def test_the_issue_examples_raise_quickly_with_numpy_style_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPBANDITS_MAX_BYTES", str(1 << 30))
    with pytest.raises(MemoryError, match=r"`k`: Unable to allocate \d+(\.\d+)? GiB for the per-arm statistics") as e:
        dp.PrivateUCB(10**9, 100, 1.0)
    assert isinstance(e.value, AllocationError) and isinstance(e.value, ValueError)
    assert "at most 1.00 GiB can be allocated (DPBANDITS_MAX_BYTES)" in str(e.value)
    with pytest.raises(AllocationError, match="`n`"):
        dp.SCRiBLe(2**30, 100, 1.0)
    with pytest.raises(AllocationError, match="`n`"):
        dp.SCRiBLe(2**63, 100, 1.0)
    with pytest.raises(AllocationError, match="`seeds`"):
        dp.simulate(dp.UCB1(3, 100), dp.BernoulliBandit([0.2, 0.5, 0.8]), seeds=10**9)


def test_memory_limit_and_formatting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert format_bytes(512) == "512 bytes"
    assert format_bytes(int(7.28 * 2**40)) == "7.28 TiB"  # NumPy's example
    assert format_bytes(16 * 2**30) == "16.0 GiB"
    monkeypatch.setenv("DPBANDITS_MAX_BYTES", "12345")
    assert memory_limit() == (12345, "DPBANDITS_MAX_BYTES")
    check_bytes("k", 1, 12345, "x")
    with pytest.raises(AllocationError, match=r"invalid argument `k`: Unable to allocate 12.1 KiB for x \(k = 2\)"):
        check_bytes("k", 2, 12346, "x")


def test_sizes_that_fit_still_work(monkeypatch: pytest.MonkeyPatch) -> None:
    # The checks are lower bounds: ordinary sizes are untouched.
    dp.PrivateUCB(10_000, 1000, 1.0).select()
    dp.SCRiBLe(1000, 100, 1.0).select()
    dp.simulate(dp.UCB1(3, 100), dp.BernoulliBandit([0.2, 0.5, 0.8]), seeds=3, record_every=1)


@pytest.mark.parametrize("make", [
    lambda: _core.MabEngine(2**62, 100),
    lambda: _core.MabEngine(2**62, 100, noise=("laplace", 1.0)),
    lambda: _core.ScribleEngine(2**62, 100, 0.1),
    lambda: _core.Exp2Engine(2**62, 2**63, 1e-9, 0.5),
    lambda: _core.FollowTheLeaderEngine(2**62, 100, "simplex", ("zero",), eta=0.1),
    lambda: _core.LinearBanditEnvEngine(2**40, 2**40, None, 0),
    lambda: _core.LossEnvEngine.switching_best(2**62, 1, 0, "simplex"),
], ids=["mab", "mab-tree", "scrible", "exp2", "ftl", "linear-env", "switching"])
def test_the_core_allocates_fallibly(make: Any) -> None:
    # Past the Python checks, the Rust core's own allocations are fallible:
    # an impossible size is an error (MemoryError or ValueError naming the
    # argument), never a panic or an abort.
    with pytest.raises((MemoryError, ValueError), match=r"invalid argument `\w+`"):
        make()


def test_record_points_are_checked_before_any_work() -> None:
    env = dp.BernoulliBandit([0.2, 0.5, 0.8])
    with pytest.raises(AllocationError, match=r"`record_every`.*`horizon`"):
        dp.simulate(dp.UCB1(3, 2**62), env, seeds=2, record_every=1)


# ---- arithmetic that overflows -------------------------------------------------------------

def test_tiny_epsilon_names_epsilon_and_the_working_range() -> None:
    with pytest.raises(ValueError, match=r"`epsilon`.*epsilon >= \S+ works") as e:
        dp.EXP2(4, 100, epsilon=1e-300)
    assert not isinstance(e.value, OverflowError)
    bound = float(str(e.value).rsplit("epsilon >= ", 1)[1].split()[0])
    dp.EXP2(4, 100, epsilon=bound)  # the range reported works


def test_large_d_names_d_and_the_working_range() -> None:
    with pytest.raises(ValueError, match=r"`d`.*d <= \d+ works") as e:
        dp.EliminationLinearBandit("sphere", 1000, "central", 1.0, d=4097)
    assert not isinstance(e.value, OverflowError)
    works = int(str(e.value).rsplit("d <= ", 1)[1].split()[0])
    assert works >= 2
    dp.EliminationLinearBandit("sphere", 1000, "central", 1.0, d=works)


PRIVATE = {
    "PrivateUCB": lambda e: dp.PrivateUCB(3, 100, e),
    "PrivateThompsonSampling": lambda e: dp.PrivateThompsonSampling(3, 100, e),
    "JointDPLinUCB": lambda e: dp.JointDPLinUCB(3, 100, e, 0.1),
    "JointDPLinUCB-wishart": lambda e: dp.JointDPLinUCB(3, 100, e, 0.1, noise="wishart"),
    "PrivateContextualUCB": lambda e: dp.PrivateContextualUCB(3, 100, e),
    "Elimination-central": lambda e: dp.EliminationLinearBandit(np.eye(3), 100, "central", e),
    "Elimination-shuffle": lambda e: dp.EliminationLinearBandit(np.eye(3), 100, "shuffle", e, 0.1,
                                                               shuffle_method="numerical"),
    "Elimination-shuffle-sum": lambda e: dp.EliminationLinearBandit(np.eye(3), 100, "shuffle-sum", e, 0.1),
    "PrivateFTRL": lambda e: dp.PrivateFTRL(3, 100, e),
    "PrivateFTPL": lambda e: dp.PrivateFTPL(3, 100, e, 0.1),
    "EXP2": lambda e: dp.EXP2(4, 100, e),
    "SCRiBLe": lambda e: dp.SCRiBLe(3, 100, e),
}


@pytest.mark.parametrize("name", list(PRIVATE))
@pytest.mark.parametrize("epsilon", [5e-324, 1e-300, 1e-160, 1e-20, 1e300])
def test_extreme_epsilon_is_a_value_error_naming_epsilon(name: str, epsilon: float) -> None:
    try:
        PRIVATE[name](epsilon)
    except ValueError as exc:
        assert "`epsilon`" in str(exc), str(exc)
    # Anything else (OverflowError, ZeroDivisionError, a PanicException) fails the test.


# ---- checkpoint headers ----------------------------------------------------------------------

def _forge(path: Any, header: bytes, state: bytes = b"") -> None:
    body = b"".join([checkpoint.MAGIC, struct.pack("<I", checkpoint.FORMAT_VERSION),
                     struct.pack("<I", len(header)), header, struct.pack("<Q", len(state)), state])
    path.write_bytes(body + hashlib.sha256(body).digest())


def test_a_deeply_nested_header_is_a_checkpoint_error(tmp_path: Any) -> None:
    path = tmp_path / "deep.ckpt"
    _forge(path, b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(CheckpointError, match="nests 100000 levels"):
        checkpoint.read_checkpoint(path)
    with pytest.raises(CheckpointError):
        dp.PrivateUCB.load(path)
    objects = tmp_path / "objects.ckpt"
    _forge(objects, b'{"a":' * 5000 + b"1" + b"}" * 5000)
    with pytest.raises(CheckpointError, match="nests"):
        checkpoint.read_checkpoint(objects)


def test_brackets_inside_strings_do_not_count_and_real_checkpoints_load(tmp_path: Any) -> None:
    assert checkpoint._json_depth(b'{"a": "[[[[[[\\"]]]]", "b": [1, [2]]}') == 3
    learner = dp.PrivateUCB(3, 100, 1.0, seed=1)
    learner.select()
    path = tmp_path / "ok.ckpt"
    learner.save(path)
    assert dp.PrivateUCB.load(path).t == learner.t


def test_an_oversized_header_is_a_checkpoint_error(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    learner = dp.PrivateUCB(3, 100, 1.0, seed=1)
    path = tmp_path / "big.ckpt"
    learner.save(path)
    monkeypatch.setattr(checkpoint, "MAX_HEADER_BYTES", 16)
    with pytest.raises(CheckpointError, match="exceeds the limit"):
        checkpoint.read_checkpoint(path)


def test_a_checkpoint_larger_than_memory_is_refused_before_reading(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    learner = dp.PrivateUCB(3, 100, 1.0, seed=1)
    path = tmp_path / "ok.ckpt"
    learner.save(path)
    monkeypatch.setenv("DPBANDITS_MAX_BYTES", "64")
    with pytest.raises(CheckpointError, match="does not fit in memory"):
        dp.PrivateUCB.load(path)


def test_the_tree_limit_names_the_learners_own_argument() -> None:
    # A tree over more than 2**27 node entries is refused by the core naming
    # its `shape`, which a learner's caller never passed: the learner names
    # its own argument and the largest value that works at its horizon.
    from dpbandits._sizes import MAX_TREE_ENTRIES

    levels = (100).bit_length()
    with pytest.raises(AllocationError, match=rf"`n`.*n <= {MAX_TREE_ENTRIES // levels} works at horizon = 100"):
        dp.PrivateFTRL(MAX_TREE_ENTRIES // levels + 1, 100, 1.0)
    with pytest.raises(AllocationError, match=r"`n`"):
        dp.PrivateFTPL(10**8, 100, 1.0, 0.1)
    with pytest.raises(AllocationError, match=r"`d`: .* d <= 6192 works at horizon = 100"):
        dp.PrivateContextualUCB(6193, 100, 1.0)


# ---- work ------------------------------------------------------------------------------------

#: Arguments that set work rather than memory: each call must be refused
#: at once, with a ValueError naming the argument and the work it implies
#: (or, where the memory runs out first, an AllocationError naming it).
UCB = "dp.UCB1(3, {h})"
WORK_CASES: list[tuple[str, str]] = [
    ("horizon", f"dp.simulate({UCB.format(h=2**40)}, {ENV}, seeds=2)"),
    ("horizon", f"dp.simulate({UCB.format(h=2**63)}, {ENV}, seeds=2)"),
    ("horizon", f"dp.simulate({UCB.format(h=2**63)}, {ENV}, horizon=2**62, seeds=2)"),
    ("seeds", f"dp.simulate({UCB.format(h=10**6)}, {ENV}, seeds=2 * 10**6, record_every=10**6)"),
    ("horizon", f"dp.simulate_many({{'a': {UCB.format(h=2**40)}, 'b': {UCB.format(h=2**40)}}}, {ENV}, seeds=1)"),
    ("seeds", f"dp.sweep({{'a': {{'learners': {{'u': {UCB.format(h=2**40)}}}, 'env': {ENV}}}}}, seeds=2, "
              "progress=False, n_jobs=1)"),
    ("grid", f"dp.sweep({{'a': {{'learners': {{'u': {UCB.format(h=2**63)}}}, 'env': {ENV}}}}}, seeds=1, "
             "progress=False, n_jobs=1)"),
    ("n", "from dpbandits.privacy import shuffle; shuffle.shuffle_amplification(1.0, 2**63, 1e-6, 'numerical')"),
    ("n", "from dpbandits.privacy import shuffle; shuffle.shuffle_amplification(1.0, 2**50, 1e-6, 'numerical')"),
    ("n_samples", f"dp.ContextualEliminationBandit(np.eye(3), {SAMPLER}, 1000, 'local', 1.0, n_samples=2**40)"),
    ("horizon", "from dpbandits import audit; audit.laplace_tree_mechanism(2**40, 1.0)"),
    ("horizon", "from dpbandits import audit; audit.factorization_mechanism('sqrt', 2**20, 1.0)"),
    ("horizon", "from dpbandits import audit; audit.smooth_binary_mechanism(2**20, 'gaussian', 1.0)"),
    ("n", "from dpbandits import audit; audit.audit(audit.gaussian_tree_mechanism(4, 1.0), epsilon=1.0, n=2**40)"),
]

#: Calls whose work used to grow with an argument and no longer does: they
#: must finish quickly (calibrations at the largest horizons).
QUICK_CASES: list[str] = [
    "dp.ShuffleLinUCB(3, 2**63, 1.0, 0.1)",
    "dp.ShuffleLinUCB(3, 2**63, 1.0, 1e-12)",
    "dp.ShuffleLinUCB(3, 2**63, 1.0, 0.1, shuffle_method='closed-form')",
    "dp.ShuffleLinUCB(3, 2**62, 0.1, 1e-6)",
]

WORK_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import numpy as np
    import dpbandits as dp
    for code in json.loads(sys.stdin.read()):
        # CPU time of this process (all threads): the work a call does, whatever
        # else the machine runs meanwhile.
        start = time.process_time()
        try:
            exec(code, {{"dp": dp, "np": np}})
            out = {{"outcome": "ok"}}
        except BaseException as e:
            out = {{"outcome": "raised", "type": type(e).__qualname__, "is_exception": isinstance(e, Exception),
                   "message": str(e)}}
        out["seconds"] = time.process_time() - start
        print(json.dumps(out), flush=True)
    """
).format(limit=LIMIT)


def _run_work_child(codes: list[str]) -> list[dict[str, Any]]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "RAYON_NUM_THREADS": "2"}
    for var in ("DPBANDITS_MAX_BYTES", "DPBANDITS_MAX_WORK_SECONDS"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-c", WORK_CHILD], input=json.dumps(codes), capture_output=True,
                          text=True, timeout=120, env=env)
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0 and len(out) == len(codes), (
        f"child exited with {proc.returncode} after {len(out)} of {len(codes)} calls: {proc.stderr[-2000:]}")
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS semantics are Linux's")
def test_every_work_argument_is_refused_at_once_naming_it() -> None:
    results = _run_work_child([code for _, code in WORK_CASES])
    failures = []
    for (arg, code), r in zip(WORK_CASES, results, strict=True):
        if r["outcome"] == "ok":
            failures.append(f"{code}: ran (expected a refusal naming `{arg}`)")
        elif not r["is_exception"] or f"invalid argument `{arg}`" not in r["message"]:
            failures.append(f"{code}: {r['type']} does not name `{arg}`: {r['message']}")
        elif r["type"] not in ("ValueError", "AllocationError"):
            failures.append(f"{code}: {r['type']}, expected ValueError or AllocationError")
        elif r["seconds"] > 2.0:
            failures.append(f"{code}: refused after {r['seconds']:.1f} s of CPU (a refusal must be immediate)")
        elif r["type"] == "ValueError" and "of work" not in r["message"]:
            failures.append(f"{code}: the message does not state the work: {r['message']}")
    assert not failures, "\n".join(failures)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS semantics are Linux's")
def test_calibrations_at_the_largest_horizons_are_quick() -> None:
    # The exact blanket-bit search of ShuffleLinUCB evaluates the binomial
    # likelihood ratio in O(1) operations whatever the batch (it used to
    # take O(sqrt(batch)): 25 s of CPU at horizon 2**63).
    results = _run_work_child(QUICK_CASES)
    slow = [f"{code}: {r['outcome']} after {r['seconds']:.1f} s of CPU {r.get('message', '')}"
            for code, r in zip(QUICK_CASES, results, strict=True) if r["outcome"] != "ok" or r["seconds"] > 5.0]
    assert not slow, "\n".join(slow)


def test_the_closed_form_binomial_ratio_matches_the_product_of_pmf_ratios() -> None:
    import math

    from dpbandits.privacy.linucb_trust import _log_ratio

    def product(y: int, shift: int, big_n: int, p: float) -> float:
        j = np.arange(shift, dtype=np.float64)
        return float(np.sum(np.log((big_n - y + 1.0 + j) / (y - j))) + shift * math.log(p / (1.0 - p)))

    checked = 0
    for big_n in (1, 2, 5, 17, 50, 300, 10**4, 10**6, 10**9, 10**12, 2**60):
        for shift in (1, 2, 3, 7, 15, 16, 17, 40, 1000, 10**5):
            for p in (0.5, 0.3, 1e-3, 0.999):
                ys = {shift, big_n, (shift + big_n) // 2, int(big_n * p), int(big_n * p) + shift // 2,
                      min(big_n, shift + 20), max(shift, big_n - 20)}
                for y in (y for y in ys if shift <= y <= big_n):
                    # Both sums carry rounding errors of about 1e-16 per unit of
                    # shift x log N: a tolerance 1000 times that.
                    tol = 1e-13 * shift * (1.0 + math.log(big_n + 1.0)) + 1e-12
                    assert _log_ratio(y, shift, big_n, p) == pytest.approx(product(y, shift, big_n, p), abs=tol)
                    checked += 1
    assert checked > 500


def test_work_limit_is_read_from_the_environment_and_the_reported_bound_works(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpbandits._sizes import check_learner_rounds, work_limit
    from dpbandits.privacy import shuffle

    monkeypatch.setenv("DPBANDITS_MAX_WORK_SECONDS", "0.01")
    assert work_limit() == (0.01, "DPBANDITS_MAX_WORK_SECONDS")
    with pytest.raises(ValueError, match=r"`n`: n = 4294967296 implies the numerical bound .* n <= \d+ works") as e:
        shuffle.shuffle_amplification(1.0, 2**32, 1e-6, "numerical")
    works = int(str(e.value).rsplit("n <= ", 1)[1].split()[0])
    shuffle.shuffle_amplification(1.0, works, 1e-6, "numerical")  # the n reported works
    with pytest.raises(ValueError, match=r"`horizon`.*horizon <= 2500000 works"):
        check_learner_rounds(10**7, 2, 1)
    check_learner_rounds(2_500_000, 2, 1)
    with pytest.raises(ValueError, match=r"`seeds`.*seeds <= 5 works"):
        check_learner_rounds(10**6, 10**7, 1)
    monkeypatch.setenv("DPBANDITS_MAX_WORK_SECONDS", "not a number")
    assert work_limit()[0] == 3600.0
