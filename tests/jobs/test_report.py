"""jobs/report.py: its options, an empty folder, and the README's command."""

import datetime as dt
from pathlib import Path

import pytest

from jobs.cli import options
from jobs.report import DEFAULTS, main
from ppml.experiments.bench_ops import bench_ops
from ppml.experiments.config import BenchOptions, RunConfig
from ppml.experiments.results import write_run
from tests.jobs.readme import readme_commands, run_command


def test_options_accept_only_known_keys_and_typed_values():
    assert options(DEFAULTS, ["results_dir=r"]) == {"results_dir": "r", "figures_dir": None}
    with pytest.raises(SystemExit, match="results_dir"):
        options(DEFAULTS, ["result_dir=r"])
    with pytest.raises(SystemExit, match="rounds must be a int"):
        options({"rounds": 200}, ["rounds=many"])


def test_report_on_an_empty_folder(tmp_path, capsys):
    assert main([f"results_dir={tmp_path}"]) == []
    assert "no runs" in capsys.readouterr().out


def test_the_readme_command_draws_the_figures_of_the_results_folder(tmp_path):
    (command,) = readme_commands("python -m jobs.report")
    config = RunConfig(arms=3, dims=2, seed=1, bench=BenchOptions(repeats=1))
    write_run(tmp_path / "results", config.columns(), bench_ops(config),
              started_at=dt.datetime.now(dt.timezone.utc))
    done = run_command(command, cwd=tmp_path)
    assert done.stdout.split() == [str(Path("results/figures/bench_ops_slowdown.png"))]
