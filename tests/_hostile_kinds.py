"""Every loadable learner kind, small, with one round of select / update,
and the single-bit-edit fuzz of their checkpoints' engine bytes (run in
worker processes by tests/test_hostile_state.py)."""

from __future__ import annotations

import hashlib
import os
import pickle
import random
import struct
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

from _learner_drivers import ACTIONS, DRIVERS, _context_sampler, _ctx

import dpbandits.learners as L
from dpbandits.errors import CheckpointError, StateError
from dpbandits.learners.online import LearnerBase

K = 3
HORIZON = 40
#: Rounds played before each saved state whose engine bytes are edited (the
#: last at the horizon, where every later round is a StateError).
SNAPSHOT_ROUNDS = (3, 17, 33, HORIZON)
#: Rounds played after a load that succeeded.
ROUNDS_AFTER = 4


def _karmed(lr: Any, t: int) -> None:
    lr.select()
    lr.update(0.25 + 0.5 * ((t * 7) % 3 == 0))


def _linear(lr: Any, t: int) -> None:
    lr.select(_ctx(t))
    lr.update(0.5 * ((t * 5) % 3 == 0))


def _drive(name: str) -> Callable[[Any, int], Any]:
    return DRIVERS[name][1] if name in DRIVERS else _karmed


#: name -> (make(horizon, seed), step(learner, t)): every learner class of
#: dpbandits.learners, and the variants whose engines hold other state
#: (gap estimation, Wishart noise, each elimination privatizer, the
#: factorization counters).
KINDS: dict[str, tuple[Callable[[int, int], Any], Callable[[Any, int], Any]]] = {
    name: (make, _drive(name)) for name, (make, _) in DRIVERS.items()
}
KINDS.update({
    "PrivateThompsonSampling/gap": (lambda h, s: L.PrivateThompsonSampling(K, h, 1.0, seed=s), _karmed),
    "DPKLUCB": (lambda h, s: L.DPKLUCB(K, h, 1.0, seed=s, phase_floor=1.0), _karmed),
    "DPIMED": (lambda h, s: L.DPIMED(K, h, 1.0, seed=s), _karmed),
    "DPSE": (lambda h, s: L.DPSE(K, h, 1.0, seed=s), _karmed),
    "DPTS": (lambda h, s: L.DPTS(K, h, 1.0, seed=s), _karmed),
    "KLUCB": (lambda h, s: L.KLUCB(K, h, seed=s), _karmed),
    "AdaPUCB": (lambda h, s: L.AdaPUCB(K, h, 1.0, seed=s), _karmed),
    "AdaPKLUCB": (lambda h, s: L.AdaPKLUCB(K, h, 1.0, seed=s), _karmed),
    "AdaCUCB": (lambda h, s: L.AdaCUCB(K, h, 0.5, seed=s), _karmed),
    "AdaCKLUCB": (lambda h, s: L.AdaCKLUCB(K, h, 0.5, seed=s), _karmed),
    "LinUCB": (lambda h, s: L.LinUCB(2, h, seed=s), _linear),
    "JointDPLinUCB": (lambda h, s: L.JointDPLinUCB(2, h, 1.0, 0.1, seed=s), _linear),
    "JointDPLinUCB/wishart": (lambda h, s: L.JointDPLinUCB(2, h, 1.0, 0.1, noise="wishart", seed=s), _linear),
    "JointDPLinUCB/epoch": (
        lambda h, s: L.JointDPLinUCB(2, h, 1.0, 0.1, calibration="tight", counter="epoch", first_epoch=3, seed=s),
        _linear),
    "ReweightedLinUCB": (lambda h, s: L.ReweightedLinUCB(2, h, first_epoch=5, seed=s), _linear),
    "JointDPReweightedLinUCB": (
        lambda h, s: L.JointDPReweightedLinUCB(2, h, 1.0, 1e-6, first_epoch=5, seed=s), _linear),
    "EliminationLinearBandit/shuffle": (
        lambda h, s: L.EliminationLinearBandit(ACTIONS, h, "shuffle", 1.0, 0.1, seed=s),
        DRIVERS["EliminationLinearBandit"][1]),
    "EliminationLinearBandit/none": (
        lambda h, s: L.EliminationLinearBandit(ACTIONS, h, seed=s), DRIVERS["EliminationLinearBandit"][1]),
    "ContextualEliminationBandit/central": (
        lambda h, s: L.ContextualEliminationBandit(ACTIONS, _context_sampler, h, "central", 1.0, n_samples=50,
                                                   seed=s),
        DRIVERS["ContextualEliminationBandit"][1]),
    "PrivateFTPL/sqrt": (lambda h, s: L.PrivateFTPL(K, h, 1.0, 1e-3, counter="sqrt", seed=s),
                         DRIVERS["PrivateFTPL"][1]),
    "PrivateFTRL/smooth": (lambda h, s: L.PrivateFTRL(K, h, 1.0, counter="smooth-binary", seed=s),
                           DRIVERS["PrivateFTRL"][1]),
})


def engine_section(raw: bytes) -> tuple[int, int]:
    """(offset, length) of the engine bytes in a checkpoint file (layout in
    dpbandits.checkpoint: magic, version, header length and header, state
    length and state, [authentication], SHA-256)."""
    (hlen,) = struct.unpack_from("<I", raw, 12)
    (slen,) = struct.unpack_from("<Q", raw, 16 + hlen)
    return 16 + hlen + 8, slen


def flip(raw: bytes, offset: int, bit: int) -> bytes:
    """``raw`` with one bit flipped and the SHA-256 recomputed, as
    dpbandits.checkpoint computes it (so only the content's checks stand)."""
    body = bytearray(raw[:-32])
    body[offset] ^= 1 << bit
    return bytes(body) + hashlib.sha256(body).digest()


def fuzz_kind(name: str, edits: int, directory: str, seed: int = 0) -> dict[str, Any]:
    """Loads ``edits`` single-bit edits of the engine bytes of learner
    ``name``'s checkpoints (saved after each of SNAPSHOT_ROUNDS rounds;
    every bit when a state has fewer), and plays ROUNDS_AFTER rounds with
    each learner that loads. Returns the outcome counts: "refused"
    (CheckpointError at load), "ok", "state_error" (a StateError in the
    rounds after, e.g. an edited round count at the horizon, a documented
    refusal), and any other exception by "load:"/"run:" and its type, with
    an example edit of each, the slowest edit's seconds and the CPU
    seconds of the whole fuzz."""
    warnings.simplefilter("ignore")
    make, step = KINDS[name]
    cls = type(make(HORIZON, 1))
    # The learner built from the header is the same for every edit (only
    # the engine bytes change): built once, copied for each load.
    original = cls._from_checkpoint_config
    built: dict[str, bytes] = {}

    def cached(_: type, config: Any) -> Any:
        if "learner" not in built:
            built["learner"] = pickle.dumps(original(config))
        return pickle.loads(built["learner"])

    cls._from_checkpoint_config = classmethod(cached)  # type: ignore[method-assign,assignment]
    outcomes: Counter[str] = Counter()
    examples: dict[str, str] = {}
    slowest = 0.0
    rng = random.Random(seed)
    cpu = time.process_time()
    path = os.path.join(directory, f"{name.replace('/', '_')}.ckpt")
    edited = path + ".edited"
    try:
        for i, rounds in enumerate(SNAPSHOT_ROUNDS):
            lr = make(HORIZON, 11)
            for t in range(rounds):
                step(lr, t)
            lr.save(path)
            with open(path, "rb") as f:
                raw = f.read()
            start, length = engine_section(raw)
            share = edits // len(SNAPSHOT_ROUNDS) + (i < edits % len(SNAPSHOT_ROUNDS))
            bits = [(o, b) for o in range(length) for b in range(8)]
            if len(bits) > share:
                bits = rng.sample(bits, share)
            for offset, bit in bits:
                with open(edited, "wb") as f:
                    f.write(flip(raw, start + offset, bit))
                began = time.perf_counter()
                outcome = _load_and_play(edited, step, rounds)
                slowest = max(slowest, time.perf_counter() - began)
                kind = outcome if isinstance(outcome, str) else f"{outcome[0]}"
                outcomes[kind] += 1
                if not isinstance(outcome, str):
                    examples.setdefault(kind, f"state bit {bit} of byte {offset} after {rounds} rounds: {outcome[1]}")
    finally:
        cls._from_checkpoint_config = original  # type: ignore[method-assign]
    return {"name": name, "outcomes": dict(outcomes), "examples": examples, "slowest": slowest,
            "cpu_seconds": time.process_time() - cpu}


def _load_and_play(path: str, step: Callable[[Any, int], Any], rounds: int) -> str | tuple[str, str]:
    # BaseException: pyo3's PanicException derives from it.
    try:
        learner = LearnerBase.load(path)
    except CheckpointError:
        return "refused"
    except BaseException as exc:  # a panic (a BaseException) or another exception type: the failure looked for
        return f"load:{type(exc).__name__}", str(exc)[:200]
    try:
        for t in range(rounds, rounds + ROUNDS_AFTER):
            step(learner, t)
    except StateError:
        return "state_error"
    except BaseException as exc:
        return f"run:{type(exc).__name__}", str(exc)[:200]
    return "ok"
