"""jobs/bench_pprl.py runs a tiny size end to end and writes its table."""

from jobs import bench_pprl
from ppml.experiments.results import read_results


def test_bench_writes_a_row_per_key_size_and_obfuscator(tmp_path, capsys):
    bench_pprl.main(["steps=5", "key_bits=512", "obfuscators=full,djn",
                     f"results_dir={tmp_path}"])
    rows = read_results(tmp_path).to_pylist()
    assert [(r["key_bits"], r["obfuscator"]) for r in rows] == [(512, "full"), (512, "djn")]
    for r in rows:
        assert r["q_equal_reference"] and r["online_ms"] > 0 and r["offline_ms"] > 0
        assert r["speedup"] == r["paper_random_s"] / r["estimate_15000_s"]
    assert "estimate_15000_s" in capsys.readouterr().out
