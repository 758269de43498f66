"""jobs/bench_matmul.py at a small size: its sizes and its bar over them (its README command
runs in test_bench_commands.py)."""

import pytest

from jobs import bench_matmul
from jobs.cli import InputError


def test_bench_matmul_shows_its_bar_and_progress_false_none(tmp_path, capfd):
    bench_matmul.main([f"results_dir={tmp_path}", "sizes=8,16"])
    assert "bench_matmul: 100%" in capfd.readouterr().err
    bench_matmul.main([f"results_dir={tmp_path}", "sizes=8", "progress=false"])
    assert "bench_matmul" not in capfd.readouterr().err


@pytest.mark.parametrize("text", ["0", "32,x", "", "-4", "8x8"])
def test_a_size_below_one_or_not_an_integer_is_refused_naming_sizes(text, tmp_path):
    with pytest.raises(InputError, match=r"^sizes must be n\[,n\.\.\.\]"):
        bench_matmul.main([f"results_dir={tmp_path}", f"sizes={text}"])
