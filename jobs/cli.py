"""What the small ``jobs/`` scripts share: ``key=value`` options and the table-plus-Parquet ending.

Benchmarks and reports that are not Hydra experiments take their few options the way
``python -m jobs.run`` does (``key=value``), and end the same way: print a table, write one
Parquet file into ``results_dir``, print its path.  The results sink is imported by `finish`
alone: a job that writes no results (``python -m jobs.data``) starts without the experiment
registry and its imports (seconds on a busy machine).
"""

from __future__ import annotations

import datetime as dt
import sys


def options(defaults: dict, argv=None) -> dict:
    """``key=value`` arguments over ``defaults``; values take the type of their default."""
    argv = sys.argv[1:] if argv is None else argv
    values = dict(defaults)
    for arg in argv:
        key, sep, text = arg.partition("=")
        if not sep or key not in defaults:
            known = " ".join(f"{k}=..." for k in defaults)
            raise SystemExit(f"unknown argument {arg!r}; this job takes {known}")
        default = defaults[key]
        try:
            values[key] = type(default)(text) if default is not None else text
        except ValueError:
            raise SystemExit(f"{key} must be a {type(default).__name__}, got {text!r}") from None
    return values


def parse_sizes(text: str) -> list[tuple]:
    """``"15x3x1000,50x5x200"`` as [(15, 3, 1000), (50, 5, 200)]: the sizes a benchmark sweeps."""
    return [tuple(int(v) for v in size.split("x")) for size in text.split(",")]


def finish(experiment: str, rows: list, results_dir: str, started_at: dt.datetime,
           columns: list | None = None) -> None:
    """Print ``rows`` as a table and write them as one run of ``experiment``."""
    from ppml.experiments.results import RunOutput, write_run
    from ppml.experiments.table import format_table
    print(format_table(rows, columns or list(dict.fromkeys(k for r in rows for k in r))))
    path = write_run(results_dir, {"experiment": experiment}, RunOutput(rows=rows),
                     started_at=started_at)
    print(f"results: {path}")
