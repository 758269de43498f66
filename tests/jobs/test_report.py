import pytest

from jobs.cli import options
from jobs.report import DEFAULTS, main


def test_options_accept_only_known_keys_and_typed_values():
    assert options(DEFAULTS, ["results_dir=r"]) == {"results_dir": "r", "figures_dir": None}
    with pytest.raises(SystemExit, match="results_dir"):
        options(DEFAULTS, ["result_dir=r"])
    with pytest.raises(SystemExit, match="rounds must be a int"):
        options({"rounds": 200}, ["rounds=many"])


def test_report_on_an_empty_folder(tmp_path, capsys):
    assert main([f"results_dir={tmp_path}"]) == []
    assert "no runs" in capsys.readouterr().out
