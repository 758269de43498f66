"""The Parquet results sink: one atomic file per run, one schema, read back as one table."""

import datetime as dt
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ppml
from ppml.experiments import results
from ppml.experiments.config import RunConfig
from ppml.experiments.results import (
    RunOutput,
    read_results,
    validate_rows,
    validate_summary,
    write_run,
)

STARTED = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def config(**overrides) -> dict:
    return RunConfig(experiment="toy", **overrides).columns()


def step_output(steps: int = 3) -> RunOutput:
    rows = [
        {"step": t, "arm": t % 2, "reward": float(t), "plaintext_arm": t % 2} for t in range(steps)
    ]
    return RunOutput(rows=rows, summary={"secure_cumulative_reward": 3.0, "wall_s": 0.5})


def test_one_file_per_run_named_experiment_timestamp_hex(tmp_path):
    path = write_run(tmp_path, config(), step_output(), started_at=STARTED)
    assert path.parent == tmp_path
    assert re.fullmatch(r"toy-20250102T030405Z-[0-9a-f]{8}\.parquet", path.name)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_every_row_carries_metadata_config_and_summary(tmp_path):
    path = write_run(tmp_path, config(parties=3, seed=9), step_output(), started_at=STARTED)
    table = pq.read_table(path)
    assert table.num_rows == 3
    first = table.to_pylist()[0]
    assert first["run_id"] == path.stem
    assert first["experiment"] == "toy"
    assert first["code_version"].startswith(ppml.__version__)
    assert first["started_at"] == STARTED
    assert 0 < first["peak_rss_mb"] <= results.peak_rss_mb()    # this process's, so far
    assert (first["parties"], first["seed"], first["bench.samples"]) == (3, 9, 1_000_000)
    assert set(RunConfig().columns()) <= set(table.column_names)
    assert table.column("wall_s").to_pylist() == [0.5] * 3
    assert table.column("step").to_pylist() == [0, 1, 2]


def test_reserved_columns_have_fixed_types_whatever_python_gave(tmp_path):
    rows = [
        {"step": np.int64(0), "arm": 1, "reward": 1},
        {"step": 1, "arm": np.int32(0), "reward": np.float32(0.5)},
    ]
    path = write_run(tmp_path, config(), RunOutput(rows=rows), started_at=STARTED)
    schema = pq.read_schema(path)
    assert schema.field("step").type == pa.int64()
    assert schema.field("reward").type == pa.float64()
    assert schema.field("started_at").type == pa.timestamp("us", tz="UTC")


def test_a_run_without_rows_writes_one_summary_row(tmp_path):
    path = write_run(tmp_path, config(), RunOutput(summary={"wall_s": 1.25}), started_at=STARTED)
    rows = pq.read_table(path).to_pylist()
    assert len(rows) == 1
    assert rows[0]["wall_s"] == 1.25 and rows[0]["experiment"] == "toy"


def test_rows_with_different_fields_keep_all_columns(tmp_path):
    output = RunOutput(rows=[{"op": "mul", "size": 10}, {"op": "trunc", "size": 10, "rounds": 2}])
    table = pq.read_table(write_run(tmp_path, config(), output, started_at=STARTED))
    assert table.column("rounds").to_pylist() == [None, 2]


@pytest.mark.parametrize(
    "row, message",
    [
        ({"step": 1.5}, "'step' must be int64"),
        ({"arm": True}, "'arm' must be int64"),
        ({"reward": "high"}, "'reward' must be double"),
        ({"op": 3}, "'op' must be string"),
    ],
)
def test_validate_rows_refuses_reserved_columns_of_the_wrong_type(row, message):
    with pytest.raises(TypeError, match=message):
        validate_rows([row])


def test_validate_rows_accepts_missing_values_and_unreserved_columns():
    validate_rows([{"step": None, "reward": 1, "regret": "anything"}])


@pytest.mark.parametrize("name", sorted(results.META_COLUMNS))
def test_experiments_cannot_set_metadata_columns(name):
    with pytest.raises(ValueError, match=f"{name!r} is set by write_run"):
        validate_rows([{name: "x"}])
    with pytest.raises(ValueError, match=f"summary\\[0\\]: column {name!r}"):
        validate_summary({name: "x"})


def test_summary_types_are_checked():
    with pytest.raises(TypeError, match="'wall_s' must be double"):
        validate_summary({"wall_s": "fast"})


@pytest.mark.parametrize(
    "output, message",
    [
        (RunOutput(rows=[{"parties": 2}]), r"row fields \['parties'\] clash with config keys"),
        (RunOutput(rows=[{"wall_s": 1.0}], summary={"wall_s": 1.0}), r"clash with summary keys"),
        (RunOutput(summary={"arms": 3}), r"summary keys \['arms'\] clash with config keys"),
    ],
)
def test_a_name_means_one_thing(tmp_path, output, message):
    with pytest.raises(ValueError, match=message):
        write_run(tmp_path, config(), output, started_at=STARTED)
    assert not list(tmp_path.iterdir())


def test_started_at_must_be_timezone_aware(tmp_path):
    with pytest.raises(ValueError, match="started_at must be timezone-aware"):
        write_run(tmp_path, config(), RunOutput(), started_at=dt.datetime(2025, 1, 1))


def test_a_failed_write_leaves_no_temp_file_and_earlier_runs_intact(tmp_path, monkeypatch):
    earlier = write_run(tmp_path, config(), step_output(), started_at=STARTED)
    before = earlier.read_bytes()

    def write_half_then_fail(table, where, **kwargs):
        with open(where, "wb") as partial:
            partial.write(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(results.pq, "write_table", write_half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        write_run(tmp_path, config(), step_output(), started_at=STARTED)
    assert [p.name for p in tmp_path.iterdir()] == [earlier.name]
    assert earlier.read_bytes() == before


def test_read_results_unifies_runs_with_different_columns(tmp_path):
    write_run(tmp_path, config(), step_output(2), started_at=STARTED)
    bench = RunOutput(rows=[{"op": "mul", "size": 10, "slowdown_total": 40.0}])
    write_run(tmp_path, config(seed=5), bench, started_at=STARTED)
    summary_only = RunOutput(summary={"wall_s": 2, "note": "int wall"})
    write_run(tmp_path, config(), summary_only, started_at=STARTED)
    table = read_results(tmp_path)
    assert table.num_rows == 4
    assert {"step", "reward", "op", "slowdown_total", "note", "seed"} <= set(table.column_names)
    assert table.schema.field("seed").type == pa.int64()  # null in two runs, int64 in one
    assert sorted(table.column("seed").to_pylist(), key=str) == [5, None, None, None]


def test_read_results_ignores_hidden_and_hydra_files(tmp_path):
    write_run(tmp_path, config(), step_output(1), started_at=STARTED)
    (tmp_path / ".toy-partial.parquet.tmp").write_bytes(b"junk")
    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text("a: 1")
    assert read_results(tmp_path).num_rows == 1


def test_read_results_of_an_empty_folder_is_an_empty_table(tmp_path):
    assert read_results(tmp_path).num_rows == 0


def test_read_results_of_a_missing_folder_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        read_results(tmp_path / "absent")


def test_a_corrupted_run_file_is_named_and_refused_or_left_out(tmp_path, caplog):
    write_run(tmp_path, config(), step_output(2), started_at=STARTED)
    broken = tmp_path / "toy-broken.parquet"
    broken.write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match=f"results file '{re.escape(str(broken))}' is not "
                                         "readable Parquet"):
        read_results(tmp_path)
    assert read_results(tmp_path, skip_unreadable=True).num_rows == 2
    assert f"{broken}' is not readable Parquet" in caplog.text and "left out" in caplog.text


def test_code_version_starts_with_the_package_version():
    assert results.code_version().startswith(ppml.__version__)
