import numpy as np

from ppml.experiments.bench_ops import OPS, bench_ops, time_plaintext
from ppml.experiments.config import BenchOptions, RunConfig
from ppml.experiments.results import validate_rows


def test_bench_ops_reports_every_operation_with_a_plaintext_baseline():
    out = bench_ops(RunConfig(parties=3, arms=4, dims=3, seed=1,
                              bench=BenchOptions(repeats=1)))
    validate_rows(out.rows)
    assert [r["op"] for r in out.rows] == list(OPS)
    by_op = {r["op"]: r for r in out.rows}
    assert by_op["add"]["rounds"] == 0 and by_op["add"]["bytes_per_party"] == 0
    assert by_op["mul"]["rounds"] == 2  # Beaver + bounded truncation
    assert by_op["argmax"]["rounds"] > by_op["mul"]["rounds"]
    assert all(r["plaintext_s"] > 0
               and np.isclose(r["slowdown_online"], r["online_s"] / r["plaintext_s"])
               and np.isclose(r["slowdown_total"],
                              (r["online_s"] + r["offline_s"]) / r["plaintext_s"])
               and r["slowdown_total"] >= r["slowdown_online"] for r in out.rows)
    assert "slowdown" in out.table and out.summary["wall_s"] > 0


def test_time_plaintext_measures_something():
    assert 0 < time_plaintext(lambda: None, min_seconds=0.001) < 1e-3


def test_progress_draws_the_operations_bar_and_false_draws_none(capfd):
    small = {"parties": 2, "arms": 2, "dims": 2, "seed": 1, "bench": BenchOptions(repeats=1)}
    bench_ops(RunConfig(progress=True, **small))
    assert "bench_ops operations: 100%" in capfd.readouterr().err
    bench_ops(RunConfig(progress=False, **small))
    assert "bench_ops" not in capfd.readouterr().err
