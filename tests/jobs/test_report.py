"""jobs/report.py: an empty folder, a damaged file, a figure refused, and the README's command."""

import datetime as dt
from pathlib import Path

from jobs.report import main
from ppml.experiments.bench_ops import bench_ops
from ppml.experiments.config import BenchOptions, RunConfig
from ppml.experiments.results import RunOutput, write_run
from tests.jobs.readme import readme_commands, run_command
from tests.runtime.bars import final


def test_report_on_an_empty_folder(tmp_path, capsys):
    assert main([f"results_dir={tmp_path}"]) == []
    assert "no runs" in capsys.readouterr().out


def test_report_leaves_out_a_corrupted_file_naming_it(tmp_path, capsys, caplog):
    (tmp_path / "run-broken.parquet").write_bytes(b"PAR1 cut short")
    assert main([f"results_dir={tmp_path}"]) == []
    assert "run-broken.parquet' is not readable Parquet" in caplog.text
    assert "no runs" in capsys.readouterr().out


def test_report_names_the_settings_of_a_figure_it_refuses_and_draws_the_rest(tmp_path, capsys):
    """Fig. 8(a) of runs at two key sizes is refused by name; Fig. 8(b) (one K at each N is
    not swept) is not drawn for want of data, not refused."""
    rows = [{"samba.algorithm": "ucb", "arms": 100, "horizon": n, "key_bits": bits,
             "secure_s": n / 1e4, "plaintext_s": 1.0, "distributed_s": 2.0}
            for n in (50_000, 100_000) for bits in (1024, 2048)]
    write_run(tmp_path, {"experiment": "bench_samba"}, RunOutput(rows=rows),
              started_at=dt.datetime.now(dt.timezone.utc))
    assert main([f"results_dir={tmp_path}"]) == []
    printed, shown = capsys.readouterr()
    assert "not drawn: samba_fig8a_time_vs_budget: its runs differ in key_bits (1024, 2048)" \
        in printed and "no runs" not in printed
    assert "2/2" in final(shown, "figures")                   # Fig. 8(a) and 8(b) tried
    assert main([f"results_dir={tmp_path}", "progress=false"]) == []
    assert capsys.readouterr().err == ""


def test_the_readme_command_draws_the_figures_of_the_results_folder(tmp_path):
    (command,) = readme_commands("python -m jobs.report")
    config = RunConfig(arms=3, dims=2, seed=1, bench=BenchOptions(repeats=1))
    write_run(tmp_path / "results", config.columns(), bench_ops(config),
              started_at=dt.datetime.now(dt.timezone.utc))
    done = run_command(command, cwd=tmp_path)
    assert done.stdout.split() == [str(Path("results/figures/bench_ops_slowdown.png"))]
