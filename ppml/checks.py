"""Argument checks shared by every floor; each error names the parameter and its bound.

This module is the ground floor: it imports only numpy, so ppml.crypto, ppml.mpc and everything
above them can use it.
"""

from __future__ import annotations

from typing import Optional

import numpy as np


def check_int(name: str, value, low: int, high: Optional[int] = None, why: str = "", *,
              what: str = "") -> int:
    """``value`` as an int after checking ``low <= value <= high``; ValueError naming ``name``.

    A bool is not an integer here; numpy integers are, and come back as Python ints.  By
    default the message names what failed: "``name`` must be an integer, got ..." or
    "``name`` must be >= ``low`` (``why``), got ...".  With ``what`` (e.g. "an integer",
    "a party index") every failure states the whole requirement in one message:
    "``name`` must be ``what`` >= ``low``" or "... ``what`` in [``low``, ``high``]".
    """
    is_int = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    reason = f" ({why})" if why else ""
    if what:
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        if not (is_int and low <= value and (high is None or value <= high)):
            raise ValueError(f"{name} must be {what} {bound}{reason}, got {value!r}")
        return int(value)
    if not is_int:
        raise ValueError(f"{name} must be an integer, got {value!r}")
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


def check_positive(name: str, value) -> float:
    """``value`` as a float after checking it is a finite number > 0; ValueError naming
    ``name``."""
    is_number = isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, bool)
    if not (is_number and np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)
