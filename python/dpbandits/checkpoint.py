"""Checkpoint files: atomic, versioned, checksummed, optionally authenticated.

A checkpoint holds what is needed to continue an object exactly where it
stopped: for a learner, its class, its constructor configuration, the bytes
of its Rust engine (every tree node's stored noise, the padding, the
generator state) and the Python-side round state; for a tree counter, its
state bytes. A restored object draws exactly the noise the original would
have drawn next, and never redraws a stored node: a checkpoint carries
the node noise, since redrawing it would release fresh noise on the same
data.

File layout (all integers little-endian)::

    b"DPBCKPT\\n"                 magic, 8 bytes
    u32  format version           FORMAT_VERSION (2; version-1 files are read too)
    u32  header length, header    UTF-8 JSON: kind, config, extra, package version
    u64  state length, state      engine / counter bytes
    [u32 1, 32 bytes]             only in authenticated files: HMAC-SHA256 with the
                                  caller's key of everything before the tag and the u32
    32 bytes                      SHA-256 of everything above

Integrity and authenticity. The SHA-256 checksum detects accidents (a
flipped bit, a truncated copy); it does **not** detect edits: anyone who can
write the file can change it and recompute the checksum. Two defences
stand against edits:

- Whatever the file says, a learner's reported guarantee is recomputed:
  ``load`` rebuilds the learner from the header's configuration with the
  library's own calibration formulas and compares the noise parameters
  its engine would be built with (noise law and scales, lattice exponents,
  shift, padding, horizon, bounds, confidence constants) with those the
  engine bytes in the file were built with; any difference is a
  :class:`~dpbandits.errors.CheckpointError` naming the field. So a header
  edited to claim ``epsilon=0.1`` over noise calibrated for
  ``epsilon=1`` is refused. This check cannot see an edit of the engine
  bytes themselves (its stored noise, its sums) made consistently with
  the header.
- ``save(path, key=...)`` / ``load(path, key=...)`` authenticate the whole
  file with HMAC-SHA256 (Python's :mod:`hmac`, compared in constant time).
  Use a key whenever the file is stored where others can write (a shared
  volume, object storage, a backup): without the key nobody can produce a
  file that loads. The key is bytes (or a str, encoded as UTF-8), e.g.
  ``secrets.token_bytes(32)`` kept out of the checkpoint's directory. A
  keyed file loaded without a key, an unkeyed file loaded with one, and a
  wrong key are each refused with ``CheckpointError``. A key does not stop
  the replay of an older authentic file of the same learner (resuming
  twice from one file adds the same future noise twice): keep track of
  the round you resumed from.

Writing is atomic: the file is written to a temporary file in the same
directory with a fixed name per target (``.<name>.tmp``, mode 0600, taken
under an exclusive ``flock`` where the platform has one), flushed and
fsynced, renamed over the target with ``os.replace``, and the directory is
fsynced, so a crash (even ``kill -9``) leaves either the old file or the new
one, never a torn one. A save killed part-way leaves at most that one
temporary file, which the next save of the same target overwrites and
renames (and the randomly named ``.<name>.XXXXXXXX.tmp`` files that
earlier versions left behind are removed then too).

Lineage. A learner's checkpoint header also says which state it holds and
where that state came from (:func:`lineage_fields`): a random
``checkpoint_id`` drawn at every save, the saving learner's random
``learner_id``, the ``parent`` id it was restored or copied from with its
``generation``, the ``round`` and, for a learner that spends on a privacy
ledger, the ledger's path, data set and registration. Two restores of the
same ``checkpoint_id`` are two live copies of one state: the ledger
(:class:`dpbandits.Ledger`) refuses the second restore for use unless the
caller asks to charge it, and every restore for use draws its future noise
from operating-system entropy (:meth:`dpbandits.learners.online.LearnerBase.load`).

Any file that is not a complete checkpoint of a known format version
(another version, a flipped byte, a truncation, another class, an edited
header) raises :class:`dpbandits.errors.CheckpointError`, a ``ValueError``.

Hostile files. Reading assumes the file may have been written by an
attacker (who can recompute the checksum): only a regular file is read (a
directory, a FIFO, a device such as ``/dev/zero``, also behind a symbolic
link, is refused before a byte is read), exactly its size and at most the
memory available; the header must be ASCII JSON within
:data:`MAX_HEADER_BYTES`, :data:`MAX_HEADER_DEPTH` levels and one value per
:data:`HEADER_BYTES_PER_VALUE` bytes, so parsing takes a small multiple of
the file's memory; a learner's class is looked up in the registry of
``dpbandits.learners`` classes (nothing the file names is imported); every
engine checks its whole restored state (its ``from_bytes``) and a state
whose parts disagree is a ``CheckpointError`` at load; and besides the
noise parameters (above), the header's ``secure`` must match the engine's
entropy source and its ``seed`` the keys of the engine's seeded generators.

The files hold exact sums and generator states: treat them like the raw data.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import stat
import struct
from dataclasses import dataclass, field
from typing import Any

try:  # POSIX: an exclusive lock on the temporary file serializes concurrent saves of one target
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

import numpy as np

from dpbandits._sizes import format_bytes, memory_limit
from dpbandits.errors import CheckpointError

__all__ = [
    "FORMAT_VERSION",
    "Checkpoint",
    "header_lineage",
    "lineage_fields",
    "new_checkpoint_id",
    "read_checkpoint",
    "temporary_path",
    "verify_engine",
    "write_checkpoint",
]

MAGIC = b"DPBCKPT\n"
#: The largest JSON header read (bytes) and its deepest nesting of arrays
#: and objects. A header this package writes nests a few levels (tagged
#: values inside the configuration); a hostile file with 100,000 nested
#: arrays would exhaust the recursion limit of the decoder.
MAX_HEADER_BYTES = 1 << 30
MAX_HEADER_DEPTH = 64
#: The most JSON values a header may hold: one per HEADER_BYTES_PER_VALUE
#: bytes of header, at least MIN_HEADER_VALUES. Every value becomes a
#: Python object of tens of bytes when parsed, so this bounds the parsing
#: memory by a small multiple of the header; a header this package writes
#: stores arrays as base64 text and scalars as tagged values of 20 bytes
#: or more, well below the bound.
HEADER_BYTES_PER_VALUE = 16
MIN_HEADER_VALUES = 1 << 16
#: Bumped whenever the layout or the meaning of a field changes. Version 2
#: added the optional authentication section; version-1 files (never
#: authenticated, otherwise the same layout) are still read.
FORMAT_VERSION = 2
_READABLE_VERSIONS = (1, 2)
_DIGEST = 32
#: Authentication section: u32 scheme, then the tag.
_AUTH_HMAC_SHA256 = 1
_AUTH_SECTION = 4 + _DIGEST

#: Key = bytes-like or str (UTF-8).
Key = bytes | bytearray | memoryview | str


@dataclass(frozen=True)
class Checkpoint:
    """The decoded contents of a checkpoint file."""

    kind: str
    config: dict[str, Any]
    state: bytes
    extra: dict[str, Any]
    package_version: str
    #: Whether the file carried an HMAC-SHA256 tag (verified with the key given).
    authenticated: bool = False
    #: Where the saved state comes from (:func:`lineage_fields`): empty for a
    #: file written without lineage (a counter, or an earlier version).
    lineage: dict[str, Any] = field(default_factory=dict)


def _key_bytes(key: Any) -> bytes | None:
    """The HMAC key as bytes (None: no key), or TypeError / ValueError naming ``key``."""
    if key is None:
        return None
    if isinstance(key, str):
        raw = key.encode("utf-8")
    elif isinstance(key, (bytes, bytearray, memoryview)):
        raw = bytes(key)
    else:
        raise TypeError(f"invalid argument `key`: expected bytes or str, got {type(key).__name__}")
    if not raw:
        raise ValueError("invalid argument `key`: must not be empty (use e.g. secrets.token_bytes(32))")
    return raw


def _tag(key: bytes, signed: bytes | memoryview) -> bytes:
    return hmac.new(key, signed, hashlib.sha256).digest()


def _encode(value: Any) -> Any:
    """``value`` as tagged JSON (exact floats, tuples, arrays)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return {"__float__": float(value).hex()}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("cannot checkpoint a dict with non-string keys")
        return {"__dict__": {k: _encode(v) for k, v in value.items()}}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            raise TypeError(f"cannot checkpoint an array of dtype {value.dtype}")
        arr = np.ascontiguousarray(value)
        return {
            "__ndarray__": {
                "dtype": arr.dtype.str,
                "shape": list(arr.shape),
                "data": base64.b64encode(arr.tobytes()).decode("ascii"),
            }
        }
    raise TypeError(f"cannot checkpoint a value of type {type(value).__name__}")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise CheckpointError("malformed checkpoint header (untagged object)")
    (tag, body), = value.items()
    if tag == "__float__":
        return float.fromhex(body)
    if tag == "__tuple__":
        return tuple(_decode(v) for v in body)
    if tag == "__dict__":
        return {k: _decode(v) for k, v in body.items()}
    if tag == "__ndarray__":
        raw = base64.b64decode(body["data"])
        dtype = np.dtype(body["dtype"])
        if dtype.kind not in "biufc":
            raise CheckpointError(f"malformed checkpoint header (array dtype {dtype})")
        shape = tuple(int(s) for s in body["shape"])
        if math.prod(shape) * dtype.itemsize != len(raw):
            raise CheckpointError("malformed checkpoint header (array size)")
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    raise CheckpointError(f"malformed checkpoint header (unknown tag {tag!r})")


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
#: Bytes of the string-free header text scanned per step of :func:`_json_shape`
#: (its working arrays are a few times this, whatever the header's size).
_SCAN_CHUNK = 1 << 20
_OPENERS = np.zeros(256, dtype=np.int8)
_OPENERS[[ord("["), ord("{")]] = 1
_STEPS = _OPENERS.copy()
_STEPS[[ord("]"), ord("}")]] = -1
_SEPARATORS = np.zeros(256, dtype=np.int8)
_SEPARATORS[[ord(","), ord("["), ord("{")]] = 1


def _json_shape(raw: bytes | memoryview) -> tuple[int, int]:
    """The deepest nesting of arrays and objects in the JSON text ``raw``
    and its number of values' separators (commas and opening brackets),
    strings skipped: computed a chunk at a time, in memory bounded by the
    chunk (plus the string-free copy of the text), without recursion or a
    Python-level loop over bytes."""
    text = _JSON_STRING.sub(b"", raw)
    depth = deepest = separators = 0
    for start in range(0, len(text), _SCAN_CHUNK):
        codes = np.frombuffer(text, dtype=np.uint8, count=min(_SCAN_CHUNK, len(text) - start), offset=start)
        levels = np.cumsum(_STEPS[codes], dtype=np.int64)
        if levels.size:
            deepest = max(deepest, depth + int(levels.max()))
            depth += int(levels[-1])
        separators += int(np.count_nonzero(_SEPARATORS[codes]))
    return deepest, separators


def _json_depth(raw: bytes | memoryview) -> int:
    """The deepest nesting of arrays and objects in the JSON text ``raw``."""
    return _json_shape(raw)[0]


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse directory fsync
        pass
    finally:
        os.close(fd)


def temporary_path(path: str | os.PathLike[str]) -> str:
    """The fixed temporary file a save of ``path`` writes before renaming
    it over ``path``: ``.<name>.tmp`` in the same directory."""
    target = os.path.abspath(os.fspath(path))
    directory, name = os.path.split(target)
    return os.path.join(directory, f".{name}.tmp")


_NO_LOCKS = {errno.ENOLCK, errno.EINVAL, getattr(errno, "EOPNOTSUPP", errno.EINVAL),
             getattr(errno, "ENOTSUP", errno.EINVAL)}
# O_NONBLOCK: a FIFO planted at the temporary path fails to open (ENXIO) instead of blocking.
_WRITE_FLAGS = (os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                | getattr(os, "O_NONBLOCK", 0))


def _open_temporary(tmp: str) -> int:
    """An open, exclusively locked descriptor of the fixed temporary file
    ``tmp``, owned by this user with mode 0600 (a file planted by someone
    else, or a symbolic link, is removed and replaced first)."""
    for _ in range(100):
        try:
            fd = os.open(tmp, _WRITE_FLAGS, 0o600)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO):
                raise
            os.unlink(tmp)  # a symbolic link or a FIFO where the temporary file goes: never written through
            continue
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)  # another save of the same target finishes first
                except OSError as exc:
                    # File systems without locks (some network mounts): saves of
                    # one target from several processes at once are then the
                    # caller's to serialize, as on platforms without flock.
                    if exc.errno not in _NO_LOCKS:
                        raise
            st = os.fstat(fd)
            try:
                now = os.lstat(tmp)
            except FileNotFoundError:
                now = None
            if now is None or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                # The file we locked was renamed over the target (or replaced)
                # by the save we waited for: start again on a fresh one.
                os.close(fd)
                continue
            getuid = getattr(os, "geteuid", None)
            if not stat.S_ISREG(st.st_mode) or (getuid is not None and st.st_uid != getuid()):
                # Not a regular file of ours (a directory others can write):
                # whoever made it may hold it open. Remove it and make our own.
                os.close(fd)
                os.unlink(tmp)
                continue
            if st.st_mode & 0o077 and hasattr(os, "fchmod"):
                os.fchmod(fd, 0o600)
            return fd
        except BaseException:
            try:
                os.close(fd)
            except OSError:
                pass
            raise
    raise OSError(f"cannot take the temporary file {tmp!r} for writing (it keeps being replaced)")


_LEGACY_TEMPORARY = re.compile(r"[a-z0-9_]{8}\.tmp")  # tempfile's alphabet


def _remove_legacy_temporaries(directory: str, name: str) -> None:
    """Removes the ``.<name>.XXXXXXXX.tmp`` files (tempfile.mkstemp names)
    that saves of earlier versions left behind when they were killed."""
    prefix = f".{name}."
    try:
        entries = list(os.scandir(directory))
    except OSError:  # pragma: no cover - an unreadable directory: nothing to clean
        return
    for entry in entries:
        rest = entry.name[len(prefix):] if entry.name.startswith(prefix) else ""
        if rest and _LEGACY_TEMPORARY.fullmatch(rest):
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == os.geteuid():
                    os.unlink(entry.path)
            except OSError:  # pragma: no cover - removed meanwhile, or not ours to remove
                pass


def write_checkpoint(
    path: str | os.PathLike[str],
    kind: str,
    config: dict[str, Any],
    state: bytes,
    extra: dict[str, Any] | None = None,
    *,
    key: Key | None = None,
    lineage: dict[str, Any] | None = None,
) -> None:
    """Writes a checkpoint atomically (fixed temporary file ``.<name>.tmp``
    in the same directory, flush, fsync, ``os.replace``, fsync of the
    directory); with ``key``, authenticated with HMAC-SHA256. ``lineage``
    (:func:`lineage_fields`) goes into the header as plain JSON."""
    from dpbandits import __version__

    secret = _key_bytes(key)
    fields: dict[str, Any] = {
        "kind": kind,
        "config": _encode(dict(config)),
        "extra": _encode(dict(extra or {})),
        "package_version": __version__,
    }
    if lineage is not None:
        fields["lineage"] = lineage_fields(lineage)
    header = json.dumps(fields, sort_keys=True).encode("utf-8")
    body = b"".join(
        [
            MAGIC,
            struct.pack("<I", FORMAT_VERSION),
            struct.pack("<I", len(header)),
            header,
            struct.pack("<Q", len(state)),
            bytes(state),
        ]
    )
    if secret is not None:
        scheme = struct.pack("<I", _AUTH_HMAC_SHA256)
        body += scheme + _tag(secret, body + scheme)
    blob = body + hashlib.sha256(body).digest()
    target = os.path.abspath(os.fspath(path))
    directory, name = os.path.split(target)
    tmp = temporary_path(target)
    fd = _open_temporary(tmp)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(blob)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        os.close(fd)  # releases the lock
    _fsync_directory(directory)
    if os.name == "posix":
        _remove_legacy_temporaries(directory, name)


def read_checkpoint(
    path: str | os.PathLike[str], expected_kind: str | None = None, *, key: Key | None = None
) -> Checkpoint:
    """Reads and verifies a checkpoint; CheckpointError unless it is a
    complete, uncorrupted file of a known format version (and of
    ``expected_kind`` when given). With ``key`` the file must carry an
    HMAC-SHA256 tag made with that key; without one it must carry none."""
    secret = _key_bytes(key)
    name = os.fspath(path)
    blob = _read_regular_file(name)
    magic = blob[: len(MAGIC)] == MAGIC
    if len(blob) < len(MAGIC) + 8 + 8 + _DIGEST or not magic:
        if magic:
            raise CheckpointError(f"{name!r}: truncated checkpoint ({len(blob)} bytes)")
        raise CheckpointError(f"{name!r} is not a dpbandits checkpoint (bad magic bytes)")
    (version,) = struct.unpack_from("<I", blob, len(MAGIC))
    if version not in _READABLE_VERSIONS:
        raise CheckpointError(
            f"{name!r} has checkpoint format version {version}; this dpbandits reads versions "
            f"{', '.join(map(str, _READABLE_VERSIONS))}"
        )
    body, digest = blob[:-_DIGEST], blob[-_DIGEST:]
    if not hmac.compare_digest(hashlib.sha256(body).digest(), digest):
        raise CheckpointError(f"{name!r} is corrupted or truncated (SHA-256 checksum mismatch)")
    pos = len(MAGIC) + 4
    try:
        (hlen,) = struct.unpack_from("<I", body, pos)
        pos += 4
        if hlen > MAX_HEADER_BYTES:
            raise CheckpointError(f"{name!r}: header of {hlen} bytes exceeds the limit of {MAX_HEADER_BYTES}")
        raw = body[pos : pos + hlen].tobytes()
        if len(raw) != hlen:
            raise CheckpointError(f"{name!r}: inconsistent section lengths")
        pos += hlen
        (slen,) = struct.unpack_from("<Q", body, pos)
        pos += 8
        state = body[pos : pos + slen]
        if len(state) != slen:
            raise CheckpointError(f"{name!r}: inconsistent section lengths")
        pos += slen
        auth = body[pos:]
    except struct.error as exc:
        raise CheckpointError(f"{name!r}: malformed checkpoint ({exc})") from None
    # Authentication before the header is parsed: with a key, nothing an
    # unauthenticated party wrote reaches the JSON decoder.
    if len(auth) not in (0, _AUTH_SECTION) or (version == 1 and auth):
        raise CheckpointError(f"{name!r}: inconsistent section lengths")
    authenticated = bool(auth)
    if authenticated:
        (scheme,) = struct.unpack_from("<I", auth, 0)
        if scheme != _AUTH_HMAC_SHA256:
            raise CheckpointError(f"{name!r}: unknown authentication scheme {scheme}")
        if secret is None:
            raise CheckpointError(
                f"{name!r} is authenticated with a key (HMAC-SHA256): pass the key it was saved with, "
                "load(path, key=...)"
            )
        expected = _tag(secret, body[: pos + 4])
        if not hmac.compare_digest(expected, auth[4:]):
            raise CheckpointError(
                f"{name!r} fails authentication (HMAC-SHA256 mismatch): the file was modified after it was "
                "saved, or the key is not the one it was saved with"
            )
    elif secret is not None:
        raise CheckpointError(
            f"{name!r} is not authenticated (saved without a key, so anyone could have written it); "
            "refused because a key was given. Load it without key= only if you trust where it was stored."
        )
    try:
        if not raw.isascii():
            # This package writes ASCII JSON (non-ASCII escaped): one byte a character.
            raise CheckpointError(f"{name!r}: malformed checkpoint (the header is not ASCII JSON)")
        # Strings are counted first (by their quotes: no copy), since removing
        # millions of them to scan the rest would itself cost memory.
        most = max(MIN_HEADER_VALUES, hlen // HEADER_BYTES_PER_VALUE)
        separators = raw.count(b'"') // 2
        if separators <= most:
            depth, separators = _json_shape(raw)
            if depth > MAX_HEADER_DEPTH:
                raise CheckpointError(
                    f"{name!r}: malformed checkpoint (header nests {depth} levels, more than {MAX_HEADER_DEPTH})"
                )
        if separators > most:
            raise CheckpointError(
                f"{name!r}: malformed checkpoint (the header holds {separators:,} JSON values, more than the "
                f"{most:,} a header of {hlen:,} bytes written by dpbandits can hold; its arrays are stored as "
                "base64 text)"
            )
        header = json.loads(raw.decode("ascii"))
        kind = header["kind"]
        config = _decode(header["config"])
        extra = _decode(header["extra"])
        package_version = str(header["package_version"])
        if not (isinstance(kind, str) and isinstance(config, dict) and isinstance(extra, dict)):
            raise CheckpointError(f"{name!r}: malformed checkpoint header")
    except CheckpointError:
        raise
    except (struct.error, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError,
            RecursionError) as exc:
        raise CheckpointError(f"{name!r}: malformed checkpoint ({exc})") from None
    if expected_kind is not None and kind != expected_kind:
        raise CheckpointError(f"{name!r} holds a {kind}, not a {expected_kind}")
    return Checkpoint(kind=kind, config=config, state=bytes(state), extra=extra, package_version=package_version,
                      authenticated=authenticated, lineage=header_lineage(name, header))


# --- lineage: which state a checkpoint holds and where it came from ---------------------

#: Lineage fields a header may carry, with their JSON types (None allowed
#: where the tuple holds type(None)).
_LINEAGE_TYPES: dict[str, tuple[type, ...]] = {
    "checkpoint_id": (str,),
    "learner_id": (str,),
    "parent": (str, type(None)),
    "generation": (int,),
    "origin": (str,),
    "round": (int,),
    "ledger": (dict, type(None)),
}
_ORIGINS = ("new", "use", "replay", "fork", "copy", "pickle")
_ID = re.compile(r"[0-9a-f]{32}")
_LEDGER_TYPES: dict[str, type] = {"path": str, "dataset": str, "registration": str}


def new_checkpoint_id() -> str:
    """A fresh random checkpoint (or learner) id: 128 bits from the
    operating system, as 32 hexadecimal digits."""
    return secrets.token_hex(16)


def lineage_fields(lineage: dict[str, Any]) -> dict[str, Any]:
    """``lineage`` checked and reduced to the header's plain JSON fields
    (ValueError naming the field otherwise):

    - ``checkpoint_id``: this file's random id (:func:`new_checkpoint_id`);
      every save draws a new one, so two restores of the same id are two
      restores of the same state;
    - ``learner_id``: the random id of the live learner that saved it;
    - ``parent``: the id of the checkpoint (or learner) this learner was
      restored (or copied) from, None for a learner built by its
      constructor;
    - ``generation``: restores and copies between the constructor and this
      state (0: never restored);
    - ``origin``: how the saving learner came to be (``"new"``, ``"use"``,
      ``"replay"``, ``"fork"``, ``"copy"``, ``"pickle"``);
    - ``round``: the rounds recorded when it was saved;
    - ``ledger``: None, or the privacy ledger the learner spends on
      (``path``, ``dataset``, ``registration``; :class:`dpbandits.Ledger`).
    """
    out: dict[str, Any] = {}
    for name, types in _LINEAGE_TYPES.items():
        value = lineage.get(name)
        if not isinstance(value, types) or isinstance(value, bool):
            raise ValueError(f"invalid lineage field `{name}`: expected {types}, got {value!r}")
        out[name] = value
    if not _ID.fullmatch(out["checkpoint_id"]) or not _ID.fullmatch(out["learner_id"]):
        raise ValueError("invalid lineage field `checkpoint_id`/`learner_id`: 32 lowercase hexadecimal digits")
    if out["parent"] is not None and not _ID.fullmatch(out["parent"]):
        raise ValueError("invalid lineage field `parent`: 32 lowercase hexadecimal digits or None")
    if out["generation"] < 0 or out["round"] < 0:
        raise ValueError("invalid lineage field `generation`/`round`: must be >= 0")
    if out["origin"] not in _ORIGINS:
        raise ValueError(f"invalid lineage field `origin`: one of {_ORIGINS}, got {out['origin']!r}")
    if out["ledger"] is not None:
        binding = out["ledger"]
        if set(binding) != set(_LEDGER_TYPES) or not all(isinstance(binding[k], t) for k, t in _LEDGER_TYPES.items()):
            raise ValueError(f"invalid lineage field `ledger`: expected the keys {sorted(_LEDGER_TYPES)} (strings)")
        out["ledger"] = dict(binding)
    return out


def header_lineage(name: str, header: dict[str, Any]) -> dict[str, Any]:
    """The lineage of a decoded header (empty when it has none: counters and
    files of earlier versions); CheckpointError for a malformed one."""
    raw = header.get("lineage")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise CheckpointError(f"{name!r}: malformed checkpoint header (lineage)")
    try:
        return lineage_fields(raw)
    except ValueError as exc:
        raise CheckpointError(f"{name!r}: malformed checkpoint header ({exc})") from None


# O_NONBLOCK: opening a FIFO returns at once (and is then refused) instead of
# waiting for a writer; it changes nothing for a regular file.
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_BINARY", 0))


def _file_type(mode: int) -> str:
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a regular file"  # pragma: no cover - other file types


def _read_regular_file(name: str) -> memoryview:
    """The bytes of the regular file ``name``, read with a size limit: its
    size when opened, at most the memory this process can use. Anything
    else (a directory, a FIFO, a device such as ``/dev/zero``, also behind
    a symbolic link) is refused with CheckpointError before a byte is
    read, and so is a file that grows or shrinks while it is read."""
    try:
        fd = os.open(name, _READ_FLAGS)
    except IsADirectoryError:
        raise CheckpointError(f"{name!r} is a directory, not a checkpoint file") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CheckpointError(
                f"{name!r} is {_file_type(st.st_mode)}, not a regular file: checkpoints are read from regular files "
                "only"
            )
        f = os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise
    with f:
        size = st.st_size
        limit, source = memory_limit()
        if size > limit:
            # Read whole, a file larger than memory would be the end of the
            # process (or a bare MemoryError): refused by its size.
            raise CheckpointError(
                f"{name!r}: a checkpoint of {format_bytes(size)} does not fit in memory "
                f"(at most {format_bytes(limit)}, {source})"
            )
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        while got < size:
            n = f.readinto(view[got:])
            if not n:
                raise CheckpointError(f"{name!r} shrank while it was read ({got} of {size} bytes)")
            got += n
        if f.read(1):
            raise CheckpointError(f"{name!r} grew while it was read (more than its {size} bytes)")
    return view


# --- the engine bytes against the header ----------------------------------------------

_Path = tuple[str, ...]


def _differences(expected: Any, actual: Any, path: _Path = ()) -> list[tuple[_Path, Any, Any]]:
    """Every place (path of keys / indices) where two nested plain values
    differ, with both values there (a differing enum variant or field set
    is one place)."""
    if expected == actual:
        # Equal nested values (compared in C). Both sides decode the same
        # Rust types, so a field has the same JSON type on either side.
        return []
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(expected) != list(actual):
            # Another enum variant (e.g. Lattice vs Gaussian noise) or another field set.
            return [(path, expected, actual)]
        return [d for k in expected for d in _differences(expected[k], actual[k], (*path, str(k)))]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [(path, expected, actual)]
        return [d for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for d in _differences(e, a, (*path, f"[{i}]"))]
    if type(expected) is type(actual) and expected == actual:
        return []
    return [(path, expected, actual)]


#: Fields named first when several differ: those that set the guarantee.
_NOISE_FIELDS = ("noise", "horizon", "privatizer", "lattice", "shift", "pad_to", "statistics", "phases", "bounds",
                 "rewards")


def _noise_first(found: list[tuple[_Path, Any, Any]]) -> list[tuple[_Path, Any, Any]]:
    def rank(item: tuple[_Path, Any, Any]) -> int:
        text = ".".join(item[0]).lower()
        return next((i for i, word in enumerate(_NOISE_FIELDS) if word in text), len(_NOISE_FIELDS))

    return sorted(found, key=rank)  # stable: file order within a rank


def _field_name(path: _Path) -> str:
    out = ""
    for part in path:
        out += part if part.startswith("[") or not out else "." + part
    return out or "configuration"


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=False) if isinstance(value, (dict, list)) else repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


#: Configuration entries shown in the refusal message (those that set a guarantee).
_SUMMARY_KEYS = ("privacy", "epsilon", "delta", "horizon", "noise", "shift", "calibration", "sampler")


def _verify_seed(name: str, config: dict[str, Any], expected: Any, restored: Any) -> None:
    """Refuses a header whose ``seed`` is not the one the engine's
    generators were drawn from: the seeded generators of the engine built
    from the header's seed and those in the file must have the same keys
    (a generator's key is fixed from construction or reseeding; only its
    position moves). A header without a seed (operating-system entropy)
    names nothing to check."""
    if config.get("seed") is None:
        return
    if not (hasattr(expected, "_generator_keys") and hasattr(restored, "_generator_keys")):
        raise CheckpointError(
            f"{name!r}: the engine ({type(restored).__name__}) does not report its generators, so the header's "
            f"seed={config['seed']!r} cannot be verified"
        )
    if sorted(expected._generator_keys()) != sorted(restored._generator_keys()):
        raise CheckpointError(
            f"{name!r}: the header says seed={config['seed']!r}, but the engine state's generators were not drawn "
            "from that seed; the header was edited or the file was written by another version of dpbandits"
        )


def _verify_entropy_source(name: str, config: dict[str, Any], expected: Any, restored: Any) -> None:
    """Refuses a header whose ``secure`` field says another entropy source
    than the restored engine draws from: the engine built from the header
    (``expected``) and the one in the file must agree on whether privacy
    noise comes from the operating system."""
    claimed = getattr(expected, "os_entropy", None)
    actual = getattr(restored, "os_entropy", None)
    if claimed is None and actual is None and not config.get("secure", False):
        return
    if claimed is not actual:
        raise CheckpointError(
            f"{name!r}: the header says secure={config.get('secure', False)!r}, but the engine state draws its "
            f"privacy noise from {'the operating system' if actual else 'a seeded generator'}; the header was "
            "edited or the file was written by another version of dpbandits"
        )


def verify_engine(name: str, config: dict[str, Any], expected: Any, restored: Any) -> None:
    """Refuses (CheckpointError naming the field) a restored engine whose
    configuration, i.e. the noise parameters it was built with (noise law,
    scales, lattice exponents, shift, padding, horizon, bounds, confidence
    constants), differs from ``expected``'s: the engine a learner built
    from the header's configuration gets from the library's own formulas.
    Engines without ``noise_parameters`` cannot be verified and are refused."""
    if not (hasattr(expected, "noise_parameters") and hasattr(restored, "noise_parameters")):
        raise CheckpointError(
            f"{name!r}: the engine ({type(restored).__name__}) does not report the noise parameters it was built "
            "with, so the checkpoint's guarantee cannot be verified"
        )
    _verify_entropy_source(name, config, expected, restored)
    _verify_seed(name, config, expected, restored)
    if expected.noise_parameters(as_json=True) == restored.noise_parameters(as_json=True):
        return  # the common case, without decoding (an action set may hold millions of numbers)
    found = _noise_first(_differences(expected.noise_parameters(), restored.noise_parameters()))
    if not found:  # pragma: no cover - equal values never print differently
        return
    path, want, have = found[0]
    shown = ", ".join(f"{k}={config[k]!r}" for k in _SUMMARY_KEYS if k in config)
    also = sorted({_field_name(p) for p, _, _ in found[1:]} - {_field_name(path)})
    more = f" (also differing: {', '.join(also[:6])}{', ...' if len(also) > 6 else ''})" if also else ""
    raise CheckpointError(
        f"{name!r}: the header's configuration ({shown}) does not match the noise in the engine state: "
        f"field `{_field_name(path)}` is {_short(have)} in the file, but the library's calibration for the "
        f"header gives {_short(want)}{more}. The header was edited or the file was written by another version "
        "of dpbandits; refused rather than report a guarantee its noise does not meet"
    )
