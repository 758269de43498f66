"""bench_matmul at a small size: its bar over the sizes."""

from jobs import bench_matmul


def test_bench_matmul_shows_its_bar_and_progress_false_none(tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(bench_matmul, "SIZES", (8, 16))
    bench_matmul.main([f"results_dir={tmp_path}"])
    assert "bench_matmul: 100%" in capfd.readouterr().err
    bench_matmul.main([f"results_dir={tmp_path}", "progress=false"])
    assert "bench_matmul" not in capfd.readouterr().err
