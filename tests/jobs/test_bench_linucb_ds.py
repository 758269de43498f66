"""jobs/bench_linucb_ds.py runs a tiny size end to end and writes its table; sizes of the wrong
form are refused naming ``sizes`` and its form, before anything is measured."""

import pytest

from jobs import bench_linucb_ds
from jobs.cli import InputError
from ppml.experiments.results import read_results
from tests.experiments.summaries import fits


def test_bench_writes_rows_with_floor_and_target(tmp_path, capsys):
    bench_linucb_ds.main(["sizes=6x2x3", "key_bits=512", "workers=1", "dataset=synthetic",
                          f"results_dir={tmp_path}"])
    rows = read_results(tmp_path).to_pylist()
    assert sorted(r["linucb_ds.obfuscator"] for r in rows) == ["djn", "full"]
    assert all(r["sum_exact"] and r["floor_s"] > 0 and r["target_s"] is None for r in rows)
    assert bench_linucb_ds.target(15, 3, 1000, 2048, 1) == 121.0 / 6
    assert bench_linucb_ds.target(15, 3, 1000, 2048, 2) == 12.0
    assert all(r["code_version"] and (r["arms"], r["dims"], r["horizon"]) == (6, 2, 3)
               and r["bench_linucb_ds.sizes"] == "6x2x3" for r in rows)
    printed = capsys.readouterr().out
    assert "wall_s" in printed
    assert fits(printed)
    assert "\n\n" not in printed                         # one block: the columns fit


@pytest.mark.parametrize("sizes", ["15x3", "15x3x1000x2", "15x3xmany"])
def test_sizes_of_the_wrong_form_name_sizes_and_KxdxN(sizes, tmp_path):
    with pytest.raises(InputError, match=r"^sizes must be KxdxN\[,KxdxN\.\.\.\]"):
        bench_linucb_ds.main([f"sizes={sizes}", f"results_dir={tmp_path}"])
    assert not list(tmp_path.iterdir())
