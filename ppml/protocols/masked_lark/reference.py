"""The plaintext reference of Masked LARK's reporting: the helpers' algorithm on the reports'
values in the clear (slides "Requirements for Helpers" and "Example: Counting conversions").

1. A report counts only if every coordinate of its value lies in [0, B] (the range check
   beyond the slides);
2. of a browser's reports under one key, the first counts (a browser contributes once per key);
3. a key reported by fewer than k distinct browsers is suppressed (the sparse-reporting
   constraint);
4. every other key's sum is released, with the helpers' noise added.

The protocol (`protocol.py`) releases for the same reports the same keys, users and suppressions,
and sums that differ from these by exactly the helpers' noise (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class KeyAggregate:
    """One key's users (distinct browsers whose report counts), whether it is suppressed, and
    the true sum of its counted reports."""

    users: int
    suppressed: bool
    sum: list


def counted(browsers: np.ndarray, keys: list, values: np.ndarray, bound: int) -> np.ndarray:
    """Which reports count: in range, and the first of its browser under its key."""
    valid = np.all((values >= 0) & (values <= bound), axis=1)
    seen, out = set(), np.zeros(len(keys), dtype=bool)
    for i in np.flatnonzero(valid).tolist():
        pair = (int(browsers[i]), keys[i])
        if pair not in seen:
            seen.add(pair)
            out[i] = True
    return out


def aggregate(browsers: np.ndarray, keys: list, values: np.ndarray, bound: int,
              k: int) -> dict:
    """Per key (whatever ``keys`` holds: (query, advertiser) pairs) its `KeyAggregate`."""
    keep = counted(browsers, keys, values, bound)
    out: dict = {}
    for i in np.flatnonzero(keep).tolist():
        users, total = out.get(keys[i], (0, 0))
        out[keys[i]] = (users + 1, total + values[i])
    return {key: KeyAggregate(users, users < k, np.asarray(total).tolist())
            for key, (users, total) in out.items()}


def curator_release(browsers: np.ndarray, keys: list, values: np.ndarray, bound: int, k: int,
                    draw_noise) -> dict:
    """The leanest honest plaintext of the helpers' algorithm: a trusted curator that holds the
    reports in the clear, aggregates them (`aggregate`) and adds one noise draw to every kept
    key's sum (``draw_noise(shape)``: int64 draws of the release's shape); key -> released sum.
    The secure aggregation's slowdowns are timed against it."""
    kept = {key: agg.sum for key, agg in aggregate(browsers, keys, values, bound, k).items()
            if not agg.suppressed}
    noise = draw_noise((len(kept), values.shape[1]))
    return {key: np.asarray(total) + noise[i] for i, (key, total) in enumerate(kept.items())}
