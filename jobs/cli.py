"""What the small ``jobs/`` scripts share: ``key=value`` options and the table-plus-Parquet ending.

Benchmarks and reports that are not Hydra experiments take their few options the way
``python -m jobs.run`` does (``key=value``), and end the same way: print a table, write one
Parquet file into ``results_dir``, print its path.
"""

from __future__ import annotations

import datetime as dt
import sys

from ppml.experiments.config import RunConfig
from ppml.experiments.results import RunOutput, write_run
from ppml.experiments.table import FULL_ROWS_NOTE, format_table


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


def finish(experiment: str, rows: list, opts: dict, started_at: dt.datetime,
           columns: list | None = None) -> None:
    """Print ``rows`` as a table (``columns``, see `format_table`; every column when None) and
    write them as one run of ``experiment``.

    The job's options ``opts`` (its config) go on every row as ``<experiment>.<key>`` columns,
    beside the metadata every run carries (``code_version``, ``started_at``): the dotted names
    keep a job's ``workers=1,2`` or ``key_bits=1024,2048`` apart from the run config's
    ``workers`` and ``key_bits`` of one run.
    """
    print(format_table(rows, columns or list(dict.fromkeys(k for r in rows for k in r))))
    config = {"experiment": experiment, **{f"{experiment}.{k}": v for k, v in opts.items()}}
    path = write_run(opts["results_dir"], config, RunOutput(rows=rows), started_at=started_at)
    print(FULL_ROWS_NOTE)
    print(f"results: {path}")


def run_columns(config: RunConfig) -> dict:
    """The config columns of one run a benchmark measured, for its row: every key of
    ``config`` as in that experiment's own rows, but ``experiment`` and ``run_id`` (the
    benchmark's run is the one recorded)."""
    return {k: v for k, v in config.columns().items() if k not in ("experiment", "run_id")}
