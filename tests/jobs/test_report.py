from jobs.report import main


def test_report_on_an_empty_folder(tmp_path, capsys):
    assert main([f"results_dir={tmp_path}"]) == []
    assert "no runs" in capsys.readouterr().out


def test_report_leaves_out_a_corrupted_file_naming_it(tmp_path, capsys, caplog):
    (tmp_path / "run-broken.parquet").write_bytes(b"PAR1 cut short")
    assert main([f"results_dir={tmp_path}"]) == []
    assert "run-broken.parquet' is not readable Parquet" in caplog.text
    assert "no runs" in capsys.readouterr().out
