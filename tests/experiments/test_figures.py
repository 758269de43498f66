import datetime as dt

import pytest

from ppml.experiments.bench_ops import bench_ops
from ppml.experiments.config import BenchOptions, MPCOptions, RunConfig
from ppml.experiments.figures import MixedSettings, draw_all
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


def private_cb_run(folder, eps, bits=20, truncation="bounded"):
    from ppml.experiments.private_cb import private_cb
    config = RunConfig(experiment="private_cb", dataset="kmeans_digits", arms=3, dims=4,
                       horizon=20, precision_bits=bits, seed=1, progress=False,
                       mpc=MPCOptions(truncation=truncation),
                       private_cb=PrivateCBOptions(epsilon=eps))
    write_run(folder, config.columns(), private_cb(config),
              started_at=dt.datetime.now(dt.timezone.utc))


def test_private_cb_figures_state_their_fixed_settings(tmp_path):
    for eps in (0.1, 0.5):
        private_cb_run(tmp_path, eps)
    paths = draw_all(tmp_path)
    assert sorted(p.name for p in paths) == sorted(f"private_cb_fig{k}.png" for k in (
        "1_reward_over_training", "2_reward_vs_eta", "5_reward_vs_eta_per_arms"))
    # Fig. 6 needs checkpoints (membership inference), Fig. 8 explicit iteration counts, and
    # the line figures against |A|, P and L two values of them or more
    for path in paths:
        text = caption_of(path)
        assert text.startswith("Fixed: ") and "dataset=kmeans_digits" in text
        assert "precision_bits=20" in text and "mpc.truncation=bounded" in text
        assert "private_cb.epsilon" not in text                    # each plots epsilon


def test_runs_that_mix_a_setting_a_figure_does_not_plot_are_refused_by_name(tmp_path):
    """The degraded runs of another precision and truncation are not drawn as if they were the
    folder's: each figure that does not plot those settings is refused, naming them."""
    for eps in (0.1, 0.5):
        private_cb_run(tmp_path, eps)
    private_cb_run(tmp_path, 0.1, 28, truncation="probabilistic")
    refused = []
    paths = draw_all(tmp_path, refused=refused)
    # Figs. 6 and 8 have no runs; Fig. 7 plots precision and truncation, a panel per epsilon
    assert [p.name for p in paths] == ["private_cb_fig7_reward_vs_precision.png"]
    assert any(m.startswith("private_cb_fig1_reward_over_training: its runs differ in "
                            "precision_bits (20, 28); mpc.truncation (bounded, probabilistic)")
               for m in refused)
    assert all("move the other runs out of the results folder" in m for m in refused)
    with pytest.raises(MixedSettings, match="precision_bits"):
        draw_all(tmp_path)


def test_bench_ops_splits_runs_by_every_setting_that_differs(tmp_path):
    now = dt.datetime.now(dt.timezone.utc)
    for dims, bits in ((2, 20), (3, 20), (2, 16)):
        config = RunConfig(arms=3, dims=dims, precision_bits=bits, seed=1,
                           bench=BenchOptions(repeats=1))
        write_run(tmp_path, config.columns(), bench_ops(config), started_at=now)
    (path,) = draw_all(tmp_path)
    text = caption_of(path)
    assert "arms=3" in text and "dims" not in text and "precision_bits" not in text


def caption_of(path) -> str:
    """The caption a figure was saved with (its PNG's Description)."""
    from PIL import Image
    with Image.open(path) as image:
        return image.text["Description"]


def test_fig1_draws_a_panel_per_horizon_and_averages_data_seeds(tmp_path):
    from ppml.experiments.private_cb_figures import reward_over_training
    rows = [{"run_id": f"{eps}-{horizon}-{seed}", "private_cb.epsilon": eps, "horizon": horizon,
             "data_seed": seed, "dataset": "digits", "step": step, "average_reward": 0.5}
            for eps in (0.1, 0.5) for horizon in (5, 8) for seed in (0, 1)
            for step in range(horizon)]
    text = caption_of(reward_over_training(rows, tmp_path))
    assert "dataset=digits" in text and "horizon" not in text and "data_seed=" not in text
