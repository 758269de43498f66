"""jobs/bench_pprl.py runs a tiny size end to end and writes its table."""

from jobs import bench_pprl
from ppml.experiments.results import read_results


def test_bench_writes_a_row_per_key_size_obfuscator_and_selection(tmp_path, capsys):
    bench_pprl.main(["steps=5", "key_bits=512", "obfuscators=full,djn",
                     "selection=random,epsilon_greedy", f"results_dir={tmp_path}"])
    rows = read_results(tmp_path).to_pylist()
    assert [(r["obfuscator"], r["selection"]) for r in rows] == [
        ("full", "random"), ("full", "epsilon_greedy"), ("djn", "random"),
        ("djn", "epsilon_greedy")]
    for r in rows:
        assert r["q_equal_reference"] and r["online_ms"] > 0 and r["offline_ms"] > 0
        assert r["speedup"] == r["paper_s"] / r["estimate_15000_s"]
        assert (r["comparisons"] > 0) == (r["selection"] == "epsilon_greedy")
    assert "estimate_15000_s" in capsys.readouterr().out
