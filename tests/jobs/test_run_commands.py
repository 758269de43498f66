"""The README's ``python -m jobs.run`` commands that no other file runs (tests/jobs/readme.py
says which), each as written in a child process, so Hydra parses the real command line, at a
small size: the experiment's small overrides appended, a sweep cut to two jobs."""

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from tests.jobs.readme import (REPO, is_sweep, ray_marked, readme_commands, run_command,
                               smaller_sweep, starts_ray, value)

SMALL_KEYS = ["key_bits=512", "insecure_key_bits_ok=true"]
SMALL = {"bench_ops": ["arms=3", "dims=3", "bench.repeats=1"],
         "private_cb": ["horizon=20"],
         "linucb_ds": ["arms=4", "dims=3", "horizon=10", *SMALL_KEYS],
         "spectral_ucb_ds": ["arms=4", "horizon=4", "dims=3", *SMALL_KEYS],
         "samba": ["arms=3", "horizon=20", *SMALL_KEYS],
         "truncation_study": ["bench.samples=1000"]}
"""What makes each experiment small (appended, so they win over the command's own values)."""

DOWNLOADED = {"mnist": "mnist", "movielens": "ml-100k"}
"""Dataset -> its folder in PPML_DATA, for the datasets that are downloaded."""

RAY_STARTED = ("Started a local Ray instance", "Token authentication")
"""What Ray logs when it starts (a run without Ray must log neither)."""


COMMANDS = readme_commands("python -m jobs.run")


@pytest.mark.parametrize("command", [ray_marked(c, " ".join(c[3:6]) or "default")
                                     for c in COMMANDS])
def test_a_readme_command_runs_as_written(tmp_path, command):
    experiment = value(command, "experiment", "bench_ops")
    assert experiment in SMALL, f"tests/jobs/test_run_commands.py: no SMALL for {experiment}"
    defaults = yaml.safe_load((REPO / "conf" / "experiment" / f"{experiment}.yaml").read_text())
    folder = DOWNLOADED.get(value(command, "dataset", defaults.get("dataset")))
    if folder and not (Path(os.environ.get("PPML_DATA", "")) / folder).is_dir():
        pytest.skip(f"needs {folder} in PPML_DATA")
    done = run_command(command, [*smaller_sweep(command), *SMALL[experiment], "progress=false",
                                 f"results_dir={tmp_path}"])
    if "--cfg" in command:
        assert "experiment: bench_ops" in done.stdout and "runtime: local" in done.stdout
        return
    runs = list(tmp_path.glob(f"{experiment}-*.parquet"))
    assert len(runs) == (2 if is_sweep(command) else 1), done.stdout[-1000:]
    assert all(path.name in done.stdout for path in runs)
    if not starts_ray(command):
        assert not any(sign in done.stderr for sign in RAY_STARTED), done.stderr[-2000:]
        for path in runs:
            assert set(pq.read_table(path, columns=["runtime"]).column(0).to_pylist()) == {
                "local"}
