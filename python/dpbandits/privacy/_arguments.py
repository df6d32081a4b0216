"""Argument checks of the accounting modules that ``dpbandits._validation``
does not cover: parameters that may be zero, and delta in [0, 1).

Same message format as :mod:`dpbandits._validation`
("invalid argument `name`: ...").
"""

from __future__ import annotations

import math
import numbers

__all__ = ["delta_in_unit", "non_negative"]


def non_negative(name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless it is finite and >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"invalid argument `{name}`: expected a real number, got {type(value).__name__}"
        )
    v = float(value)
    if not (math.isfinite(v) and v >= 0.0):
        raise ValueError(f"invalid argument `{name}`: must be finite and >= 0, got {value!r}")
    return v


def delta_in_unit(name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless 0 <= value < 1."""
    v = non_negative(name, value)
    if not v < 1.0:
        raise ValueError(f"invalid argument `{name}`: must lie in [0, 1), got {value!r}")
    return v
