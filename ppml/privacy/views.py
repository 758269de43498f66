"""What a role saw: the plaintexts it received, after its own decryptions, one row per value.

The attacks a curious role would try (gcd of differences, ratios, brute-forcing seeds,
correlation with the true values) run on these recorded views, in the tests of each family.
A role records only when its run asks for it (``record_views=true``); the experiment writes each
role's view to ``<results_dir>/views/<run_id>/<role>.parquet`` (`ppml.experiments.results`).
"""

from __future__ import annotations

import math

import pyarrow as pa

VIEW_SCHEMA = pa.schema([("t", pa.int64()), ("l", pa.int64()), ("position", pa.int64()),
                         ("value", pa.float64()), ("exact", pa.string())])
"""Step t, iteration l, the value's position in what the role received, the value as a float,
and its exact decimal text (integers beyond float64's 53 bits, such as 128-bit masked keys)."""


class ViewRecorder:
    """The values one role received, in order; records nothing unless ``enabled``."""

    __slots__ = ("rows",)

    def __init__(self, enabled: bool):
        self.rows: list | None = [] if enabled else None

    @classmethod
    def of(cls, rows: list) -> "ViewRecorder":
        """A recorder holding ``rows`` (another process's ``rows``, sent after its run)."""
        recorder = cls(True)
        recorder.rows = [tuple(row) for row in rows]
        return recorder

    @property
    def enabled(self) -> bool:
        return self.rows is not None

    def record(self, t: int, l: int, values, positions=None) -> None:
        """The values received at (t, l), at ``positions`` (default 0, 1, ...)."""
        if self.rows is not None:
            positions = range(len(values)) if positions is None else positions
            self.rows.extend((t, l, position, value)
                             for position, value in zip(positions, values, strict=True))

    def table(self) -> pa.Table:
        """The view as a table of `VIEW_SCHEMA`."""
        rows = self.rows or []
        return pa.table({"t": [r[0] for r in rows], "l": [r[1] for r in rows],
                         "position": [r[2] for r in rows],
                         "value": [_as_float(r[3]) for r in rows],
                         "exact": [str(r[3]) for r in rows]}, schema=VIEW_SCHEMA)


def _as_float(value) -> float:
    """``value`` as a float; an integer beyond float64's range (a Paillier plaintext of 2048
    bits) becomes +-inf, its exact text kept in the ``exact`` column."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
