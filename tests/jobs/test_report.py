import pytest

from jobs.report import main, parse


def test_parse_accepts_only_known_keys():
    assert parse(["results_dir=r"]) == {"results_dir": "r", "figures_dir": None}
    with pytest.raises(SystemExit, match="results_dir"):
        parse(["result_dir=r"])


def test_report_on_an_empty_folder(tmp_path, capsys):
    assert main([f"results_dir={tmp_path}"]) == []
    assert "no runs" in capsys.readouterr().out
