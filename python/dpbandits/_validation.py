"""Argument checks shared by the public API: one message format everywhere."""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray


def real(name: str, value: float) -> float:
    """``value`` as a float, or TypeError unless it is a real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"invalid argument `{name}`: expected a real number, got {type(value).__name__}")
    return float(value)


def reward_scalar(name: str, value: Any) -> float:
    """One reward (or loss) as a float: a real number, a NumPy scalar or a
    0-d array; TypeError naming ``name`` otherwise (a string, None, a bool,
    an array of several values), ValueError unless it is finite.

    Examples
    --------
    >>> reward_scalar("reward", 0.5), reward_scalar("reward", np.float32(0.25)), reward_scalar("reward", 1)
    (0.5, 0.25, 1.0)
    >>> reward_scalar("reward", "0.5")
    Traceback (most recent call last):
    ...
    TypeError: invalid argument `reward`: expected one real number, got str '0.5'
    """
    if type(value) is float:
        v = value
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        v = float(value)
    elif isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        v = float(value)
    else:
        shape = f" of shape {value.shape}" if isinstance(value, np.ndarray) else ""
        raise TypeError(f"invalid argument `{name}`: expected one real number, got {type(value).__name__}"
                        f"{shape} {value!r}"[:200])
    if not math.isfinite(v):
        raise ValueError(f"invalid argument `{name}`: must be finite, got {value!r}")
    return v


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
    and < 2**64 (every count and size reaches Rust as a 64-bit integer,
    which a larger one would overflow)."""
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


def integral_arguments(cls: type, args: dict[str, Any]) -> dict[str, Any]:
    """A constructor's arguments with every integral float given for an
    integer parameter (annotated ``int``, ``int | None``) made an int.

    One rule for integer arguments: an integral float (``horizon=1e6``) is
    accepted and kept as the integer it denotes, so ``config`` and ``repr``
    show ``1000000``; a non-integral one (``k=2.5``) is refused by the
    parameter's check (TypeError naming it).
    """
    annotations = getattr(getattr(cls, "__init__", None), "__annotations__", {})
    out = dict(args)
    for name, value in args.items():
        note = annotations.get(name)
        text = note if isinstance(note, str) else getattr(note, "__name__", str(note))
        if (text.split(" ")[0] == "int" and isinstance(value, float) and not isinstance(value, bool)
                and math.isfinite(value) and value.is_integer()):
            out[name] = int(value)
    return out


def seed_or_none(name: str, value: int | None) -> int | None:
    """A seed in [0, 2**64), or None for operating-system entropy."""
    if value is None:
        return None
    v = positive_int(name, value, minimum=0)
    if v >= 2**64:
        raise ValueError(f"invalid argument `{name}`: must be < 2**64, got {v}")
    return v


def float_array(name: str, value: ArrayLike, ndim: int | None = None, finite: bool = True) -> NDArray[np.float64]:
    """``value`` as a finite float64 array (no copy when it already is one);
    ``finite=False`` leaves the finiteness test to a caller that makes it
    elsewhere (an engine binding that checks as it copies). Entries that
    are not real numbers (strings, bools, None) are a TypeError."""
    if np.iscomplexobj(value):
        # NumPy would cast complex input to float with only a warning,
        # dropping the imaginary part.
        raise ValueError(f"invalid argument `{name}`: complex values are not accepted")
    # Entries must be real numbers, as a scalar reward must be: NumPy would
    # turn "0.5" into 0.5, True into 1.0 and None into NaN.
    kind = value.dtype.kind if isinstance(value, np.ndarray) else np.asarray(value).dtype.kind
    if kind in "USb" or (kind == "O" and any(isinstance(v, (str, bytes, bool, np.bool_)) or v is None
                                             for v in np.asarray(value, dtype=object).flat)):
        raise TypeError(f"invalid argument `{name}`: expected real numbers, got "
                        f"{'bool' if kind == 'b' else 'str' if kind in 'US' else 'non-numeric'} entries")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid argument `{name}`: not convertible to a float array ({exc})") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"invalid argument `{name}`: expected {ndim} dimensions, got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
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


_CALIBRATION_ERRORS = (OverflowError, ZeroDivisionError, ValueError)


#: A constructor; the decorators below keep its signature for type checkers.
_Init = TypeVar("_Init", bound=Callable[..., None])


def parameter_range(name: str) -> Callable[[_Init], _Init]:
    """:func:`epsilon_range` for the privacy parameter ``name`` (``"rho"``
    for the zCDP learners)."""

    def decorate(init: _Init) -> _Init:
        return _parameter_range(init, name)

    return decorate


def epsilon_range(init: _Init) -> _Init:
    """Decorates a private learner's ``__init__``: when construction fails
    inside the calibration arithmetic (an OverflowError, a division by zero,
    a math domain error or a derived quantity out of range, as a tiny or
    huge ``epsilon`` causes), and the same arguments with ``epsilon=1`` do
    construct, the failure is reraised as a ValueError naming ``epsilon``
    and the range that works for the other arguments (found by bisection in
    log10 epsilon on the constructor itself). Other failures propagate
    unchanged, as do errors that already name ``epsilon`` and
    :class:`MemoryError`.
    """
    return _parameter_range(init, "epsilon")


def _parameter_range(init: _Init, name: str) -> _Init:
    signature = inspect.signature(init)

    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            init(self, *args, **kwargs)
        except _CALIBRATION_ERRORS as exc:
            if isinstance(exc, MemoryError) or f"`{name}`" in str(exc):
                raise
            bound = signature.bind(self, *args, **kwargs)
            epsilon = bound.arguments.get(name)
            if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
                raise
            eps = float(epsilon)
            if not (math.isfinite(eps) and eps > 0.0):
                raise

            def works(e: float) -> bool:
                bound.arguments[name] = e
                try:
                    # The class's own __new__ (a native base may need it).
                    cls: Any = type(self)
                    init(cls.__new__(cls), *bound.args[1:], **bound.kwargs)
                except _CALIBRATION_ERRORS:
                    return False
                return True

            if not works(1.0):
                raise
            bad, good = math.log10(eps), 0.0
            # At most 40 halvings, and about two seconds of probing for
            # constructors that are slow (large action sets): the bound
            # reported always works, it is only less tight when cut short.
            deadline = time.monotonic() + 2.0
            for _ in range(40):
                if time.monotonic() > deadline:
                    break
                mid = (bad + good) / 2.0
                if works(10.0**mid):
                    good = mid
                else:
                    bad = mid
            # The bound shown (4 digits) is rounded into the working side.
            edge = 10.0**good
            shown = float(f"{edge:.4g}")
            if (eps < 1.0 and shown < edge) or (eps > 1.0 and shown > edge):
                shown = float(f"{edge * (1.001 if eps < 1.0 else 0.999):.4g}")
            side = ">=" if eps < 1.0 else "<="
            raise ValueError(
                f"invalid argument `{name}`: {epsilon!r} is outside the range the calibration can represent "
                f"for these arguments ({type(exc).__name__}: {exc}); {name} {side} {shown:.4g} works"
            ) from None

    return cast(_Init, wrapper)
