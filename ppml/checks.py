"""Argument checks shared by every floor; each error names the parameter and its bound.

This module is the ground floor: it imports only numpy, so ppml.crypto, ppml.mpc and everything
above them can use it.

A value of the wrong type (a str, a bool or 2.5 where an integer is wanted, a str where a number
is) raises `WrongType`, a TypeError; a value of the right type out of its bounds a ValueError.
`WrongType` is a ValueError too, so a caller that catches every bad value as a ValueError keeps
doing so.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np


class WrongType(TypeError, ValueError):
    """A parameter given a value of the wrong type; the message names the parameter and the type
    wanted."""


def _is_int(value) -> bool:
    """Whether ``value`` is an integer: a Python or numpy int, not a bool (nor 2.0)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_int(name: str, value, low: int, high: Optional[int] = None, why: str = "", *,
              what: str = "") -> int:
    """``value`` as an int after checking ``low <= value <= high``; ValueError naming ``name``
    (`WrongType` if it is not an integer).

    A bool is not an integer here, nor is a float (2.5, or 2.0); numpy integers are, and come
    back as Python ints.  By
    default the message names what failed: "``name`` must be an integer, got ..." or
    "``name`` must be >= ``low`` (``why``), got ...".  With ``what`` (e.g. "an integer",
    "a party index") every failure states the whole requirement in one message:
    "``name`` must be ``what`` >= ``low``" or "... ``what`` in [``low``, ``high``]".
    """
    reason = f" ({why})" if why else ""
    if what:
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        if not (_is_int(value) and low <= value and (high is None or value <= high)):
            error = ValueError if _is_int(value) else WrongType
            raise error(f"{name} must be {what} {bound}{reason}, got {value!r}")
        return int(value)
    if not _is_int(value):
        raise WrongType(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low:
        raise ValueError(f"{name} must be >= {low}{reason}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}{reason}, got {value}")
    return value


def check_equal(name: str, value, expected: int, why: str) -> int:
    """``value`` as an int after checking it equals ``expected``; ValueError naming ``name``."""
    value = check_int(name, value, 1)
    if value != expected:
        raise ValueError(f"{name} must be {expected} ({why}), got {value}")
    return value


def check_one_of(name: str, value, allowed) -> None:
    """ValueError naming ``name`` and listing ``allowed`` unless ``value`` is one of them."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def _is_number(value) -> bool:
    """Whether ``value`` is a real number: a Python or numpy int or float, not a bool."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _is_finite_number(value) -> bool:
    """Whether ``value`` is a real number (not a bool) that float64 holds finitely."""
    if not _is_number(value):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:            # an integer beyond float64's range
        return False


def check_positive(name: str, value) -> float:
    """``value`` as a float after checking it is a finite number > 0; ValueError naming
    ``name`` (`WrongType` if it is not a number)."""
    if not (_is_finite_number(value) and value > 0):
        error = ValueError if _is_number(value) else WrongType
        raise error(f"{name} must be a positive number, got {value!r}")
    return float(value)


def check_real(name: str, value, low: float = -math.inf, high: float = math.inf, why: str = "",
               *, low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a float after checking it is a finite number (not a bool) between ``low``
    and ``high``, each bound included unless ``low_open`` / ``high_open``; one ValueError naming
    ``name`` and the interval: "``name`` must be in (0, 1] (``why``), got ..." or, with one
    bound, "``name`` must be > 0 ..." (`WrongType` if it is not a number)."""
    if _is_finite_number(value) and (value > low if low_open else value >= low) \
            and (value < high if high_open else value <= high):
        return float(value)
    if low == -math.inf or high == math.inf:
        bound = (f"{'>' if low_open else '>='} {low:g}" if high == math.inf
                 else f"{'<' if high_open else '<='} {high:g}")
    else:
        bound = f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    reason = f" ({why})" if why else ""
    error = ValueError if _is_number(value) else WrongType
    raise error(f"{name} must be {bound}{reason} (a finite number), got {value!r}")


def check_bool(name: str, value) -> bool:
    """``value`` after checking it is a bool (not a truthy string or number); `WrongType`
    naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise WrongType(f"{name} must be true or false, got {value!r}")
    return bool(value)


def check_text(name: str, value) -> str:
    """``value`` after checking it is a non-empty str; ValueError naming ``name`` (`WrongType`
    if it is not a str)."""
    if not isinstance(value, str) or not value:
        error = ValueError if isinstance(value, str) else WrongType
        raise error(f"{name} must be a non-empty string, got {value!r}")
    return value


def check_shape(name: str, shape) -> tuple:
    """``shape`` (an integer or a sequence of integers >= 0) as a tuple of Python ints; a
    ValueError naming ``name`` otherwise."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    if not isinstance(dims, (tuple, list)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ValueError(f"{name} must be a tuple of integers >= 0, got {shape!r}")
    return tuple(int(d) for d in dims)
