"""jobs/bench_per_arm.py at a tiny size: its rows, its Parquet file, the crossover it reads off
them, and its refusals (its two-node cluster is not started here: the tests share one Ray)."""

import pytest

from jobs import bench_per_arm
from jobs.cli import InputError
from ppml.experiments.results import read_results
from tests.experiments.summaries import fits


@pytest.mark.ray
def test_bench_times_each_way_and_gets_identical_results(ray_cluster, tmp_path, capsys):
    bench_per_arm.main(["cb_sizes=3x2,8x3", "ds_sizes=4x2", "repeats=1", "progress=false",
                        f"results_dir={tmp_path}"])
    rows = read_results(tmp_path).to_pylist()
    assert sorted((r["kind"], r["arms"], r["dims"], r["work"]) for r in rows) == [
        ("linucb_ds", 4, 2, 16), ("private_cb", 3, 2, 12), ("private_cb", 8, 3, 72)]
    for r in rows:
        assert r["identical"] and (r["nodes"], r["workers"]) == (1, 2)
        assert min(r["in_process_s"], r["one_task_s"], r["split_s"]) > 0
        assert r["split_speedup"] == pytest.approx(r["in_process_s"] / r["split_s"])
        assert r["load_before"] >= 0 and r["bench_per_arm.cb_sizes"] == "3x2,8x3"
    printed = capsys.readouterr().out
    assert fits(printed) and "\n\n" not in printed.partition("(a summary")[0]
    assert "private_cb: the split over 2 workers pays" in printed


def test_the_crossover_is_where_splitting_pays_at_every_larger_size():
    def rows(*pays):
        return [{"kind": "k", "work": 10 ** i, "split_speedup": 2.0 if p else 0.5}
                for i, p in enumerate(pays)]
    assert bench_per_arm.crossover(rows(False, True, True), "k") == 10
    assert bench_per_arm.crossover(rows(True, False, True), "k") == 100
    assert bench_per_arm.crossover(rows(True, True, False), "k") is None
    assert bench_per_arm.crossover(rows(True), "other") is None


@pytest.mark.parametrize("argv, message", [
    (["workers=1"], "workers must be >= 2"), (["nodes=3"], "nodes must be 1 or 2"),
    (["cb_sizes=10"], "cb_sizes must be AxD"), (["repeats=0"], "repeats must be n")])
def test_bad_options_are_refused_naming_them(argv, message, tmp_path):
    with pytest.raises(InputError, match=message):
        bench_per_arm.main([*argv, f"results_dir={tmp_path}"])
