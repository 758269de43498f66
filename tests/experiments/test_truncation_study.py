from ppml.experiments.config import BenchOptions, RunConfig
from ppml.experiments.truncation_study import failures, truncation_study


def test_exact_modes_never_fail_and_probabilistic_does_at_high_precision():
    for mode in ("exact", "bounded"):
        assert failures(3, 28, mode, 20_000, seed=1)["failures"] == 0
    bad = failures(3, 28, "probabilistic", 20_000, seed=1)
    assert 0 < bad["failures"] < 100 and bad["max_error_ulps"] > 2**30


def test_experiment_row_and_table():
    out = truncation_study(RunConfig(experiment="truncation_study", seed=2,
                                     bench=BenchOptions(samples=1000)))
    assert out.rows[0]["failures"] == 0 and "failure_rate" in out.table


def test_progress_draws_the_bar_and_false_draws_none(capfd):
    config = RunConfig(experiment="truncation_study", seed=2, bench=BenchOptions(samples=1000))
    truncation_study(config)
    assert "truncation bounded L=20" in capfd.readouterr().err
    truncation_study(RunConfig(experiment="truncation_study", seed=2, progress=False,
                               bench=BenchOptions(samples=1000)))
    assert "truncation" not in capfd.readouterr().err
