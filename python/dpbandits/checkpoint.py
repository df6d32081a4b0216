"""Checkpoint files: atomic, versioned, checksummed.

A checkpoint holds what is needed to continue an object exactly where it
stopped: for a learner, its class, its constructor configuration, the bytes
of its Rust engine (every tree node's stored noise, the padding, the
generator state) and the Python-side round state; for a tree counter, its
state bytes. A restored object draws exactly the noise the original would
have drawn next, and never redraws a stored node (DESIGN.md: "A checkpoint
carries the node noise").

File layout (all integers little-endian)::

    b"DPBCKPT\\n"                 magic, 8 bytes
    u32  format version           FORMAT_VERSION
    u32  header length, header    UTF-8 JSON: kind, config, extra, package version
    u64  state length, state      engine / counter bytes (their own version byte first)
    32 bytes                      SHA-256 of everything above

The header is plain JSON with tagged values (no pickle: loading a
checkpoint runs no code from the file). Writing is atomic: a temporary file
in the same directory is written, flushed and fsynced, renamed over the
target with ``os.replace``, and the directory is fsynced, so a crash (even
``kill -9``) leaves either the old file or the new one, never a torn one.

Any file that is not a complete checkpoint of this format version (another
version, a flipped byte, a truncation, another class) raises
:class:`dpbandits.errors.CheckpointError`, a ``ValueError``.

The files hold exact sums and generator states: treat them like the raw data.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import struct
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpbandits._sizes import format_bytes, memory_limit
from dpbandits.errors import CheckpointError

__all__ = ["FORMAT_VERSION", "Checkpoint", "read_checkpoint", "write_checkpoint"]

MAGIC = b"DPBCKPT\n"
#: The largest JSON header read (bytes) and its deepest nesting of arrays
#: and objects. A header this package writes nests a few levels (tagged
#: values inside the configuration); a hostile file with 100,000 nested
#: arrays used to exhaust the recursion limit of the decoder.
MAX_HEADER_BYTES = 1 << 30
MAX_HEADER_DEPTH = 64
#: Bumped whenever the layout or the meaning of a field changes.
FORMAT_VERSION = 1
_DIGEST = 32


@dataclass(frozen=True)
class Checkpoint:
    """The decoded contents of a checkpoint file."""

    kind: str
    config: dict[str, Any]
    state: bytes
    extra: dict[str, Any]
    package_version: str


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


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in the JSON text ``raw``
    (strings skipped), computed without recursion or a Python-level loop
    over bytes."""
    text = _JSON_STRING.sub(b"", raw)
    codes = np.frombuffer(text, dtype=np.uint8)
    if codes.size == 0:
        return 0
    step = (np.isin(codes, (ord("["), ord("{"))).astype(np.int64)
            - np.isin(codes, (ord("]"), ord("}"))).astype(np.int64))
    return int(np.cumsum(step).max(initial=0))


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


def write_checkpoint(
    path: str | os.PathLike[str],
    kind: str,
    config: dict[str, Any],
    state: bytes,
    extra: dict[str, Any] | None = None,
) -> None:
    """Writes a checkpoint atomically (temporary file in the same directory,
    flush, fsync, ``os.replace``, fsync of the directory)."""
    from dpbandits import __version__

    header = json.dumps(
        {
            "kind": kind,
            "config": _encode(dict(config)),
            "extra": _encode(dict(extra or {})),
            "package_version": __version__,
        },
        sort_keys=True,
    ).encode("utf-8")
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
    blob = body + hashlib.sha256(body).digest()
    target = os.path.abspath(os.fspath(path))
    directory = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def read_checkpoint(path: str | os.PathLike[str], expected_kind: str | None = None) -> Checkpoint:
    """Reads and verifies a checkpoint; CheckpointError unless it is a
    complete, uncorrupted file of this format version (and of
    ``expected_kind`` when given)."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        limit, source = memory_limit()
        if size > limit:
            # Read whole, a file larger than memory would be the end of the
            # process (or a bare MemoryError): refused by its size.
            raise CheckpointError(
                f"{name!r}: a checkpoint of {format_bytes(size)} does not fit in memory "
                f"(at most {format_bytes(limit)}, {source})"
            )
        blob = f.read()
    if len(blob) < len(MAGIC) + 8 + 8 + _DIGEST or not blob.startswith(MAGIC):
        if blob.startswith(MAGIC):
            raise CheckpointError(f"{name!r}: truncated checkpoint ({len(blob)} bytes)")
        raise CheckpointError(f"{name!r} is not a dpbandits checkpoint (bad magic bytes)")
    (version,) = struct.unpack_from("<I", blob, len(MAGIC))
    if version != FORMAT_VERSION:
        raise CheckpointError(
            f"{name!r} has checkpoint format version {version}; this dpbandits reads version {FORMAT_VERSION}"
        )
    body, digest = blob[:-_DIGEST], blob[-_DIGEST:]
    if hashlib.sha256(body).digest() != digest:
        raise CheckpointError(f"{name!r} is corrupted or truncated (SHA-256 checksum mismatch)")
    pos = len(MAGIC) + 4
    try:
        (hlen,) = struct.unpack_from("<I", body, pos)
        pos += 4
        if hlen > MAX_HEADER_BYTES:
            raise CheckpointError(f"{name!r}: header of {hlen} bytes exceeds the limit of {MAX_HEADER_BYTES}")
        raw = body[pos : pos + hlen]
        depth = _json_depth(raw)
        if depth > MAX_HEADER_DEPTH:
            raise CheckpointError(
                f"{name!r}: malformed checkpoint (header nests {depth} levels, more than {MAX_HEADER_DEPTH})"
            )
        header = json.loads(raw.decode("utf-8"))
        pos += hlen
        (slen,) = struct.unpack_from("<Q", body, pos)
        pos += 8
        state = body[pos : pos + slen]
        if len(state) != slen or pos + slen != len(body):
            raise CheckpointError(f"{name!r}: inconsistent section lengths")
        kind = header["kind"]
        config = _decode(header["config"])
        extra = _decode(header["extra"])
        package_version = str(header["package_version"])
    except CheckpointError:
        raise
    except (struct.error, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError,
            RecursionError) as exc:
        raise CheckpointError(f"{name!r}: malformed checkpoint ({exc})") from None
    if expected_kind is not None and kind != expected_kind:
        raise CheckpointError(f"{name!r} holds a {kind}, not a {expected_kind}")
    return Checkpoint(kind=kind, config=config, state=bytes(state), extra=extra, package_version=package_version)
