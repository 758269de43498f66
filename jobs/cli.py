"""What the ``jobs/`` scripts share: how a config or input error ends a command, ``key=value``
options, and the table-plus-Parquet ending.

Every entry point runs under `run_command`: a config or input error (`InputError`, made by
`checking` from what the job's checks raise before anything starts) prints ONE line,
``error: ...``, on stderr and exits with status 2; ``--verbose`` on the command line, or
``HYDRA_FULL_ERROR=1``, shows its traceback instead.  Any other error (a bug, a party that
failed mid-run) keeps its traceback.  The rule, and why: docs/decisions.md, "Config and input
errors: one line, exit status 2".

Benchmarks and reports that are not Hydra experiments take their few options the way
``python -m jobs.run`` does (``key=value``, and ``progress=true|false`` in every one), show one
bar over the cases they measure (`cases`), and end the same way: print a table, write one
Parquet file into ``results_dir``, print its path.  The results sink is imported by `finish`
alone: a job that writes no results (``python -m jobs.data``) starts without the experiment
registry and its imports (seconds on a busy machine).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from ppml.runtime import progress

FLAGS = {"true": True, "false": False}

VERBOSE = "--verbose"
"""The command-line flag that shows a config or input error's traceback (as HYDRA_FULL_ERROR=1)."""

COMPOSITION_ERRORS = (HydraException, OmegaConfBaseException)
"""What Hydra raises while it composes a config: a misspelt key, a value of the wrong type, an
unknown experiment."""

INPUT_ERRORS = (ValueError, TypeError, OSError) + COMPOSITION_ERRORS
"""What the checks raise (ppml.checks: ValueError, TypeError; a missing or unreadable file:
OSError): an input error when raised by a job's checks (`checking`)."""

_verbose = False
"""Whether this command shows an input error's traceback (`run_command` sets it)."""


class InputError(ValueError):
    """A config or input error: what the user gave is refused before anything starts.  Made by
    `checking` from the error that is its cause; `run_command` reports it in one line, exit
    status 2.  A ValueError (a value the user gave is wrong), so that callers of a job's
    functions that catch bad values keep doing so."""


@contextmanager
def checking(kinds: tuple = INPUT_ERRORS) -> Iterator[None]:
    """The part of a job that reads its arguments and config and loads and checks its inputs,
    before it starts anything (Ray, a party, a timed measurement): an error of ``kinds``
    raised in it becomes an `InputError` with the same message on one line."""
    try:
        yield
    except InputError:
        raise
    except kinds as err:
        raise InputError(one_line(err)) from err


def one_line(err: BaseException) -> str:
    """``err``'s message and its cause's, on one line: Hydra spreads a composition error over
    lines (the cause, the options to choose from, its search path)."""
    texts = [str(err)] + ([str(err.__cause__)] if err.__cause__ is not None else [])
    lines = [line.strip() for text in texts for line in text.splitlines()]
    kept = [line for line in lines if line and not line.startswith(_HYDRA_NOISE)]
    if "Config search path:" in kept:
        kept = kept[:kept.index("Config search path:")]
    out, listing = "", False              # listing: in the names after a "...:" line
    for line in kept:
        if not out:
            out = line
        elif out.endswith((":", ".")):
            listing = out.endswith(":") and line.isidentifier()
            out += " " + line
        elif listing and line.isidentifier():
            out += ", " + line
        else:
            out, listing = out + "; " + line, False
    return out


_HYDRA_NOISE = ("full_key:", "object_type=", "reference_type=", "To append to your config use")
"""Lines of Hydra's messages that say nothing to a user of jobs.run (``+key=`` is refused)."""


@contextmanager
def reporting() -> Iterator[None]:
    """An `InputError` raised inside ends the command: ``error: <message>`` on stderr, exit
    status 2 (its traceback instead when the command is verbose)."""
    try:
        yield
    except InputError as err:
        if _verbose:
            raise
        print(f"error: {err}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


def run_command(entry: Callable[[], object]) -> None:
    """Run ``entry`` as this process's command (every ``jobs/`` module's ``__main__``).

    ``--verbose`` is taken off sys.argv; with it, or with HYDRA_FULL_ERROR=1 in the
    environment, a config or input error shows its traceback.  HYDRA_FULL_ERROR=1 is then set
    for the rest of the process (child processes inherit it: a federated party's log keeps its
    tracebacks), because without it Hydra prints its own errors and exits with status 1 before
    `reporting` could see them.  An int returned by ``entry`` is the exit status."""
    global _verbose
    _verbose = VERBOSE in sys.argv[1:] or os.environ.get("HYDRA_FULL_ERROR") == "1"
    sys.argv[1:] = [arg for arg in sys.argv[1:] if arg != VERBOSE]
    os.environ["HYDRA_FULL_ERROR"] = "1"
    with reporting():
        status = entry()
    if isinstance(status, int):
        raise SystemExit(status)


def options(defaults: dict, argv=None) -> dict:
    """``key=value`` arguments over ``defaults`` (plus ``progress``, true unless given); values
    take the type of their default, a flag is ``true`` or ``false``.  An unknown key or a value
    of the wrong type is an `InputError` naming it."""
    argv = sys.argv[1:] if argv is None else argv
    defaults = {**defaults, "progress": defaults.get("progress", True)}
    values = dict(defaults)
    for arg in argv:
        key, sep, text = arg.partition("=")
        if not sep or key not in defaults:
            known = " ".join(f"{k}=..." for k in defaults)
            raise InputError(f"unknown argument {arg!r}; this job takes {known}")
        default = defaults[key]
        if isinstance(default, bool):
            if text not in FLAGS:
                raise InputError(f"{key} must be true or false, got {text!r}")
            values[key] = FLAGS[text]
            continue
        try:
            values[key] = type(default)(text) if default is not None else text
        except ValueError:
            kind = {int: "an integer", float: "a number"}.get(type(default),
                                                              f"a {type(default).__name__}")
            raise InputError(f"{key} must be {kind}, got {text!r}") from None
    return values


def cases(items: Iterable, job: str, opts: dict, unit: str = "case") -> Iterator:
    """The ``items`` a benchmark measures, one step of its bar each (named ``job``); while they
    run, every bar of the code measured (a protocol's phases) shows as ``progress`` says."""
    items = list(items)
    with progress.showing(opts["progress"]):
        yield from progress.track(items, job, unit=unit)


def parse_sizes(text: str, form: str, name: str = "sizes") -> list[tuple]:
    """``"15x3x1000,50x5x200"`` as [(15, 3, 1000), (50, 5, 200)]: the sizes a benchmark sweeps,
    each of ``form`` (``"KxdxN"``: three integers >= 1 joined by x); an `InputError` naming
    ``name`` and the form otherwise."""
    parts = len(form.split("x"))
    sizes = [size.split("x") for size in text.split(",")]
    if not all(len(size) == parts and all(v.isdigit() and int(v) >= 1 for v in size)
               for size in sizes):
        each = "an integer >= 1" if parts == 1 else f"{parts} integers >= 1 joined by x"
        raise InputError(f"{name} must be {form}[,{form}...] ({each}), got {text!r}")
    return [tuple(int(v) for v in size) for size in sizes]


def parse_ints(text, name: str) -> list[int]:
    """``"1,2,4"`` (or an int) as [1, 2, 4]: a list of integers >= 1 a benchmark sweeps (its
    workers, key sizes, parties); an `InputError` naming ``name`` otherwise (`parse_sizes`)."""
    return [n for (n,) in parse_sizes(str(text), "n", name)]


def finish(experiment: str, rows: list, opts: dict, started_at: dt.datetime,
           columns: list | None = None) -> None:
    """Print ``rows`` as a table (``columns``, see `format_table`; every column when None) and
    write them as one run of ``experiment``.

    The job's options ``opts`` (its config) go on every row as ``<experiment>.<key>`` columns,
    beside the metadata every run carries (``code_version``, ``started_at``): the dotted names
    keep a job's ``workers=1,2`` or ``key_bits=1024,2048`` apart from the run config's
    ``workers`` and ``key_bits`` of one run.
    """
    from ppml.experiments.results import RunOutput, write_run
    from ppml.experiments.table import FULL_ROWS_NOTE, format_table
    print(format_table(rows, columns or list(dict.fromkeys(k for r in rows for k in r))))
    config = {"experiment": experiment, **{f"{experiment}.{k}": v for k, v in opts.items()}}
    path = write_run(opts["results_dir"], config, RunOutput(rows=rows), started_at=started_at)
    print(FULL_ROWS_NOTE)
    print(f"results: {path}")


def run_columns(config) -> dict:
    """The config columns of one run a benchmark measured (``config``, its `RunConfig`), for
    its row: every key of ``config`` as in that experiment's own rows, but ``experiment`` and
    ``run_id`` (the benchmark's run is the one recorded)."""
    return {k: v for k, v in config.columns().items() if k not in ("experiment", "run_id")}
