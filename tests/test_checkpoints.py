"""Checkpoints: learner.save / Learner.load, TreeCounter.save / load, pickle.

A restored object continues bit-identically (same decisions, same future
node noise), no stored node noise is redrawn, writes are atomic, and a
file that is not a complete checkpoint of this version is refused with
CheckpointError (a ValueError).
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dpbandits.checkpoint import FORMAT_VERSION, MAGIC, read_checkpoint
from dpbandits.errors import CheckpointError
from dpbandits.learners import JointDPLinUCB, LinUCB
from dpbandits.learners.online import LearnerBase
from dpbandits.learners.online import research_replay as dp_research_replay
from dpbandits.mechanisms import GaussianNoise, LaplaceNoise, SymmetricGaussianNoise, TreeCounter

D, K, HORIZON = 3, 6, 3000


def decision_set(t: int) -> np.ndarray:
    x = np.random.default_rng([7, t]).normal(size=(K, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def reward(t: int, i: int) -> float:
    return float(np.random.default_rng([8, t, i]).uniform(-1.0, 1.0))


def play(learner: LearnerBase, start: int, stop: int) -> tuple[list[int], list[bytes]]:
    """Rounds start..stop-1: the decisions and the UCB vectors' bytes."""
    picks, ucbs = [], []
    for t in range(start, stop):
        ds = decision_set(t)
        ucbs.append(learner.ucb(ds).tobytes())  # type: ignore[attr-defined]
        i = learner.select(ds)  # type: ignore[attr-defined]
        learner.update(reward(t, i))  # type: ignore[attr-defined]
        picks.append(i)
    return picks, ucbs


LEARNERS = {
    "LinUCB": lambda: LinUCB(D, HORIZON, seed=1),
    "JointDPLinUCB-gaussian": lambda: JointDPLinUCB(D, HORIZON, 1.0, 0.1, seed=2),
    "JointDPLinUCB-wishart": lambda: JointDPLinUCB(D, HORIZON, 1.0, 0.1, noise="wishart", seed=3),
}


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_save_load_continues_bit_identically(name: str, tmp_path: Path) -> None:
    a = LEARNERS[name]()
    play(a, 0, 137)
    path = tmp_path / "learner.ckpt"
    a.save(path)
    b = type(a).load(path, replay=True)  # bit-identical replay (for use: re-keyed)
    assert type(b) is type(a) and b.config == a.config and b.t == a.t == 137
    assert LearnerBase.load(path).t == 137  # the base class loads any learner
    assert play(a, 137, 400) == play(b, 137, 400)
    # A pending selection is part of the checkpoint.
    ds = decision_set(400)
    i = a.select(ds)
    a.save(path)
    c = type(a).load(path, replay=True)  # bit-identical replay (for use: re-keyed)
    a.update(reward(400, i))
    c.update(reward(400, i))
    assert play(a, 401, 450) == play(c, 401, 450)
    # No temporary files are left behind; overwriting is fine.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["learner.ckpt"]


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_pickle_continues_bit_identically(name: str) -> None:
    a = LEARNERS[name]()
    play(a, 0, 50)
    with dp_research_replay():  # a pickle round trip outside it is a restore for use (re-keyed)
        b = pickle.loads(pickle.dumps(a))
    assert play(a, 50, 120) == play(b, 50, 120)


def _node_noise(c: TreeCounter, exact: np.ndarray) -> dict[tuple[int, int], float]:
    """Noise of each live node (first, last leaf) = noisy sum - exact sum of its leaves."""
    return {(first, last): float(v - exact[first - 1 : last].sum()) for _, first, last, v in c.live_nodes()}


@pytest.mark.parametrize("noise", [LaplaceNoise(1.0), GaussianNoise(2.0)])
def test_tree_counter_restore_never_redraws_node_noise(noise, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    xs = np.random.default_rng(0).uniform(-1, 1, 200)
    a = TreeCounter((), 200, noise, seed=5, padded=True)
    a.add_many(xs[:77])
    a.save(tmp_path / "c.ckpt")
    stored = _node_noise(a, xs)
    b = TreeCounter.load(tmp_path / "c.ckpt", replay=True)  # a research replay: the same future noise
    assert _node_noise(b, xs) == stored  # stored node noise restored, not redrawn
    assert b.release() == a.release() and b.noise_terms == a.noise_terms
    other = TreeCounter((), 200, noise, seed=6, padded=True)  # a fresh generator
    other.add_many(xs[:77])
    kept = 0
    for x in xs[77:]:
        a.add(x)
        b.add(x)
        other.add(x)
        assert b.release() == a.release()  # future node noise = the uninterrupted run's
        now = _node_noise(b, xs)
        assert now == _node_noise(a, xs)
        assert now != _node_noise(other, xs)  # and not a fresh draw
        # Nodes completed before the checkpoint keep their stored noise.
        for key in now.keys() & stored.keys():
            assert now[key] == stored[key]
            kept += 1
    assert kept > 50  # node (1..64) stays live until round 128


def test_matrix_counter_and_pickle_round_trip(tmp_path: Path) -> None:
    a = TreeCounter((3, 3), 50, SymmetricGaussianNoise(1.0), seed=1)
    for _ in range(9):
        a.add(np.eye(3))
    a.save(tmp_path / "m.ckpt")
    with dp_research_replay():  # bit-identical copies (research replays)
        b, c = TreeCounter.load(tmp_path / "m.ckpt", replay=True), pickle.loads(pickle.dumps(a))
    for _ in range(20):
        for x in (a, b, c):
            x.add(np.ones((3, 3)))
        assert np.array_equal(a.release(), b.release()) and np.array_equal(a.release(), c.release())


# --- refusing bad files -------------------------------------------------------


def _saved(tmp_path: Path) -> tuple[Path, bytes]:
    a = JointDPLinUCB(D, 100, 1.0, 0.1, seed=4)
    play(a, 0, 10)
    path = tmp_path / "j.ckpt"
    a.save(path)
    return path, path.read_bytes()


def test_corrupted_and_truncated_files_are_refused(tmp_path: Path) -> None:
    _, blob = _saved(tmp_path)
    bad = tmp_path / "bad.ckpt"
    for pos in (len(MAGIC) + 6, len(blob) // 2, len(blob) - 40, len(blob) - 1):
        flipped = bytearray(blob)
        flipped[pos] ^= 0x01
        bad.write_bytes(bytes(flipped))
        with pytest.raises(CheckpointError, match=r"checksum|version"):
            JointDPLinUCB.load(bad)
    for cut in (0, 5, len(MAGIC) + 10, len(blob) // 2, len(blob) - 1):
        bad.write_bytes(blob[:cut])
        with pytest.raises(CheckpointError, match=r"truncated|checksum|not a dpbandits"):
            JointDPLinUCB.load(bad)
    bad.write_bytes(b"\x80\x04not a checkpoint at all, but a pickle perhaps")
    with pytest.raises(CheckpointError, match="not a dpbandits checkpoint"):
        JointDPLinUCB.load(bad)
    assert issubclass(CheckpointError, ValueError)


def _rewrite(blob: bytes, version: int | None = None, state_edit=None) -> bytes:  # type: ignore[no-untyped-def]
    """The file with another format version or edited state, checksum recomputed."""
    import hashlib

    body = bytearray(blob[:-32])
    if version is not None:
        body[len(MAGIC) : len(MAGIC) + 4] = struct.pack("<I", version)
    if state_edit is not None:
        state_edit(body)
    return bytes(body) + hashlib.sha256(bytes(body)).digest()


def test_files_of_another_version_are_refused(tmp_path: Path) -> None:
    path, blob = _saved(tmp_path)
    bad = tmp_path / "v.ckpt"
    bad.write_bytes(_rewrite(blob, version=FORMAT_VERSION + 1))
    with pytest.raises(CheckpointError, match=f"format version {FORMAT_VERSION + 1}"):
        JointDPLinUCB.load(bad)

    # An engine state of another layout version (valid checksum) is refused too.
    ckpt = read_checkpoint(path)
    state_at = len(blob) - 32 - len(ckpt.state)

    def bump_engine_version(body: bytearray) -> None:
        body[state_at] = 0xEE

    bad.write_bytes(_rewrite(blob, state_edit=bump_engine_version))
    with pytest.raises(CheckpointError, match="does not restore"):
        JointDPLinUCB.load(bad)


def test_files_of_another_class_are_refused(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    with pytest.raises(CheckpointError, match=r"not a dpbandits\.learners\.linucb:LinUCB"):
        LinUCB.load(path)
    with pytest.raises(CheckpointError, match="TreeCounter"):
        TreeCounter.load(path)
    c = TreeCounter((), 4, LaplaceNoise(1.0), seed=0)
    c.save(tmp_path / "c.ckpt")
    with pytest.raises(CheckpointError):
        JointDPLinUCB.load(tmp_path / "c.ckpt")


# --- kill -9 ------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    from test_checkpoints import LEARNERS, decision_set, reward
    learner = LEARNERS[{name!r}]()
    with open({log!r}, "w") as log:
        for t in range({horizon}):
            i = learner.select(decision_set(t))
            learner.update(reward(t, i))
            log.write(f"{{t}} {{i}}\\n")
            log.flush()
            if (t + 1) % 25 == 0:
                learner.save({path!r})
            if t >= 100:
                time.sleep(0.002)  # give the parent time to kill us mid-run
    """
)


@pytest.mark.parametrize("name", ["JointDPLinUCB-gaussian", "JointDPLinUCB-wishart"])
def test_a_run_killed_with_sigkill_resumes_bit_identically(name: str, tmp_path: Path) -> None:
    path, log = tmp_path / "run.ckpt", tmp_path / "run.log"
    script = CHILD.format(tests=str(Path(__file__).parent), name=name, log=str(log), path=str(path), horizon=HORIZON)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if path.exists() and log.exists() and len(log.read_text().splitlines()) > 150:
                break
            assert proc.poll() is None, "the child finished or died before it could be killed"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    played = [int(line.split()[1]) for line in log.read_text().splitlines() if line.count(" ") == 1]
    assert len(played) < HORIZON, "killed mid-run"

    restored = JointDPLinUCB.load(path, replay=True)  # bit-identical replay (for use: re-keyed)
    t0 = restored.t
    assert t0 % 25 == 0 and 0 < t0 <= len(played)
    reference = LEARNERS[name]()
    ref_before, _ = play(reference, 0, t0)
    assert ref_before == played[:t0]  # the child ran the same learner
    stop = min(HORIZON, t0 + 400)
    assert play(restored, t0, stop) == play(reference, t0, stop)
    print(f"[checkpoint] {name}: killed at round {len(played)}, resumed from round {t0}, "
          f"{stop - t0} rounds bit-identical")
