import datetime as dt

import pytest

from ppml.experiments.bench_ops import bench_ops
from ppml.experiments.config import BenchOptions, MPCOptions, RunConfig
from ppml.experiments.figures import draw_all
from ppml.experiments.results import write_run
from ppml.experiments.truncation_study import truncation_study
from ppml.protocols.private_cb.config import PrivateCBOptions


@pytest.fixture
def results(tmp_path):
    now = dt.datetime.now(dt.timezone.utc)
    for mode, bits in [("probabilistic", 28), ("bounded", 28), ("probabilistic", 24)]:
        config = RunConfig(experiment="truncation_study", precision_bits=bits, seed=1,
                           mpc=MPCOptions(truncation=mode), bench=BenchOptions(samples=2000))
        write_run(tmp_path, config.columns(), truncation_study(config), started_at=now)
    config = RunConfig(arms=3, dims=2, seed=1, bench=BenchOptions(repeats=1))
    write_run(tmp_path, config.columns(), bench_ops(config), started_at=now)
    return tmp_path


def test_every_experiment_with_runs_gets_its_figures(results):
    paths = draw_all(results)
    assert sorted(p.name for p in paths) == ["bench_ops_slowdown.png", "truncation_failures.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)


def test_an_empty_folder_draws_nothing(tmp_path):
    assert draw_all(tmp_path) == []


def test_private_cb_figures(tmp_path):
    from ppml.experiments.private_cb import private_cb
    now = dt.datetime.now(dt.timezone.utc)
    for eps, bits, iterations in [(0.1, 20, None), (0.5, 20, 3), (0.1, 16, 3)]:
        config = RunConfig(experiment="private_cb", dataset="kmeans_digits", arms=3, dims=4,
                           horizon=20, precision_bits=bits, seed=1, progress=False,
                           private_cb=PrivateCBOptions(epsilon=eps, nr_iterations=iterations))
        write_run(tmp_path, config.columns(), private_cb(config), started_at=now)
    names = sorted(p.name for p in draw_all(tmp_path))
    assert names == sorted(f"private_cb_fig{k}.png" for k in (
        "1_reward_over_training", "2_reward_vs_eta", "3_time_vs_arms", "4_time_vs_parties",
        "5_reward_vs_eta_per_arms", "7_reward_vs_precision", "8_reward_vs_iterations"))
    # Fig. 6 needs checkpoints (membership inference): none here, so it is not drawn
