"""The Parquet results sink: one file per run, one schema for every experiment.

A run's file holds one row per step (or per benchmarked op), or a single row when the experiment
has no per-step rows. Every row carries the run's metadata (`META_COLUMNS`), every config value
under its own key, and the run-level summary values; docs/results-schema.md describes the columns.

Files are written atomically (temp file in the same folder, then ``os.replace``), so a crashed
or failed run never leaves a partial file and never touches the files of completed runs.  With
``record_views=true`` each role's recorded view goes to ``views/<run_id>/<role>.parquet``.
`read_results` reads the whole folder back as one table, tolerating runs with different columns.
"""

import datetime as dt
import logging
import os
import resource
import secrets
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

import ppml

log = logging.getLogger(__name__)

META_COLUMNS: dict[str, pa.DataType] = {
    "run_id": pa.string(),
    "experiment": pa.string(),
    "code_version": pa.string(),
    "started_at": pa.timestamp("us", tz="UTC"),
    "peak_rss_mb": pa.float64(),
}
"""Set by `write_run` on every row; experiments must not produce them."""

STEP_COLUMNS: dict[str, pa.DataType] = {
    "step": pa.int64(),
    "arm": pa.int64(),
    "reward": pa.float64(),
    "plaintext_arm": pa.int64(),
    "replayed": pa.bool_(),
}
"""Per-step rows of bandit / RL runs (plaintext_arm where a plaintext reference runs beside;
replayed where the run checkpoints: the step ran twice, after a resume)."""

BENCH_COLUMNS: dict[str, pa.DataType] = {
    "op": pa.string(),
    "size": pa.int64(),
    "rounds": pa.int64(),
    "bytes_per_party": pa.int64(),
    "online_s": pa.float64(),
    "offline_s": pa.float64(),
    "plaintext_s": pa.float64(),
    "slowdown_online": pa.float64(),
    "slowdown_total": pa.float64(),
}
"""Per-op rows of operation benchmarks."""

RUN_COLUMNS: dict[str, pa.DataType] = {
    "secure_cumulative_reward": pa.float64(),
    "plaintext_cumulative_reward": pa.float64(),
    "wall_s": pa.float64(),
    "plaintext_wall_s": pa.float64(),
    "plaintext_lean_s": pa.float64(),
}
"""Run-level values, reported in `RunOutput.summary`."""

RESERVED_COLUMNS: dict[str, pa.DataType] = {
    **META_COLUMNS,
    **STEP_COLUMNS,
    **BENCH_COLUMNS,
    **RUN_COLUMNS,
}


@dataclass
class RunOutput:
    """What an experiment returns: per-step (or per-op) rows, run-level values, optional table."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    table: Optional[str] = None
    """Text to print at the end of the run instead of the summary dict."""
    views: dict[str, pa.Table] = field(default_factory=dict)
    """Role name -> what it received (`ppml.privacy.views.VIEW_SCHEMA`), with record_views."""


def validate_rows(rows: Iterable[Mapping[str, Any]], *, where: str = "rows") -> None:
    """Refuse rows that misuse a reserved column: metadata names, or a reserved name whose value
    has the wrong type (ints for int64 columns; ints or floats for float64; str for string).
    None is accepted everywhere (a missing value).
    """
    for index, row in enumerate(rows):
        for name, value in row.items():
            if name in META_COLUMNS:
                raise ValueError(f"{where}[{index}]: column {name!r} is set by write_run")
            expected = RESERVED_COLUMNS.get(name)
            if expected is not None and value is not None and not _has_type(value, expected):
                raise TypeError(
                    f"{where}[{index}]: column {name!r} must be {expected}, "
                    f"got {type(value).__name__} {value!r}"
                )


def validate_summary(summary: Mapping[str, Any]) -> None:
    """`validate_rows` for the run-level summary values."""
    validate_rows([summary], where="summary")


def _has_type(value: Any, expected: pa.DataType) -> bool:
    if pa.types.is_boolean(expected):
        return isinstance(value, (bool, np.bool_))
    if isinstance(value, bool):  # bool is an Integral: never a valid count, index or measurement
        return False
    if pa.types.is_integer(expected):
        return isinstance(value, Integral)
    if pa.types.is_floating(expected):
        return isinstance(value, Real)
    if pa.types.is_string(expected):
        return isinstance(value, str)
    raise AssertionError(f"no type check for reserved type {expected}")


def code_version() -> str:
    """The package version, plus ``git describe --always --dirty`` when run from a checkout."""
    repo = Path(ppml.__file__).resolve().parent.parent
    if not (repo / ".git").exists():
        return ppml.__version__
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ppml.__version__
    return f"{ppml.__version__}+{described}" if described else ppml.__version__


def peak_rss_mb() -> float:
    """This process's peak resident set so far, in MiB (``ru_maxrss``, KiB on Linux): the
    driver's own, not that of Ray's worker processes or of other parties' processes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_run(
    results_dir: str | os.PathLike,
    config: Mapping[str, Any],
    output: RunOutput,
    *,
    started_at: dt.datetime,
) -> Path:
    """Write one run as ``<run_id>.parquet`` in results_dir: the config's ``run_id`` (a resumed
    run keeps the interrupted one's), else ``<experiment>-<UTC timestamp>-<8 hex>``.

    ``config`` must hold an ``experiment`` key; its values become columns under the same names.
    ``started_at`` must be timezone-aware. Returns the path written; the file stem is the run_id.
    Call it in the run's own process, after the run: ``peak_rss_mb`` is that process's peak.
    """
    if started_at.tzinfo is None:
        raise ValueError("started_at must be timezone-aware (e.g. datetime.now(timezone.utc))")
    validate_rows(output.rows)
    validate_summary(output.summary)
    _refuse_clashes(config, output)

    started_at = started_at.astimezone(dt.timezone.utc)
    run_id = config.get("run_id") or \
        f"{config['experiment']}-{started_at:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"
    run_values = {
        "experiment": config["experiment"],
        "code_version": code_version(),
        "started_at": started_at,
        "peak_rss_mb": peak_rss_mb(),
        **config,
        "run_id": run_id,
        **output.summary,
    }
    table = _to_table(run_values, output.rows)

    folder = Path(results_dir)
    for role, view in output.views.items():
        _write_atomically(view, views_dir(folder, run_id) / f"{_role_file(role)}.parquet")
    path = folder / f"{run_id}.parquet"
    _write_atomically(table, path)
    return path


def views_dir(results_dir: str | os.PathLike, run_id: str) -> Path:
    """Where a run's recorded views go: ``<results_dir>/views/<run_id>/`` (one file per role;
    `read_results` reads only the top folder, so views never mix with the runs' rows)."""
    return Path(results_dir) / "views" / run_id


def _role_file(role: str) -> str:
    """A role name as a file name (``DO group 0-4`` -> ``DO_group_0-4``)."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in role)
    if not name or name.startswith("."):
        raise ValueError(f"role name {role!r} cannot name a views file")
    return name


def copy_run(path: str | os.PathLike, data: bytes) -> Path:
    """A run's file read elsewhere (``data``: a sweep job's, written on another node of the
    cluster; hydra_plugins/ppml_ray_launcher) written as ``path`` here, atomically."""
    path = Path(path)
    with _replacing(path) as temp:
        temp.write_bytes(data)
    return path


def _write_atomically(table: pa.Table, path: Path) -> None:
    """``table`` to ``path`` through a hidden temporary file in the same folder."""
    with _replacing(path) as temp:
        pq.write_table(table, temp)


@contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A hidden temporary file in ``path``'s folder to write, moved onto ``path`` once written
    (and removed if the writing fails)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f".{path.name}.tmp"
    try:
        yield temp
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def _refuse_clashes(config: Mapping[str, Any], output: RunOutput) -> None:
    """A name means one thing: config keys, summary keys and row fields must not overlap."""
    if "experiment" not in config:
        raise ValueError("config must contain 'experiment'")
    for name in config:
        if name in RESERVED_COLUMNS and name not in ("experiment", "run_id"):
            raise ValueError(f"config key {name!r} is a reserved results column")
    sources = {"config": set(config), "summary": set(output.summary)}
    row_fields = {name for row in output.rows for name in row}
    for label, names in sources.items():
        clash = sorted(row_fields & names)
        if clash:
            raise ValueError(f"row fields {clash} clash with {label} keys")
    clash = sorted(sources["config"] & sources["summary"])
    if clash:
        raise ValueError(f"summary keys {clash} clash with config keys")


def _to_table(run_values: dict[str, Any], rows: list[dict[str, Any]]) -> pa.Table:
    """One row per row (or one row of ``run_values`` alone): the run's values first, repeated
    in every row, then the rows' columns in order of first appearance; reserved columns get
    their fixed types.  The run's values are converted once and repeated by Arrow, not per
    row (a run can have hundreds of thousands of rows and a hundred config keys)."""
    count = max(len(rows), 1)
    columns = {}
    for name, value in run_values.items():
        columns[name] = pa.repeat(pa.array([value], type=RESERVED_COLUMNS.get(name))[0], count)
    for name in dict.fromkeys(name for row in rows for name in row):
        columns[name] = pa.array([row.get(name) for row in rows], type=RESERVED_COLUMNS.get(name))
    return pa.table(columns)


def read_results(results_dir: str | os.PathLike, skip_unreadable: bool = False) -> pa.Table:
    """Read every run file in results_dir as one table.

    Schemas are unified permissively: a column missing from a run is null there, and a column
    whose type differs between runs is promoted (int64 -> double, null -> anything).
    Hidden files (in-flight temp files, Hydra's .hydra folder) are ignored.  A file that is not
    readable Parquet (corrupted, truncated, not Parquet) raises ValueError naming it, or with
    ``skip_unreadable`` is left out with a warning naming it (a report over a folder of many
    runs goes on without it).
    """
    folder = Path(results_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"results_dir {str(folder)!r} is not a folder")
    files, schemas = [], []
    for path in sorted(str(p) for p in folder.glob("*.parquet") if not p.name.startswith(".")):
        try:
            schemas.append(pq.read_schema(path))
        except (pa.ArrowException, OSError) as err:
            message = f"results file {path!r} is not readable Parquet ({err})"
            if not skip_unreadable:
                raise ValueError(message) from err
            log.warning("%s; left out", message)
            continue
        files.append(path)
    if not files:
        return pa.table({})
    schema = pa.unify_schemas(schemas, promote_options="permissive")
    return ds.dataset(files, schema=schema, format="parquet").to_table()
