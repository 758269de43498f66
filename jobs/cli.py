"""What the small ``jobs/`` scripts share: ``key=value`` options and the table-plus-Parquet ending.

Benchmarks and reports that are not Hydra experiments take their few options the way
``python -m jobs.run`` does (``key=value``, and ``progress=true|false`` in every one), show one
bar over the cases they measure (`cases`), and end the same way: print a table, write one
Parquet file into ``results_dir``, print its path.  The results sink is imported by `finish`
alone: a job that writes no results (``python -m jobs.data``) starts without the experiment
registry and its imports (seconds on a busy machine).
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Iterable, Iterator

from ppml.runtime import progress

FLAGS = {"true": True, "false": False}


def options(defaults: dict, argv=None) -> dict:
    """``key=value`` arguments over ``defaults`` (plus ``progress``, true unless given); values
    take the type of their default, a flag is ``true`` or ``false``."""
    argv = sys.argv[1:] if argv is None else argv
    defaults = {**defaults, "progress": defaults.get("progress", True)}
    values = dict(defaults)
    for arg in argv:
        key, sep, text = arg.partition("=")
        if not sep or key not in defaults:
            known = " ".join(f"{k}=..." for k in defaults)
            raise SystemExit(f"unknown argument {arg!r}; this job takes {known}")
        default = defaults[key]
        if isinstance(default, bool):
            if text not in FLAGS:
                raise SystemExit(f"{key} must be true or false, got {text!r}")
            values[key] = FLAGS[text]
            continue
        try:
            values[key] = type(default)(text) if default is not None else text
        except ValueError:
            raise SystemExit(f"{key} must be a {type(default).__name__}, got {text!r}") from None
    return values


def cases(items: Iterable, job: str, opts: dict, unit: str = "case") -> Iterator:
    """The ``items`` a benchmark measures, one step of its bar each (named ``job``); while they
    run, every bar of the code measured (a protocol's phases) shows as ``progress`` says."""
    items = list(items)
    with progress.showing(opts["progress"]):
        yield from progress.track(items, job, unit=unit)


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
