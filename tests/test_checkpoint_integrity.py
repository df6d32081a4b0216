"""Checkpoints that cannot lie about their guarantee.

- A header edited with its SHA-256 recomputed (epsilon, delta, horizon,
  calibration, noise kind, sampler, privacy model, ...) is refused with a
  CheckpointError naming the engine field that disagrees: ``load`` rebuilds
  the learner from the header with the library's formulas and compares its
  engine's noise parameters with those of the engine bytes in the file. A
  correct file loads, and its ``privacy`` is recomputed, never read.
- ``save(path, key=...)`` / ``load(path, key=...)``: HMAC-SHA256; any single
  byte change (checksum recomputed) is refused; a keyed file without a key,
  an unkeyed file with one, and a wrong key are refused.
- Temporary files: >= 100 ``kill -9`` at random moments during saves leave
  only the target (and at most the fixed temporary file, gone after the
  next save); the target always loads.
- LinUCB's ``sigma`` near 1.7e308 is refused, naming the working range.
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
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _learner_drivers import DRIVERS

from dpbandits.checkpoint import FORMAT_VERSION, MAGIC, _encode, read_checkpoint, temporary_path
from dpbandits.errors import CheckpointError
from dpbandits.learners import JointDPLinUCB, LinUCB
from dpbandits.learners.online import LearnerBase
from dpbandits.mechanisms import LaplaceNoise, TreeCounter

KEY = b"k" * 32
STEPS = {name: step for name, (_, step) in DRIVERS.items()}


# --- forging helpers ------------------------------------------------------------------------


def _split(raw: bytes) -> tuple[dict[str, Any], int, int]:
    """The decoded JSON header of ``raw`` and the header's [start, end)."""
    pos = len(MAGIC) + 4
    (hlen,) = struct.unpack_from("<I", raw, pos)
    return json.loads(raw[pos + 4 : pos + 4 + hlen]), pos + 4, pos + 4 + hlen


def forge(raw: bytes, edit: Callable[[dict[str, Any]], None]) -> bytes:
    """``raw`` (an unkeyed file) with its JSON header edited and the
    SHA-256 recomputed, as anyone who can write the file can do."""
    header, start, end = _split(raw)
    edit(header)
    new = json.dumps(header, sort_keys=True).encode("utf-8")
    body = raw[: start - 4] + struct.pack("<I", len(new)) + new + raw[end:-32]
    return body + hashlib.sha256(body).digest()


def rechecksum(body: bytes) -> bytes:
    return body + hashlib.sha256(body).digest()


def set_config(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(header: dict[str, Any]) -> None:
        header["config"]["__dict__"][key] = _encode(value)

    return edit


def _jdp(**kw: Any) -> JointDPLinUCB:
    learner = JointDPLinUCB(3, 100, 1.0, 0.1, seed=2, **kw)
    ds = np.eye(3)
    for t in range(7):
        i = learner.select(ds)
        learner.update(0.1 * t - 0.3 + 0.2 * i)
    return learner


# --- 1. the header must describe the noise in the engine ------------------------------------

JDP_FORGERIES = {
    "epsilon": ({}, ("epsilon", 0.1)),
    "epsilon-slightly": ({}, ("epsilon", 1.5)),
    "delta": ({}, ("delta", 0.01)),
    "horizon": ({}, ("horizon", 200)),
    "calibration": ({}, ("calibration", "tight")),
    "calibration-back": ({"calibration": "tight"}, ("calibration", "paper")),
    "noise-kind": ({}, ("noise", "wishart")),
    "noise-kind-back": ({"noise": "wishart"}, ("noise", "gaussian")),
    "sampler": ({}, ("sampler", "float")),
    "sampler-back": ({"sampler": "float"}, ("sampler", "lattice")),
    "wishart-shift": ({"noise": "wishart"}, ("shift", False)),
    "L": ({}, ("L", 0.5)),
    "B_tilde": ({}, ("B_tilde", 0.5)),
    "alpha": ({}, ("alpha", 0.5)),
    "counter": ({"calibration": "tight"}, ("counter", "smooth-binary")),
    "counter-back": ({"calibration": "tight", "counter": "smooth-binary"}, ("counter", "binary")),
    "counter-blt": ({"calibration": "tight", "counter": "smooth-binary"}, ("counter", "blt")),
}


@pytest.mark.parametrize("case", sorted(JDP_FORGERIES))
def test_an_edited_joint_dp_header_is_refused_naming_the_field(case: str, tmp_path: Path) -> None:
    kwargs, (key, value) = JDP_FORGERIES[case]
    a = _jdp(**kwargs)
    path = tmp_path / "j.ckpt"
    a.save(path)
    # The forged configuration is a valid learner: only the file is wrong.
    JointDPLinUCB(**{**a.config, key: value})
    path.write_bytes(forge(path.read_bytes(), set_config(key, value)))
    with pytest.raises(CheckpointError, match=r"does not match the noise in the engine state: field `[\w.\[\]]+`"):
        JointDPLinUCB.load(path)
    with pytest.raises(CheckpointError):
        LearnerBase.load(path)


def test_the_refusal_names_the_noise_field_and_both_values(tmp_path: Path) -> None:
    a = _jdp()
    path = tmp_path / "j.ckpt"
    a.save(path)
    path.write_bytes(forge(path.read_bytes(), set_config("epsilon", 0.1)))
    with pytest.raises(CheckpointError) as err:
        JointDPLinUCB.load(path)
    text = str(err.value)
    assert "epsilon=0.1" in text and "statistics.Tree.noise" in text, text
    field = a._engine.noise_parameters()["statistics"]["Tree"]["noise"]["Lattice"]["kind"]["SymmetricGaussian"]["var"]
    assert str(field) in text  # the value in the file
    path.write_bytes(forge(a_file(a, tmp_path), set_config("horizon", 200)))
    # The noise scale is named first; the horizon among the other fields that differ.
    with pytest.raises(CheckpointError, match=r"field `statistics\.Tree\.noise[^`]*` is .*also differing: horizon"):
        JointDPLinUCB.load(path)
    path.write_bytes(forge(a_file(a, tmp_path), set_config("sampler", "float")))
    with pytest.raises(CheckpointError, match=r"field `statistics.Tree.noise` is \{\"Lattice\""):
        JointDPLinUCB.load(path)


def a_file(learner: LearnerBase, tmp_path: Path) -> bytes:
    p = tmp_path / "fresh.ckpt"
    learner.save(p)
    return p.read_bytes()


def _flipped(value: Any, default: Any) -> Any:
    if value is None:
        value = default
    return {"paper": "tight", "tight": "paper", "lattice": "float", "float": "lattice",
            "central": "local", "local": "central"}.get(value, value)


def _edits(learner: LearnerBase) -> dict[str, Any]:
    """Header edits that change the claimed guarantee of ``learner``."""
    params = inspect.signature(type(learner).__init__).parameters
    args = dict(learner.config)
    # Best-arm identification caps its samples (fixed confidence) or has a budget (fixed budget).
    cap = next(c for c in ("horizon", "max_samples", "budget") if c in args)
    edits: dict[str, Any] = {cap: args[cap] * 2}
    if args.get("epsilon") is not None:
        edits["epsilon"] = args["epsilon"] / 2
    if args.get("delta") is not None:
        edits["delta"] = args["delta"] / 10
    for key in ("calibration", "sampler", "privacy"):
        if key in args and args[key] is not None:
            default = params[key].default if key in params else None
            edits[key] = _flipped(args[key], default)
    if args.get("counter") is not None:
        # Another counter changes the noise scale (or is refused outright).
        edits["counter"] = "smooth-binary" if args["counter"] == "binary" else "binary"
    return {k: v for k, v in edits.items() if v != args.get(k)}


PRIVATE = sorted(name for name in DRIVERS if DRIVERS[name][0](50, 1).privacy.is_private)


@pytest.mark.parametrize("name", PRIVATE)
def test_every_learner_refuses_a_header_claiming_another_guarantee(name: str, tmp_path: Path) -> None:
    make, step = DRIVERS[name]
    a = make(120, 3)
    for t in range(9):
        step(a, t)
    path = tmp_path / "l.ckpt"
    a.save(path)
    raw = path.read_bytes()
    edits = _edits(a)
    assert {"epsilon"} <= set(edits) and set(edits) & {"horizon", "max_samples", "budget"}, edits
    refused = []
    for key, value in edits.items():
        path.write_bytes(forge(raw, set_config(key, value)))
        with pytest.raises(CheckpointError) as err:
            type(a).load(path)
        refused.append(key)
        try:
            type(a)._from_checkpoint_config({**read_checkpoint(path).config})
        except (TypeError, ValueError):
            continue  # the forged configuration is not a learner at all
        assert "does not match the noise in the engine state: field `" in str(err.value), (key, str(err.value))
    print(f"[integrity] {name}: forged {refused} refused")


def test_contextual_elimination_refuses_an_edit_of_either_configuration(tmp_path: Path) -> None:
    a = DRIVERS["ContextualEliminationBandit"][0](120, 3)
    path = tmp_path / "c.ckpt"
    a.save(path)
    raw = path.read_bytes()

    def edit_linear(header: dict[str, Any]) -> None:
        header["config"]["__dict__"]["_linear"]["__dict__"]["epsilon"] = _encode(0.5)

    path.write_bytes(forge(raw, set_config("epsilon", 0.5)))  # the outer configuration only
    with pytest.raises(CheckpointError, match=r"linear learner has epsilon=1\.0, its own configuration epsilon=0\.5"):
        type(a).load(path)
    path.write_bytes(forge(raw, edit_linear))  # the stored linear configuration only
    with pytest.raises(CheckpointError, match=r"linear learner has epsilon=0\.5"):
        type(a).load(path)

    def both(header: dict[str, Any]) -> None:
        set_config("epsilon", 0.5)(header)
        edit_linear(header)

    path.write_bytes(forge(raw, both))  # both, consistently: the engine disagrees
    with pytest.raises(CheckpointError, match=r"field `noise\[0\]"):
        type(a).load(path)


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_a_correct_file_loads_and_its_guarantee_is_recomputed(name: str, tmp_path: Path) -> None:
    make, step = DRIVERS[name]
    a = make(120, 5)
    for t in range(11):
        step(a, t)
    path = tmp_path / "l.ckpt"
    a.save(path)

    # A header re-serialized without change loads; extra keys in the file
    # (here a claimed "privacy") are never read.
    def claim(header: dict[str, Any]) -> None:
        header["extra"]["__dict__"]["privacy"] = "(0.0001, 0)-DP"

    path.write_bytes(forge(path.read_bytes(), claim))
    b = type(a).load(path, replay=True)  # bit-identical replay (for use: re-keyed)
    assert b.privacy == a.privacy == make(120, 99).privacy
    assert [step(a, t) for t in range(11, 30)] == [step(b, t) for t in range(11, 30)]


def test_every_learner_engine_reports_its_noise_parameters() -> None:
    for name, (make, _) in DRIVERS.items():
        params = make(64, 1)._engine.noise_parameters()
        # Best-arm identification caps its samples (fixed confidence) or has a budget (fixed budget).
        cap = next(c for c in ("horizon", "max_samples", "budget") if c in params)
        assert isinstance(params, dict) and params[cap] == 64, name
        json.dumps(params)  # plain values only
    for learner in (_jdp(), _jdp(noise="wishart"), LinUCB(3, 100)):
        assert learner._engine.noise_parameters()["horizon"] == 100


# --- 2. authenticated checkpoints -----------------------------------------------------------


def test_a_keyed_checkpoint_round_trips_and_refuses_the_wrong_key_or_none(tmp_path: Path) -> None:
    a = _jdp()
    path = tmp_path / "k.ckpt"
    a.save(path, key=KEY)
    assert read_checkpoint(path, key=KEY).authenticated
    b = JointDPLinUCB.load(path, key=KEY)
    c = LearnerBase.load(path, key=KEY.decode())  # a str key is its UTF-8 bytes
    ds = np.eye(3)
    assert a.ucb(ds).tobytes() == b.ucb(ds).tobytes() == c.ucb(ds).tobytes()
    with pytest.raises(CheckpointError, match=r"authenticated with a key .*key=\.\.\."):
        JointDPLinUCB.load(path)
    with pytest.raises(CheckpointError, match="fails authentication"):
        JointDPLinUCB.load(path, key=b"another key")
    a.save(tmp_path / "plain.ckpt")
    assert not read_checkpoint(tmp_path / "plain.ckpt").authenticated
    with pytest.raises(CheckpointError, match="not authenticated"):
        JointDPLinUCB.load(tmp_path / "plain.ckpt", key=KEY)
    for bad, exc in ((b"", ValueError), ("", ValueError), (123, TypeError), (["k"], TypeError)):
        with pytest.raises(exc, match="`key`"):
            a.save(tmp_path / "x.ckpt", key=bad)  # type: ignore[arg-type]
        with pytest.raises(exc, match="`key`"):
            JointDPLinUCB.load(path, key=bad)  # type: ignore[arg-type]


def test_with_a_key_every_single_byte_change_is_refused(tmp_path: Path) -> None:
    a = DRIVERS["PrivateUCB"][0](40, 1)
    for t in range(5):
        STEPS["PrivateUCB"](a, t)
    path = tmp_path / "k.ckpt"
    a.save(path, key=KEY)
    raw = path.read_bytes()
    assert type(a).load(path, key=KEY).t == 5
    body = raw[:-32]
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(raw)
    refused = 0
    with open(bad, "r+b") as f:  # rewritten in place (same size: no truncation, which is slow on ext4)
        for i in range(len(body)):
            for mask in (0x01, 0x80):
                changed = bytearray(body)
                changed[i] ^= mask
                f.seek(0)
                f.write(rechecksum(bytes(changed)))  # the SHA-256 recomputed
                f.flush()
                with pytest.raises(CheckpointError):
                    type(a).load(bad, key=KEY)
                refused += 1
    # Truncated, extended, stripped of the tag, or relabelled version 1 (checksum recomputed).
    for variant in (body[:-1], body + b"\0", body[:-36], body[: len(MAGIC)] + struct.pack("<I", 1) + body[12:]):
        bad.write_bytes(rechecksum(variant))
        with pytest.raises(CheckpointError):
            type(a).load(bad, key=KEY)
    print(f"[integrity] keyed PrivateUCB file of {len(raw)} bytes: {refused} single-byte changes refused")


def test_tree_counter_checkpoints_take_a_key(tmp_path: Path) -> None:
    c = TreeCounter((2,), 16, LaplaceNoise(1.0), seed=3)
    c.add(np.ones(2))
    c.save(tmp_path / "c.ckpt", key=KEY)
    assert np.array_equal(TreeCounter.load(tmp_path / "c.ckpt", key=KEY).release(), c.release())
    with pytest.raises(CheckpointError, match="authenticated with a key"):
        TreeCounter.load(tmp_path / "c.ckpt")
    with pytest.raises(CheckpointError, match="fails authentication"):
        TreeCounter.load(tmp_path / "c.ckpt", key=b"x")


def test_version_1_files_still_load_without_a_key_and_never_with_one(tmp_path: Path) -> None:
    assert FORMAT_VERSION == 2
    a = _jdp()
    path = tmp_path / "v1.ckpt"
    a.save(path)
    raw = path.read_bytes()
    v1 = raw[: len(MAGIC)] + struct.pack("<I", 1) + raw[len(MAGIC) + 4 : -32]  # version 1: the same layout
    path.write_bytes(rechecksum(v1))
    assert JointDPLinUCB.load(path).ucb(np.eye(3)).tobytes() == a.ucb(np.eye(3)).tobytes()
    with pytest.raises(CheckpointError, match="not authenticated"):
        JointDPLinUCB.load(path, key=KEY)
    a.save(path, key=KEY)
    keyed = path.read_bytes()
    path.write_bytes(rechecksum(keyed[: len(MAGIC)] + struct.pack("<I", 1) + keyed[len(MAGIC) + 4 : -32]))
    with pytest.raises(CheckpointError, match="inconsistent section lengths"):
        JointDPLinUCB.load(path, key=KEY)  # version 1 has no authentication section


# --- 3. temporary files ---------------------------------------------------------------------


def test_a_stale_temporary_file_is_replaced_and_old_random_ones_removed(tmp_path: Path) -> None:
    a = _jdp()
    path = tmp_path / "l.ckpt"
    tmp = Path(temporary_path(path))
    assert tmp.name == ".l.ckpt.tmp" and tmp.parent == tmp_path
    tmp.write_bytes(b"half a checkpoint from a killed save")
    legacy = [tmp_path / ".l.ckpt.ab12_xyz.tmp", tmp_path / ".l.ckpt.00000000.tmp"]
    for p in legacy:
        p.write_bytes(b"exact statistics left by an older dpbandits")
    others = [tmp_path / ".l.ckpt.tmp.keep", tmp_path / ".other.ckpt.ab12_xyz.tmp", tmp_path / ".l.ckpt.AB12_XYZ.tmp",
              tmp_path / ".l.ckpt.abc.tmp", tmp_path / "notes.txt"]
    for p in others:
        p.write_bytes(b"not ours")
    a.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["l.ckpt", *(p.name for p in others)])
    assert JointDPLinUCB.load(path).t == a.t


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="POSIX symbolic links")
def test_a_symbolic_link_at_the_temporary_path_is_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    path = tmp_path / "l.ckpt"
    os.symlink(victim, temporary_path(path))
    a = _jdp()
    a.save(path, key=KEY)
    assert victim.read_bytes() == b"precious"
    assert not os.path.lexists(temporary_path(path))
    assert JointDPLinUCB.load(path, key=KEY).t == a.t
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_at_the_temporary_path_neither_blocks_nor_receives_the_data(tmp_path: Path) -> None:
    path = tmp_path / "l.ckpt"
    os.mkfifo(temporary_path(path))
    a = _jdp()
    a.save(path)  # would block forever opening a FIFO without a reader
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.ckpt"]
    assert JointDPLinUCB.load(path).t == a.t


def test_concurrent_saves_of_one_target_never_tear_it(tmp_path: Path) -> None:
    path = tmp_path / "shared.ckpt"
    learners = [_jdp(), _jdp(noise="wishart")]
    errors: list[BaseException] = []

    def run(learner: JointDPLinUCB) -> None:
        try:
            for _ in range(25):
                learner.save(path, key=KEY)
                JointDPLinUCB.load(path, key=KEY)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(lr,)) for lr in learners]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert [p.name for p in tmp_path.iterdir()] == ["shared.ckpt"]


KILLER = textwrap.dedent(
    """
    import json, os, random, signal, sys, time
    import numpy as np
    from dpbandits.checkpoint import temporary_path
    from dpbandits.learners import JointDPLinUCB

    path, kills, key = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
    directory, name = os.path.split(path)
    tmp_name = os.path.basename(temporary_path(path))
    learner = JointDPLinUCB(12, 4096, 1.0, 0.1, seed=1)
    ds = np.eye(12)
    for t in range(40):
        learner.select(ds)
        learner.update(0.5)
    started = time.perf_counter()
    for _ in range(10):
        learner.save(path, key=key)
    per_save = (time.perf_counter() - started) / 10
    # What a child does per loop, timed the same way (a select and an
    # update besides the save): the kill windows are scaled by it.
    probe = JointDPLinUCB.load(path, key=key)
    started = time.perf_counter()
    for _ in range(10):
        probe.select(ds)
        probe.update(0.25)
        probe.save(path + ".probe", key=key)
    per_loop = (time.perf_counter() - started) / 10
    os.remove(path + ".probe")
    rng = random.Random(2021)
    report = {"per_save": per_save, "kills": 0, "mid_save": 0, "bad_listing": [], "rounds": set()}
    for k in range(kills):
        pid = os.fork()
        if pid == 0:  # saves until killed, one round more each time
            try:
                while True:
                    learner.select(ds)
                    learner.update(0.25)
                    learner.save(path, key=key)
            finally:
                os._exit(0)
        # Mostly within a few loops (kills land inside saves); every
        # eighth child lives for about 20 loops, so that saves also go on
        # between kills whatever a forked child's first loop costs.
        time.sleep(rng.uniform(0.0, 4.0 * per_loop) if k % 8 else 20.0 * per_loop)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        report["kills"] += 1
        names = sorted(os.listdir(directory))
        report["mid_save"] += tmp_name in names
        if not set(names) <= {name, tmp_name} or name not in names:
            report["bad_listing"].append(names)
        report["rounds"].add(JointDPLinUCB.load(path, key=key).t)  # raises if torn
    learner.save(path, key=key)  # the next save
    report["after_next_save"] = sorted(os.listdir(directory))
    report["rounds"] = len(report["rounds"])
    print(json.dumps(report))
    """
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_repeated_sigkill_during_saves_leaves_only_the_target(tmp_path: Path) -> None:
    kills = 120
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    path = tmp_path / "run.ckpt"
    out = subprocess.run(
        [sys.executable, "-c", KILLER, str(path), str(kills), KEY.decode()],
        capture_output=True, text=True, timeout=600, env=env, check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["kills"] == kills
    assert report["bad_listing"] == []  # nothing but the target and its one fixed temporary file
    assert report["after_next_save"] == ["run.ckpt"]  # and the next save leaves only the target
    assert report["mid_save"] > 0, report  # some kills did land inside a save
    assert report["rounds"] > 1  # saves went on between kills
    assert JointDPLinUCB.load(path, key=KEY).t >= 40
    print(f"[integrity] {kills} x kill -9 during saves ({report['per_save'] * 1e3:.2f} ms a save): "
          f"{report['mid_save']} left the fixed temporary file, every target loaded, none left after the next save")


# --- 5. LinUCB's sigma ----------------------------------------------------------------------


@pytest.mark.parametrize("cls", [LinUCB, JointDPLinUCB])
def test_a_sigma_that_would_overflow_the_ucb_is_refused_with_the_working_range(cls: type) -> None:
    make: Callable[..., Any] = (lambda **kw: cls(3, 100, **kw)) if cls is LinUCB else (
        lambda **kw: cls(3, 100, 1.0, 0.1, **kw))
    for sigma in (1.7e308, sys.float_info.max, 1e305):
        with pytest.raises(ValueError, match=r"invalid argument `sigma`.*sigma must lie in \(0, ") as err:
            make(sigma=sigma)
    top = float(str(err.value).rsplit("(0, ", 1)[1].rstrip("]"))
    learner = make(sigma=top)  # the printed bound works ...
    ds = np.eye(3)
    for _ in range(5):
        assert np.all(np.isfinite(learner.ucb(ds)))
        learner.update(ds[learner.select(ds)], 0.5)
    with pytest.raises(ValueError, match="`sigma`"):
        make(sigma=top * 1.001)  # ... and just above it does not
    with pytest.raises(ValueError, match="`S`"):
        make(S=1e308)
    assert np.all(np.isfinite(make(sigma=1e6).ucb(ds)))
