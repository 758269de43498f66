"""Plain-text tables for what a run prints at its end.

A run prints a compact summary: the handful of columns that say whether it worked, how fast and
how private, within `WIDTH` characters; every column stays in the run's Parquet file
(`FULL_ROWS_NOTE`, printed under the table).  Integers print as integers, however they are
stored (a reward of 1280.0 is ``1,280``, not ``1.28e+03``), and a missing value (None) as a
blank cell.
"""

from __future__ import annotations

import math

WIDTH = 100
"""Characters a printed table may take; wider column sets are stacked in blocks that fit."""

FULL_ROWS_NOTE = "(a summary: every config value and measurement is in the Parquet file below)"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value.is_integer() or abs(value) >= 1e3:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def format_table(rows: list, columns: list) -> str:
    """Rows (dicts) as an aligned text table of ``columns``; missing and None cells are blank.

    A column is a row key, or a (key, header) pair to print it under a shorter header.  Columns
    that do not fit in `WIDTH` characters go to further blocks below, each repeating the first
    column, so nothing is cut off.
    """
    keys = [c[0] if isinstance(c, tuple) else c for c in columns]
    headers = [c[1] if isinstance(c, tuple) else c for c in columns]
    cells = [[_cell(row.get(k)) for k in keys] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    blocks, block = [], [0]
    for i in range(1, len(columns)):
        if sum(widths[j] + 2 for j in block) + widths[i] > WIDTH and len(block) > 1:
            blocks.append(block)
            block = [0]
        block.append(i)
    blocks.append(block)
    return "\n\n".join(_block(headers, cells, widths, block) for block in blocks)


def _block(headers: list, cells: list, widths: list, block: list) -> str:
    """The ``block`` columns of a table, aligned right."""
    def line(values):
        return "  ".join(values[i].rjust(widths[i]) for i in block)
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])
