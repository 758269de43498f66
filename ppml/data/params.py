"""Checks of loader parameters (arms, dims, horizon, data_seed), with the parameter and its bound
in every message, like the run config's checks (ppml/experiments/config.py)."""

from __future__ import annotations

from typing import Optional

import numpy as np


def check_int(name: str, value, low: int, high: Optional[int] = None, why: str = "") -> int:
    """``value`` as an int after checking ``low <= value <= high``; ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    reason = f" ({why})" if why else ""
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
