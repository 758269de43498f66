"""jobs/bench_masked_lark.py runs a tiny size end to end and writes its table."""

from jobs import bench_masked_lark
from ppml.experiments.results import read_results
from tests.experiments.summaries import fits


def test_bench_writes_an_aggregation_row_and_a_training_row(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bench_masked_lark, "FLOOR_SAMPLE", 50)
    bench_masked_lark.main(["reports=300", "d=3", "runs=local:1", "train=breast_cancer",
                            "batch_size=128", f"results_dir={tmp_path}"])
    rows = {row["part"]: row for row in read_results(tmp_path).to_pylist()}
    aggregate, train = rows["aggregate"], rows["train"]
    assert aggregate["release_equal_reference"] and aggregate["reports"] == 300
    assert aggregate["target_s"] is None                     # the target is at 100,000, d = 8
    assert 0 < aggregate["floor_s"] and aggregate["floor_ratio"] == \
        aggregate["floor_s"] / aggregate["helper_s"]
    assert aggregate["helper_s"] < aggregate["end_to_end_s"]
    assert train["gradient_equal_steps"] == train["steps"] == 4
    assert train["slowdown_online"] == train["train_s"] / train["plaintext_train_s"]
    assert train["slowdown_total"] >= (train["setup_s"] + train["train_s"]) / \
        train["plaintext_train_s"] > train["slowdown_online"] > 0
    assert aggregate["code_version"] and aggregate["bench_masked_lark.reports"] == 300
    printed = capsys.readouterr().out
    assert "x floor" in printed and fits(printed)
    assert "\n\n" not in printed                         # one block: the columns fit
