"""Exceptions raised by dpbandits.

Each one derives from a built-in exception, so ``except ValueError`` still
catches bad input. They are plain Python classes: they pickle, and the Rust
extension raises them by name (``rust/src/py/errors.rs``).

Bad input never reaches a Rust panic: the core returns an error for every
argument it cannot use and the bindings map it to one of these classes or
to ValueError / TypeError. Should a panic ever happen, PyO3 turns it into
``pyo3_runtime.PanicException`` (a BaseException, so it is not swallowed by
``except Exception``); ``tests/test_hostile_input.py`` fuzzes the public API
and fails on any such exception.
"""

from __future__ import annotations

__all__ = [
    "AllocationError",
    "CheckpointError",
    "DegenerateInputError",
    "DuplicatedNoiseWarning",
    "IrreproducibleRunWarning",
    "LinearRegretWarning",
    "NotPositiveDefiniteError",
    "PrivacyBudgetError",
    "StateError",
]


class NotPositiveDefiniteError(ValueError):
    """A matrix that must be symmetric positive definite is not."""


class DegenerateInputError(ValueError):
    """Well-formed input on which the algorithm is undefined (e.g. actions
    that do not span R^d)."""


class StateError(RuntimeError):
    """An object was used out of order: past its horizon, update before
    select, and the like."""


class PrivacyBudgetError(RuntimeError):
    """A composition would exceed the declared privacy budget."""


class IrreproducibleRunWarning(UserWarning):
    """A simulation of a secure learner (``secure=True``): its privacy noise
    comes from the operating system, so a seed does not reproduce the run."""


class DuplicatedNoiseWarning(UserWarning):
    """A private learner or counter was copied with its noise generator:
    the copies would add identical future noise (see ``fork``)."""


class AllocationError(MemoryError, ValueError):
    """A size argument implies more memory than can be allocated (NumPy's
    "Unable to allocate 7.28 TiB for an array ..."); the message names the
    argument and the bytes. A ``MemoryError`` (what NumPy raises) and a
    ``ValueError`` (the argument is what is wrong), raised before any work
    is done (:mod:`dpbandits._sizes`) or by the Rust core's fallible
    allocation."""


class LinearRegretWarning(UserWarning):
    """A learner's configured schedule cannot leave its exploration phase
    within the horizon, so its regret is linear in T (the message names the
    horizon it needs)."""


class CheckpointError(ValueError):
    """A checkpoint file cannot be restored: not a dpbandits checkpoint,
    written by another format version, corrupted (checksum mismatch) or
    truncated, or holding another class than the one asked for."""
