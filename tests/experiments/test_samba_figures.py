"""Samba's Fig. 8 (a)-(d) from samba runs and bench_samba rows; a figure without data is skipped."""

import datetime as dt

import pytest

from jobs.report import main as report
from ppml.experiments import samba_figures as figs
from ppml.experiments.config import RunConfig
from ppml.experiments.figures import MixedSettings
from ppml.experiments.results import RunOutput, write_run
from ppml.experiments.samba import samba
from ppml.protocols.samba.config import SambaOptions

NOW = dt.datetime.now(dt.timezone.utc)
FIG8 = ["samba_fig8a_time_vs_budget.png", "samba_fig8b_time_vs_arms.png",
        "samba_fig8c_reward.png", "samba_fig8d_time_per_participant.png"]


def bench_row(algorithm, arms, horizon):
    return {"samba.algorithm": algorithm, "arms": arms, "horizon": horizon, "dataset": "synthetic",
            "runtime": "local", "key_bits": 512, "plaintext_s": 0.01 * arms,
            "distributed_s": 0.05 * arms, "secure_s": 1e-4 * arms * horizon}


def samba_run(algorithm, arms, horizon, dataset="synthetic"):
    return {"run_id": f"samba-{algorithm}-{arms}-{horizon}-{dataset}", "experiment": "samba",
            "step": horizon, "samba.algorithm": algorithm, "arms": arms, "horizon": horizon,
            "dataset": dataset, "runtime": "local", "key_bits": 512, "wall_s": 1e-4 * horizon,
            "plaintext_wall_s": 1e-5 * horizon, "distributed_wall_s": 5e-5 * horizon,
            "secure_cumulative_reward": horizon / 2, "plaintext_cumulative_reward": horizon / 2,
            "comp_s": 0.3, "controller_s": 0.1, "owner_mean_s": 0.1, "dc_s": 0.01}


def test_report_draws_fig8_from_tiny_real_runs(tmp_path, capsys):
    for algorithm in ("ucb", "pursuit"):
        for arms, horizon in ((3, 30), (3, 50), (4, 50)):
            config = RunConfig(experiment="samba", dataset="synthetic", arms=arms,
                               horizon=horizon, seed=1, key_bits=512, insecure_key_bits_ok=True,
                               progress=False, samba=SambaOptions(algorithm=algorithm))
            write_run(tmp_path, config.columns(), samba(config), started_at=NOW)
    paths = report([f"results_dir={tmp_path}"])
    assert sorted(p.name for p in paths) == FIG8
    assert all(p.stat().st_size > 10_000 for p in paths)
    assert "samba_fig8a" in capsys.readouterr().out


def test_bench_rows_alone_draw_only_the_time_figures(tmp_path):
    rows = [bench_row(a, k, n) for a in ("ucb", "thompson")
            for k, n in ((100, 50_000), (100, 100_000), (10, 100_000))]
    write_run(tmp_path, {"experiment": "bench_samba"}, RunOutput(rows=rows), started_at=NOW)
    assert sorted(p.name for p in report([f"results_dir={tmp_path}"])) == FIG8[:2]


def test_samba_and_bench_times_are_one_set_of_runs():
    rows = [{**bench_row("ucb", 100, 50_000), "experiment": "bench_samba", "run_id": "b"},
            samba_run("ucb", 100, 100_000)]
    timed = figs.timed_runs(rows)
    assert sorted((r["horizon"], r["wall_s"], r["plaintext_wall_s"]) for r in timed) == [
        (50_000, 500.0, 1.0), (100_000, 10.0, 1.0)]


def test_a_figure_without_its_data_is_skipped(tmp_path):
    one_size = [samba_run(a, 3, 50, d) for a in ("ucb", "softmax") for d in ("movielens", "jester")]
    assert figs.time_against_budget(one_size, tmp_path) is None   # one N only
    assert figs.time_against_arms(one_size, tmp_path) is None     # one K only
    assert figs.reward_per_algorithm(one_size, tmp_path).exists()
    assert figs.time_per_participant(one_size, tmp_path).exists()
    for draw in (figs.time_against_budget, figs.time_against_arms, figs.reward_per_algorithm,
                 figs.time_per_participant):
        assert draw([], tmp_path) is None


def test_time_figures_split_masks_into_panels_and_refuse_mixed_key_sizes(tmp_path):
    rows = [{**bench_row(a, 100, n), "samba.mask": mask, "experiment": "bench_samba",
             "run_id": "b"} for a in ("ucb", "thompson") for n in (50_000, 100_000)
            for mask in ("mpc", "paper")]
    assert figs.time_against_budget(rows, tmp_path).exists()            # a panel per mask
    rows[0]["key_bits"] = 2048
    with pytest.raises(MixedSettings, match=r"fig8a_time_vs_budget: .*key_bits \(512, 2048\)"):
        figs.time_against_budget(rows, tmp_path)
