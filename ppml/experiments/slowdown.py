"""Slowdowns: a secure run's seconds against the leanest honest plaintext loop of the same
algorithm, timed in the same run (docs/results-schema.md, "Slowdowns").

Every family reports two: ``slowdown_online``, the online seconds alone, and
``slowdown_total``, everything the secure run pays (dealer or offline material, pools, key
generation, set-up), which the README and the docs quote.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from ppml.checks import check_int

TIMINGS = 5
"""A plaintext loop is timed this many times and its median taken: a loop of milliseconds to a
second or two sees the shared machine's minute-scale speed swings (up to 2x), the secure run's
minutes average them out."""


def timed(loop: Callable[[], Any], timings: int = TIMINGS) -> tuple:
    """(what ``loop()`` returns, the median of its wall seconds over ``timings`` calls); the
    loop must be deterministic (each call the same decisions), its first call's result is
    returned."""
    check_int("timings", timings, 1, what="an integer")
    first, seconds = None, []
    for timing in range(timings):
        start = time.perf_counter()
        result = loop()
        seconds.append(time.perf_counter() - start)
        first = result if timing == 0 else first
    return first, float(np.median(seconds))


def slowdowns(online_s: float, total_s: float, plaintext_s: float) -> dict:
    """``slowdown_online`` = online_s / plaintext_s and ``slowdown_total`` = total_s /
    plaintext_s.  ValueError unless 0 <= online_s <= total_s and plaintext_s > 0 (all
    finite)."""
    for name, value in (("online_s", online_s), ("total_s", total_s),
                        ("plaintext_s", plaintext_s)):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
    if plaintext_s == 0:
        raise ValueError("plaintext_s must be > 0: the slowdowns divide by it")
    if total_s < online_s:
        raise ValueError(f"total_s must be >= online_s ({online_s}): the total includes the "
                         f"online seconds, got {total_s}")
    return {"slowdown_online": online_s / plaintext_s, "slowdown_total": total_s / plaintext_s}
