"""Argument checks shared by the public API: one message format everywhere."""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray


def real(name: str, value: float) -> float:
    """``value`` as a float, or TypeError unless it is a real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"invalid argument `{name}`: expected a real number, got {type(value).__name__}")
    return float(value)


def positive(name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless it is finite and > 0."""
    v = real(name, value)
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"invalid argument `{name}`: must be finite and > 0, got {value!r}")
    return v


def in_open_unit(name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless 0 < value < 1."""
    v = positive(name, value)
    if not v < 1.0:
        raise ValueError(f"invalid argument `{name}`: must lie in (0, 1), got {value!r}")
    return v


def positive_int(name: str, value: int, minimum: int = 1) -> int:
    """``value`` as an int, or ValueError unless it is an integer >= minimum
    and < 2**64 (every count and size reaches Rust as a 64-bit integer;
    a larger one used to surface as a bare OverflowError)."""
    if isinstance(value, bool):
        # bool is an Integral; True as a count or a seed is a caller's mistake.
        raise TypeError(f"invalid argument `{name}`: expected an integer, got {value!r}")
    if not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"invalid argument `{name}`: expected an integer, got {value!r}")
    v = int(value)
    if v < minimum:
        raise ValueError(f"invalid argument `{name}`: must be >= {minimum}, got {v}")
    if v >= 2**64:
        raise ValueError(f"invalid argument `{name}`: must be < 2**64, got {v}")
    return v


def seed_or_none(name: str, value: int | None) -> int | None:
    """A seed in [0, 2**64), or None for operating-system entropy."""
    if value is None:
        return None
    v = positive_int(name, value, minimum=0)
    if v >= 2**64:
        raise ValueError(f"invalid argument `{name}`: must be < 2**64, got {v}")
    return v


def float_array(name: str, value: ArrayLike, ndim: int | None = None) -> NDArray[np.float64]:
    """``value`` as a finite float64 array (no copy when it already is one)."""
    if np.iscomplexobj(value):
        # Bug fix (hostile-input fuzzing): complex input was cast to float
        # with only a ComplexWarning, silently dropping the imaginary part.
        raise ValueError(f"invalid argument `{name}`: complex values are not accepted")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid argument `{name}`: not convertible to a float array ({exc})") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"invalid argument `{name}`: expected {ndim} dimensions, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"invalid argument `{name}`: contains NaN or infinite entries")
    return arr


def non_negative(name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless it is finite and >= 0."""
    v = real(name, value)
    if not (math.isfinite(v) and v >= 0.0):
        raise ValueError(f"invalid argument `{name}`: must be finite and >= 0, got {value!r}")
    return v


def delta_in_unit(name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless 0 <= value < 1."""
    v = non_negative(name, value)
    if not v < 1.0:
        raise ValueError(f"invalid argument `{name}`: must lie in [0, 1), got {value!r}")
    return v
