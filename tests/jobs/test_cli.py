"""jobs/cli.py's ending of the benchmark jobs: a compact table, one run whose rows carry the
code version and the job's options (and a measured run's config)."""

import datetime as dt

from jobs.cli import finish, run_columns
from ppml.experiments.config import RunConfig
from ppml.experiments.results import read_results
from ppml.experiments.table import FULL_ROWS_NOTE


def test_finish_writes_the_jobs_options_and_code_version_on_every_row(tmp_path, capsys):
    opts = {"key_bits": "1024,2048", "workers": "1,2", "results_dir": str(tmp_path)}
    rows = [{**run_columns(RunConfig(experiment="samba", arms=k)), "secure_s": 1280.0,
             "target_s": None} for k in (3, 4)]
    finish("bench_x", rows, opts, dt.datetime.now(dt.timezone.utc),
           ["arms", "secure_s", "target_s"])
    written = read_results(tmp_path).to_pylist()
    assert all(r["code_version"] and r["experiment"] == "bench_x" for r in written)
    assert {(r["bench_x.key_bits"], r["bench_x.workers"]) for r in written} == {
        ("1024,2048", "1,2")}
    assert [r["arms"] for r in written] == [3, 4] and {r["key_bits"] for r in written} == {2048}
    assert "samba.algorithm" in written[0] and "run_id" not in run_columns(RunConfig())
    table, note, path = capsys.readouterr().out.rstrip("\n").rsplit("\n", 2)
    assert table.splitlines()[2].split() == ["3", "1,280"] and "None" not in table
    assert note == FULL_ROWS_NOTE and path.startswith("results: ")
