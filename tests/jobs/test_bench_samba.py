"""jobs/bench_samba.py runs a tiny size end to end and writes its table; its targets."""

import pytest

from jobs import bench_samba
from jobs.cli import InputError
from ppml.experiments.results import read_results
from tests.experiments.summaries import fits


def test_bench_writes_agreeing_rows_with_phases(tmp_path, capsys):
    bench_samba.main(["sizes=3x30,4x20", "algorithms=ucb,pursuit", "dataset=synthetic",
                      "key_bits=512", f"results_dir={tmp_path}"])
    rows = read_results(tmp_path).to_pylist()
    assert sorted((r["samba.algorithm"], r["samba.mask"], r["arms"]) for r in rows) == [
        (a, m, k) for a in ("pursuit", "ucb") for m in ("mpc", "paper") for k in (3, 4)]
    for r in rows:
        assert r["agree"] and r["target_s"] is None and r["step_us"] > 0 and r["peak_rss_mb"] > 0
        assert (r["selection_rounds"] > 0) == (r["samba.mask"] == "mpc")
        assert (r["dataset"], r["runtime"], r["key_bits"]) == ("synthetic", "local", 512)
        assert r["setup_s"] + r["steps_s"] + r["end_s"] <= r["secure_s"]
        assert r["slowdown_total"] == r["secure_s"] / r["plaintext_s"] > r["slowdown_online"] > 0
        assert 0 < r["offline_s"] <= r["setup_s"]
        assert r["aead_floor_us"] > 0 and r["framing_floor_us"] > 0
        assert r["framing_ratio"] == pytest.approx(r["framing_floor_us"] / r["aead_floor_us"])
    assert {r["code_version"] for r in rows} and all(r["code_version"] for r in rows)
    assert {r["bench_samba.sizes"] for r in rows} == {"3x30,4x20"}        # the job's options
    assert {r["samba.owners_per_actor"] for r in rows} == {None}          # each run's config
    printed = capsys.readouterr().out
    assert "secure_s" in printed and fits(printed)
    assert "\n\n" not in printed                         # one block: the columns fit
    assert "None" not in printed


def test_targets_are_a_third_of_the_authors_times():
    assert bench_samba.target("ucb", 10, 100_000) == pytest.approx(29 / 3)
    assert bench_samba.target("eps_greedy", 100, 5_000) == pytest.approx(14 / 3)
    assert bench_samba.target("thompson", 100, 5_000) == 7.0
    assert bench_samba.target("softmax", 100, 100_000) == 180.0
    assert bench_samba.target("pursuit", 100, 100_000) is None
    assert bench_samba.target("pursuit", 10, 100_000) == pytest.approx(2 * 33 / 3)   # nb_A = 2
    assert bench_samba.target("ucb", 50, 100_000) is None


def test_mpc_targets_are_per_iteration():
    assert bench_samba.target("ucb", 10, 100_000, "mpc") == 180.0
    assert bench_samba.target("softmax", 100, 100_000, "mpc") == 600.0
    assert bench_samba.target("pursuit", 100, 100_000, "mpc") == 1200.0
    assert bench_samba.target("ucb", 100, 5_000, "mpc") is None


def test_unknown_sweep_is_refused():
    with pytest.raises(InputError, match="sweep must be one of"):
        bench_samba.main(["sweep=fig9"])
