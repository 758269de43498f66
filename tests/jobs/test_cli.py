"""What every job shares (jobs/cli.py): a config or input error ends the command in one line
with exit status 2, any other error keeps its traceback; ``key=value`` options and sizes; the bar
over the cases a benchmark measures; the benchmarks' ending: a compact table, one run whose rows
carry the code version and the job's options (and a measured run's config)."""

import datetime as dt
import sys

import pytest
from hydra.errors import ConfigCompositionException

from jobs import cli
from jobs.cli import (InputError, cases, checking, finish, one_line, options, parse_ints,
                      parse_sizes, reporting, run_columns)
from ppml.experiments.config import RunConfig
from ppml.experiments.results import read_results
from ppml.experiments.table import FULL_ROWS_NOTE


def test_an_input_error_ends_the_command_in_one_line_with_status_2(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_verbose", False)
    with pytest.raises(SystemExit) as ended, reporting(), checking():
        raise ValueError("parties must be >= 2, got 1")
    assert ended.value.code == 2
    assert capsys.readouterr().err == "error: parties must be >= 2, got 1\n"


def test_verbose_shows_the_traceback_of_the_error_it_came_from(monkeypatch):
    monkeypatch.setattr(cli, "_verbose", True)
    with pytest.raises(InputError) as raised, reporting(), checking():
        raise FileNotFoundError("dataset file 'mnist' is missing")
    assert isinstance(raised.value.__cause__, FileNotFoundError)


def test_the_command_takes_verbose_off_the_command_line(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["job", "--verbose", "parties=1"])
    monkeypatch.setenv("HYDRA_FULL_ERROR", "0")       # restored after the test
    monkeypatch.setattr(cli, "_verbose", False)

    def entry():
        assert sys.argv[1:] == ["parties=1"]
        with checking():
            raise ValueError("parties must be >= 2, got 1")

    with pytest.raises(InputError):
        cli.run_command(entry)
    assert cli._verbose


def test_other_errors_and_errors_outside_the_checks_keep_their_traceback(monkeypatch):
    monkeypatch.setattr(cli, "_verbose", False)
    with pytest.raises(KeyError), reporting(), checking():
        raise KeyError("a bug")
    with pytest.raises(ValueError), reporting():          # raised after the checks: mid-run
        raise ValueError("party 1 failed")


def test_one_line_of_a_hydra_composition_error():
    try:
        try:
            raise ValueError("Key 'arsm' not in 'RunConfig'\n    full_key: arsm\n"
                             "    object_type=RunConfig")
        except ValueError as cause:
            raise ConfigCompositionException("Could not override 'arsm'.\nTo append to your "
                                             "config use +arsm=3") from cause
    except ConfigCompositionException as err:
        assert one_line(err) == "Could not override 'arsm'. Key 'arsm' not in 'RunConfig'"
    missing = ValueError("In 'config': Could not find 'experiment/nope'\n\nAvailable options "
                         "in 'experiment':\n\tbench_ops\n\tsamba\nConfig search path:\n"
                         "\tprovider=hydra, path=pkg://hydra.conf")
    assert one_line(missing) == ("In 'config': Could not find 'experiment/nope'; Available "
                                 "options in 'experiment': bench_ops, samba")


def test_options_accept_only_known_keys_and_typed_values():
    defaults = {"results_dir": "results", "figures_dir": None}
    assert options(defaults, ["results_dir=r"]) == {"results_dir": "r", "figures_dir": None,
                                                    "progress": True}
    with pytest.raises(InputError, match="results_dir"):
        options(defaults, ["result_dir=r"])
    with pytest.raises(InputError, match="rounds must be an integer, got 'many'"):
        options({"rounds": 200}, ["rounds=many"])


def test_sizes_of_the_wrong_form_are_refused_naming_sizes_and_the_form():
    assert parse_sizes("15x3x1000,50x5x200", "KxdxN") == [(15, 3, 1000), (50, 5, 200)]
    for text in ["15x3", "15x3x0", "15x3xN", "15x3x1000,", "1x2x3x4"]:
        with pytest.raises(InputError, match=r"^sizes must be KxdxN\[,KxdxN\.\.\.\] \(3 "
                                             r"integers >= 1 joined by x\), got "):
            parse_sizes(text, "KxdxN")


def test_a_list_of_integers_is_refused_naming_its_key():
    assert parse_ints("1,2,4", "workers") == [1, 2, 4] and parse_ints(2048, "key_bits") == [2048]
    for text in ["1,", "0", "two", "1x2"]:
        with pytest.raises(InputError, match=r"^workers must be n\[,n\.\.\.\] \(an integer "
                                             r">= 1\), got "):
            parse_ints(text, "workers")


def test_every_job_takes_progress_as_a_flag():
    assert options({"repeats": 3}, [])["progress"] is True
    assert options({"repeats": 3}, ["progress=false", "repeats=2"]) == {
        "repeats": 2, "progress": False}
    with pytest.raises(InputError, match="progress must be true or false, got 'no'"):
        options({}, ["progress=no"])


def test_cases_draws_one_bar_and_progress_false_none(capfd):
    assert list(cases([1, 2, 3], "bench_x", {"progress": True})) == [1, 2, 3]
    assert "bench_x: 100%" in capfd.readouterr().err
    assert list(cases([1, 2, 3], "bench_x", {"progress": False})) == [1, 2, 3]
    assert capfd.readouterr().err == ""


def test_finish_writes_the_jobs_options_and_code_version_on_every_row(tmp_path, capsys):
    opts = {"key_bits": "1024,2048", "workers": "1,2", "results_dir": str(tmp_path)}
    rows = [{**run_columns(RunConfig(experiment="samba", arms=k)), "secure_s": 1280.0,
             "target_s": None} for k in (3, 4)]
    finish("bench_x", rows, opts, dt.datetime.now(dt.timezone.utc),
           ["arms", "secure_s", "target_s"])
    written = read_results(tmp_path).to_pylist()
    assert all(r["code_version"] and r["experiment"] == "bench_x" for r in written)
    assert {(r["bench_x.key_bits"], r["bench_x.workers"]) for r in written} == {
        ("1024,2048", "1,2")}
    assert [r["arms"] for r in written] == [3, 4] and {r["key_bits"] for r in written} == {2048}
    assert "samba.algorithm" in written[0] and "run_id" not in run_columns(RunConfig())
    table, note, path = capsys.readouterr().out.rstrip("\n").rsplit("\n", 2)
    assert table.splitlines()[2].split() == ["3", "1,280"] and "None" not in table
    assert note == FULL_ROWS_NOTE and path.startswith("results: ")
