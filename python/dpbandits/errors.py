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

import warnings

__all__ = [
    "AllocationError",
    "CheckpointError",
    "ClippedRewardWarning",
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


class ClippedRewardWarning(UserWarning):
    """A learner received a reward (a loss, a feature vector) outside the
    bounds it declares and clipped it into them, as its ``bounds="clip"``
    (the default) says. The privacy guarantee holds (it is proved for the
    clipped input), but the learner learns from a value other than the one
    observed. Raised once per learner, at its first clipped input (a
    restored, copied or forked learner that has clipped does not warn
    again); the learner's ``clipped_rewards`` counts every clipped input and
    is saved with its state. Declare the range the data come from, or pass
    ``bounds="error"`` to refuse such input with a ValueError."""


def _warn_clipped(learner: str, what: str, declared: str, stacklevel: int) -> None:
    """Raises the :class:`ClippedRewardWarning` of ``learner``'s first
    clipped input ``what`` (e.g. ``"reward 1.7"``) outside ``declared``
    (e.g. ``"reward_range [0.0, 1.0]"``). ``stacklevel``: the Python frame
    the warning names, counted from this function's caller (1: the code
    that called the Rust method calling this, or this function's caller)."""
    warnings.warn(
        f"{learner}: {what} lies outside the declared {declared}; it was clipped (bounds='clip'). This learner "
        "warns once; its clipped_rewards counts every clipped input. Declare the range the data come from, or "
        "refuse such input with bounds='error' (on learners that take it).",
        ClippedRewardWarning,
        stacklevel=stacklevel + 1,
    )


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
