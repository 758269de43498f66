"""jobs/bench_ops.py's arguments (its README commands run in test_bench_commands.py)."""

import pytest

from jobs.bench_ops import with_defaults
from jobs.cli import InputError
from jobs.run import command


def test_table1_defaults_fill_only_missing_keys():
    argv = with_defaults(["parties=3"])
    assert argv[0] == "--multirun" and "parties=3" in argv and "parties=2" not in argv
    assert "arms=100" in argv and "runtime=local,ray" in argv and "bench.repeats=5" in argv


def test_an_explicit_multirun_flag_is_kept_once_and_first():
    argv = with_defaults(["-m", "arms=10,100"])
    assert argv[0] == "--multirun" and "-m" not in argv[1:] and "arms=100" not in argv


def test_a_key_spelt_the_old_way_is_refused_with_its_new_name():
    with pytest.raises(InputError, match="repeats is now bench.repeats"):
        command(with_defaults(["repeats=2"]))
