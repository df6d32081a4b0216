"""Hostile saved state: checkpoint files written by an attacker who can
write the file (the SHA-256 checksum recomputed after each edit, so only
the content's own checks stand).

- Single-bit edits of every learner kind's engine bytes: each edited file
  is refused with CheckpointError at load, or loads into a learner that
  plays on; never a Rust panic (pyo3's PanicException, a BaseException),
  another exception type, or a hang.
- Files that are not checkpoints of a learner class: kinds outside the
  registry of learner classes (nothing imported), non-regular files
  (devices, FIFOs, directories), oversized or value-dense headers (parsing
  memory bounded by a small multiple of the file), forged header fields.
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _hostile_kinds import KINDS, fuzz_kind

import dpbandits as dp
from dpbandits import checkpoint
from dpbandits.errors import CheckpointError
from dpbandits.learners.online import LearnerBase

# --- single-bit edits of the engine bytes --------------------------------------------

#: Edits per learner kind: the default suite, and the slow one (>= 2,000).
QUICK_EDITS = 200
FULL_EDITS = 2_000
#: Seconds for the whole fuzz: an edit that hangs fails the test here.
FUZZ_TIMEOUT = 900


def _fuzz(edits: int, directory: Path) -> list[dict]:  # type: ignore[type-arg]
    """Every kind's fuzz in two worker processes (the fuzz of one kind
    runs in one process; a hang fails the test through the timeout)."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        futures = [pool.submit(fuzz_kind, name, edits, str(directory), i) for i, name in enumerate(sorted(KINDS))]
        _, pending = concurrent.futures.wait(futures, timeout=FUZZ_TIMEOUT)
        if pending:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            pytest.fail(f"{len(pending)} learner kinds did not finish their fuzz within {FUZZ_TIMEOUT} s (a hang)")
        return [f.result() for f in futures]


def _check(results: list[dict], edits: int) -> None:  # type: ignore[type-arg]
    failures = []
    for r in results:
        total = sum(r["outcomes"].values())
        assert total >= min(edits, 1), r
        bad = {k: v for k, v in r["outcomes"].items() if k not in ("refused", "ok", "state_error")}
        if bad:
            failures.append(f"{r['name']}: {bad}; e.g. {r['examples']}")
        # Most edits of a state are refused or load: a fuzz that loads
        # nothing would test nothing.
        assert r["outcomes"].get("ok", 0) > 0, r
        assert r["outcomes"].get("refused", 0) > 0, r
    assert not failures, "\n".join(failures)


def test_single_bit_edits_of_every_engine_are_refused_or_play_on(tmp_path: Path) -> None:
    _check(_fuzz(QUICK_EDITS, tmp_path), QUICK_EDITS)


@pytest.mark.slow
def test_two_thousand_single_bit_edits_of_every_engine(tmp_path: Path) -> None:
    results = _fuzz(FULL_EDITS, tmp_path)
    for r in results:
        assert sum(r["outcomes"].values()) >= FULL_EDITS, r
    _check(results, FULL_EDITS)


# --- kinds: an explicit registry of learner classes ---------------------------------


def _saved(tmp_path: Path, learner: object | None = None) -> Path:
    path = tmp_path / "l.ckpt"
    (learner or dp.learners.PrivateUCB(3, 50, 1.0, seed=1)).save(path)  # type: ignore[attr-defined]
    return path


def _rewrite_header(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    """Rewrites the JSON header of the checkpoint ``path`` with ``edit``
    (a function of the decoded header dict) and recomputes the checksum."""
    raw = path.read_bytes()
    (hlen,) = struct.unpack_from("<I", raw, 12)
    header = json.loads(raw[16 : 16 + hlen])
    edit(header)
    new = json.dumps(header, sort_keys=True).encode()
    body = raw[:12] + struct.pack("<I", len(new)) + new + raw[16 + hlen : -32]
    import hashlib

    path.write_bytes(body + hashlib.sha256(body).digest())


@pytest.mark.parametrize("kind", [
    "dpbandits.__main__:LinUCB",
    "dpbandits.cli:main",
    "os:system",
    "builtins:object",
    "dpbandits.learners.online:LearnerBase",
    "dpbandits.learners.linucb:engine_decision_set",
    "dpbandits.learners.mab:PrivateUCB.__init__",
    "dpbandits.checkpoint:Checkpoint",
])
def test_a_kind_outside_the_registry_is_refused_without_importing_it(kind: str, tmp_path: Path) -> None:
    path = _saved(tmp_path)
    _rewrite_header(path, lambda h: h.update(kind=kind))
    # In a fresh interpreter: nothing the file names is imported (the
    # command-line module used to run and exit with SystemExit(2)).
    code = (
        "import sys\n"
        "from dpbandits.learners.online import LearnerBase\n"
        "from dpbandits.errors import CheckpointError\n"
        "before = set(sys.modules)\n"
        f"try:\n    LearnerBase.load({str(path)!r})\nexcept CheckpointError as e:\n    print('refused', e)\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith(('dpbandits', 'os', 'builtins'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("refused") and "not a learner class of dpbandits.learners" in lines[0], out.stdout
    # Only what every load imports (the checkpoint reader), never the module named.
    assert set(json.loads(lines[-1].replace("'", '"'))) <= {"dpbandits.checkpoint"}, out.stdout


def test_every_learner_class_is_in_the_registry(tmp_path: Path) -> None:
    from dpbandits.learners.online import _loadable_classes

    registry = _loadable_classes()
    for name in dp.learners.__all__:
        cls = getattr(dp.learners, name)
        assert registry[f"{cls.__module__}:{cls.__qualname__}"] is cls
    path = _saved(tmp_path)
    assert type(LearnerBase.load(path)).__name__ == "PrivateUCB"


# --- files that are not regular files ------------------------------------------------


def test_a_symlink_to_dev_zero_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.ckpt"
    link.symlink_to("/dev/zero")
    with pytest.raises(CheckpointError, match="character device, not a regular file"):
        LearnerBase.load(link)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.ckpt"
    os.mkfifo(fifo)
    # In a thread: before the fix, the open blocked forever waiting for a writer.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(LearnerBase.load, fifo)
        try:
            with pytest.raises(CheckpointError, match="a FIFO, not a regular file"):
                future.result(timeout=20)
        finally:
            if not future.done():  # unblock the reader so that the test ends
                with open(fifo, "wb"):
                    pass


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="directory"):
        LearnerBase.load(tmp_path)


def test_a_symlink_to_a_regular_checkpoint_loads(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    link = tmp_path / "link.ckpt"
    link.symlink_to(path)
    assert LearnerBase.load(link).t == 0


# --- header size and parsing memory --------------------------------------------------

HEADER_MB = 57


def _checkpoint_with_header(path: Path, header: bytes, state: bytes = b"\x00") -> None:
    import hashlib

    body = (checkpoint.MAGIC + struct.pack("<I", checkpoint.FORMAT_VERSION) + struct.pack("<I", len(header))
            + header + struct.pack("<Q", len(state)) + state)
    path.write_bytes(body + hashlib.sha256(body).digest())


def _peak_read(path: Path) -> tuple[int, str]:
    """The peak memory (resident set, bytes) that read_checkpoint(path)
    adds to a fresh interpreter (resource.getrusage), and what it returned:
    "ok <sum of the config's array>" or "refused <message>"."""
    code = (
        "import resource, sys\n"
        "from dpbandits import checkpoint\n"
        "from dpbandits.errors import CheckpointError\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    c = checkpoint.read_checkpoint(sys.argv[1])\n"
        "    out = f'ok {c.config[\"actions\"].sum()!r}'\n"
        "except CheckpointError as e:\n"
        "    out = f'refused {e}'\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024)\n"
        "print(out)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    peak, result = out.stdout.strip().splitlines()
    return int(peak), result


def test_a_57_mb_header_of_base64_data_parses_in_a_small_multiple_of_the_file(tmp_path: Path) -> None:
    # The largest legitimate header content: an array (base64 text).
    data = np.arange(HEADER_MB * (1 << 20) * 3 // 4 // 8, dtype=np.float64)
    header = json.dumps({"kind": "dpbandits.learners.mab:PrivateUCB",
                         "config": checkpoint._encode({"actions": data}), "extra": {"__dict__": {}},
                         "package_version": "0"}, sort_keys=True).encode()
    path = tmp_path / "big.ckpt"
    _checkpoint_with_header(path, header)
    size = path.stat().st_size
    assert size > HEADER_MB * 10**6
    peak, result = _peak_read(path)
    assert result == f"ok {data.sum()!r}"
    assert peak < 6 * size, f"peak {peak / 2**20:.0f} MiB for a file of {size / 2**20:.0f} MiB"


@pytest.mark.parametrize("element", [b"[]", *(pytest.param(e, marks=pytest.mark.slow) for e in (b"{}", b"0", b'""'))])
def test_a_57_mb_header_dense_with_values_is_refused_in_a_small_multiple_of_the_file(
    element: bytes, tmp_path: Path
) -> None:
    count = HEADER_MB * (1 << 20) // (len(element) + 1)
    header = b'{"config": {"__dict__": {}}, "extra": {"__dict__": {"x": [' + b",".join([element] * count) + b"]}}}"
    path = tmp_path / "dense.ckpt"
    _checkpoint_with_header(path, header)
    size = path.stat().st_size
    del header
    peak, result = _peak_read(path)
    assert result.startswith("refused") and "JSON values" in result, result
    assert peak < 6 * size, f"peak {peak / 2**20:.0f} MiB for a file of {size / 2**20:.0f} MiB"


def test_a_non_ascii_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "u.ckpt"
    _checkpoint_with_header(path, '{"kind": "é"}'.encode())
    with pytest.raises(CheckpointError, match="not ASCII"):
        checkpoint.read_checkpoint(path)


# --- forged header fields ------------------------------------------------------------


def test_a_forged_secure_field_is_refused(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    _rewrite_header(path, lambda h: h["config"]["__dict__"].update(secure=True))
    with pytest.raises(CheckpointError, match="secure=True"):
        LearnerBase.load(path)
    secure = dp.learners.PrivateUCB(3, 50, 1.0, secure=True)
    path = _saved(tmp_path, secure)
    assert LearnerBase.load(path).secure
    _rewrite_header(path, lambda h: h["config"]["__dict__"].update(secure=False))
    with pytest.raises(CheckpointError, match="operating system"):
        LearnerBase.load(path)


def test_a_forged_state_of_a_standalone_counter_is_a_checkpoint_error(tmp_path: Path) -> None:
    from dpbandits.mechanisms import LaplaceNoise, TreeCounter

    c = TreeCounter((), 16, LaplaceNoise(1.0), seed=1)
    c.add_many(np.ones(5))
    state = bytes(c._inner.to_bytes())
    with pytest.raises(CheckpointError, match="does not restore"):
        type(c._inner).from_bytes(state[: len(state) // 2])


# --- work bounds ---------------------------------------------------------------------


def test_n_samples_that_imply_hours_of_work_are_refused_up_front() -> None:
    def sampler(rng: np.random.Generator) -> np.ndarray:  # pragma: no cover - never called
        raise AssertionError("the Monte Carlo estimate must not start")

    with pytest.raises(ValueError, match=r"invalid argument `n_samples`: n_samples = 2147483648 implies "
                                         r"2147483648 calls of context_sampler.*hours of work.*n_samples <= \d+ works"):
        dp.learners.ContextualEliminationBandit(np.eye(2), sampler, 100, "central", 1.0, n_samples=2**31)


def test_the_work_limit_follows_its_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpbandits._sizes import check_work, work_limit

    monkeypatch.setenv("DPBANDITS_MAX_WORK_SECONDS", "10")
    assert work_limit() == (10.0, "DPBANDITS_MAX_WORK_SECONDS")
    check_work("n", 1, 9.0, "work", 1)
    with pytest.raises(ValueError, match=r"at least 11\.0 s of work; at most 10\.0 s"):
        check_work("n", 1, 11.0, "work", 1)


# --- threads -------------------------------------------------------------------------


@pytest.mark.parametrize("counter", ["binary", "smooth-binary", "blt"])
def test_a_counter_read_while_another_thread_adds_many(counter: str) -> None:
    import threading

    from dpbandits.mechanisms import GaussianNoise, LaplaceNoise, TreeCounter

    noise = LaplaceNoise(1.0) if counter != "blt" else GaussianNoise(1.0)
    c = TreeCounter((4,), 200_000, noise, seed=1, counter=counter)
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                c.release()
                _ = (c.t, c.noise_terms, c.shape)
            except BaseException as exc:  # "Already mutably borrowed" was a RuntimeError
                errors.append(exc)
                return

    readers = [threading.Thread(target=read) for _ in range(2)]
    for r in readers:
        r.start()
    try:
        for _ in range(20):
            c.add_many(np.ones((5_000, 4)))
    finally:
        stop.set()
        for r in readers:
            r.join()
    assert not errors, errors[:3]
    assert c.t == 100_000


# --- worker processes exit with their parent ----------------------------------------


def _children(pid: int) -> set[int]:
    import psutil

    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


def test_workers_of_a_killed_sweep_exit_with_it(tmp_path: Path) -> None:
    psutil = pytest.importorskip("psutil")
    pytest.importorskip("joblib")
    script = tmp_path / "sweep.py"
    script.write_text(
        "import dpbandits as dp\n"
        "from dpbandits.envs import BernoulliBandit\n"
        "from dpbandits.learners import UCB1\n"
        "if __name__ == '__main__':\n"
        "    grid = {'long': {'learners': {'ucb': UCB1(5, 200_000_000)},\n"
        "                     'env': BernoulliBandit([0.5, 0.4, 0.3, 0.2, 0.1])}}\n"
        "    dp.sweep(grid, seeds=4, n_jobs=2, progress=True)\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        workers: set[int] = set()
        while time.monotonic() < deadline and proc.poll() is None and len(workers) < 3:
            time.sleep(0.2)  # two cell workers and the progress manager start
            workers = _children(proc.pid)
        assert len(workers) >= 3, f"the sweep did not start its workers: {workers}"
        time.sleep(2.0)  # the cells run
        workers = _children(proc.pid)
        proc.kill()  # kill -9: the sweep cannot stop its workers itself
        proc.wait()
        deadline = time.monotonic() + 10.0
        alive = workers
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = {pid for pid in alive if _running(psutil, pid)}
        assert not alive, f"orphaned workers still running 10 s after kill -9 of the sweep: {sorted(alive)}"
    finally:
        if proc.poll() is None:
            proc.kill()


def _running(psutil, pid: int) -> bool:  # type: ignore[no-untyped-def]
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("name", ["PrivateUCB", "DPKLUCB", "JointDPLinUCB", "EliminationLinearBandit", "PrivateFTRL",
                                  "EXP2", "SCRiBLe", "LocalLinUCB", "PrivateContextualUCB"])
def test_a_forged_seed_field_is_refused(name: str, tmp_path: Path) -> None:
    make, step = KINDS[name]
    learner = make(40, 1)
    for t in range(5):
        step(learner, t)
    path = _saved(tmp_path, learner)
    # A research replay keeps the header's seed (a restore for use re-keys: seed None).
    assert LearnerBase.load(path, replay=True).seed == 1
    _rewrite_header(path, lambda h: h["config"]["__dict__"].update(seed=2))
    with pytest.raises(CheckpointError, match="seed=2"):
        LearnerBase.load(path)
    # A fork reseeds its generators: its checkpoint names the fork's seed.
    fork = learner.fork(seed=7)
    path = _saved(tmp_path, fork)
    assert LearnerBase.load(path, replay=True).seed == 7
