"""The small jobs' shared options and their bar over the cases they measure."""

import pytest

from jobs.cli import cases, options


def test_every_job_takes_progress_as_a_flag():
    assert options({"repeats": 3}, [])["progress"] is True
    assert options({"repeats": 3}, ["progress=false", "repeats=2"]) == {
        "repeats": 2, "progress": False}
    with pytest.raises(SystemExit, match="progress must be true or false, got 'no'"):
        options({}, ["progress=no"])


def test_cases_draws_one_bar_and_progress_false_none(capfd):
    assert list(cases([1, 2, 3], "bench_x", {"progress": True})) == [1, 2, 3]
    assert "bench_x: 100%" in capfd.readouterr().err
    assert list(cases([1, 2, 3], "bench_x", {"progress": False})) == [1, 2, 3]
    assert capfd.readouterr().err == ""

