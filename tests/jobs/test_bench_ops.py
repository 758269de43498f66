import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.bench_ops import with_defaults

REPO = Path(__file__).resolve().parents[2]


def test_table1_defaults_fill_only_missing_keys():
    argv = with_defaults(["parties=3"])
    assert argv[0] == "--multirun" and "parties=3" in argv and "parties=2" not in argv
    assert "arms=100" in argv and "runtime=local,ray" in argv and "bench.repeats=5" in argv


def test_an_explicit_multirun_flag_is_kept_once_and_first():
    argv = with_defaults(["-m", "arms=10,100"])
    assert argv[0] == "--multirun" and "-m" not in argv[1:] and "arms=100" not in argv


def test_the_sweep_runs_as_written(tmp_path):
    done = subprocess.run([sys.executable, "-m", "jobs.bench_ops", "-m", "parties=2,3", "arms=3",
                           "dims=3", "bench.repeats=1", "runtime=local", "seed=1",
                           f"results_dir={tmp_path}"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(list(tmp_path.glob("bench_ops-*.parquet"))) == 2


def test_a_key_spelt_the_old_way_is_refused_with_its_new_name(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench_ops", "repeats=2"])
    with pytest.raises(SystemExit, match="repeats is now bench.repeats"):
        runpy.run_module("jobs.bench_ops", run_name="__main__")
