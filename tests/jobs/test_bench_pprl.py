"""jobs/bench_pprl.py runs a tiny size end to end and writes its table."""

import pytest

from jobs import bench_pprl
from ppml.experiments.results import read_results
from tests.experiments.summaries import fits


def test_bench_writes_a_row_per_key_size_obfuscator_and_selection(tmp_path, capsys):
    bench_pprl.main(["steps=5", "key_bits=512", "obfuscators=full,djn",
                     "selection=random,epsilon_greedy", f"results_dir={tmp_path}"])
    rows = read_results(tmp_path).to_pylist()
    assert [(r["obfuscator"], r["selection"]) for r in rows] == [
        ("full", "random"), ("full", "epsilon_greedy"), ("djn", "random"),
        ("djn", "epsilon_greedy")]
    for r in rows:
        assert r["q_equal_reference"] and r["online_ms"] > 0 and r["offline_ms"] > 0
        assert r["speedup"] == r["paper_s"] / r["estimate_s"] and r["estimate_steps"] == 15000
        assert (r["comparisons"] > 0) == (r["selection"] == "epsilon_greedy")
        assert r["division_ms"] > r["decryption_ms"] > 0 and r["encryption_ms"] > 0
        assert (r["comparison_ms"] > 0) == (r["selection"] == "epsilon_greedy")
        assert r["slowdown_online"] == pytest.approx(r["online_ms"] / r["plaintext_ms"])
        assert r["slowdown_total"] == pytest.approx(
            (r["setup_s"] * 1e3 / 5 + r["online_ms"] + r["offline_ms"]) / r["plaintext_ms"])
        assert r["slowdown_total"] > r["slowdown_online"] > 0
    assert all(r["code_version"] and r["bench_pprl.steps"] == 5 for r in rows)
    printed = capsys.readouterr().out
    assert "estimate_s" in printed and fits(printed)
    assert "\n\n" not in printed                         # one block: the columns fit


def test_bench_measures_the_partitioning_by_observation(tmp_path):
    bench_pprl.main(["steps=5", "key_bits=512", "obfuscators=djn", "partition=observation",
                     f"results_dir={tmp_path}"])
    (row,) = read_results(tmp_path).to_pylist()
    assert row["task"] == "load_balancing" and row["estimate_steps"] == 100_000
    assert row["q_equal_reference"] and row["speedup"] is None and row["floor_ms"] > 0


def test_bench_sets_the_shares_backend_against_paillier_in_one_run(tmp_path):
    bench_pprl.main(["steps=5", "key_bits=512", "obfuscators=djn", "backends=paillier,shares",
                     "scale_bits=40", f"results_dir={tmp_path}"])
    paillier, shares = read_results(tmp_path).to_pylist()
    assert (paillier["backend"], shares["backend"]) == ("paillier", "shares")
    assert shares["q_equal_reference"] and shares["rounds_per_step"] > 0
    assert shares["slowdown_total"] == shares["slowdown_online"] > 0     # dealer in online_ms
    assert paillier["shares_speedup"] == pytest.approx(
        (paillier["online_ms"] + paillier["offline_ms"]) / shares["online_ms"])


@pytest.mark.ray
def test_bench_measures_the_agents_as_ray_actors_too(tmp_path, ray_cluster):
    bench_pprl.main(["steps=5", "key_bits=512", "obfuscators=djn", "runtimes=local,ray",
                     f"results_dir={tmp_path}"])
    rows = read_results(tmp_path).to_pylist()
    assert [r["runtime"] for r in rows] == ["local", "ray"]
    assert all(r["q_equal_reference"] and r["online_ms"] > 0 for r in rows)
