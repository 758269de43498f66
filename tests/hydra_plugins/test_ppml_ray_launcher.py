"""hydra_plugins/ppml_ray_launcher: ``python -m jobs.run -m hydra/launcher=ray ...`` runs a sweep's
jobs at once as Ray tasks, each writing its own Parquet file; a failed job fails alone, named.

The README's command (tests/jobs/readme.py: this file runs it) at a small size on the private
local instance the launcher starts, and a failing sweep on the session's cluster it joins."""

import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import ray
from hydra import compose, initialize_config_dir
from hydra.core.utils import JobReturn, JobStatus
from hydra.utils import instantiate

from hydra_plugins.ppml_ray_launcher.ray_launcher import _exit_as_error, _kept
from tests.jobs.readme import REPO, child_env, readme_commands

SMALL = ["horizon=200", "progress=false"]
"""Each job small, yet some seconds long: two jobs at once overlap however late the second
worker starts (its imports take seconds on a busy machine)."""


def test_the_launcher_takes_the_runs_cluster_and_timeout_by_default():
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["hydra/launcher=ray", "ray_address=10.0.0.1:6379",
                                           "party_timeout_s=7", "hydra.launcher.num_cpus=2"],
                      return_hydra_config=True)
    launcher = instantiate(cfg.hydra.launcher)    # of the module as Hydra's plugin scan ran it
    assert type(launcher).__qualname__ == "RayLauncher"
    assert launcher.options == {"address": "10.0.0.1:6379", "num_cpus": 2.0,
                                "job_timeout_s": 86400.0, "connect_timeout_s": 7.0}


def test_a_jobs_exit_is_its_error():
    def refused(cfg):
        try:
            raise ValueError("horizon must be >= 1, got 0")
        except ValueError:
            raise SystemExit(2) from None        # as jobs.cli.reporting ends a refused config

    with pytest.raises(ValueError, match="horizon must be >= 1"):
        _exit_as_error(refused)(None)
    with pytest.raises(RuntimeError, match="the job exited with status 3"):
        _exit_as_error(lambda cfg: sys.exit(3))(None)
    assert _exit_as_error(lambda cfg: sys.exit(0))(None) is None


def sweep(arguments: list) -> tuple:
    """``python -m jobs.run <arguments>`` in a child process with this checkout first on its
    path: its `subprocess.CompletedProcess` and its pid."""
    command = [sys.executable, "-m", "jobs.run", *arguments]
    with subprocess.Popen(command, cwd=REPO, env=child_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as child:
        try:
            stdout, stderr = child.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            child.kill()
            raise
    return subprocess.CompletedProcess(command, child.returncode, stdout, stderr), child.pid


def session_processes(pid: int) -> list:
    """The processes of the Ray instance the process ``pid`` started (its session folder,
    ``session_<time>_<pid>``, is on their command lines)."""
    mine = re.compile(rf"session_[0-9_-]+_{pid}\b")
    found = []
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if proc.name.isdigit() and mine.search(line):
            found.append(f"{proc.name}: {line[:120]}")
    return found


@pytest.mark.ray
@pytest.mark.slow  # starts a Ray instance of its own (10-25 s on 2 busy cores)
def test_the_readme_sweep_runs_its_jobs_at_once_and_leaves_no_ray_behind(tmp_path):
    (command,) = readme_commands("python -m jobs.run -m hydra/launcher=ray")
    done, pid = sweep([*command[3:], *SMALL, f"results_dir={tmp_path}"])
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-2000:]
    assert "Started a local Ray instance" in done.stderr
    runs = sorted(tmp_path.glob("private_cb-*.parquet"))
    assert len(runs) == 4, done.stdout[-2000:]
    spans = []
    for path in runs:
        assert f"completed: {path}" in done.stdout         # the launcher names each job's file
        (started,) = set(pq.read_table(path, columns=["started_at"]).column(0).to_pylist())
        spans.append((started.timestamp(), path.stat().st_mtime))
    assert sorted({pq.read_table(p, columns=["data_seed"]).column(0)[0].as_py()
                   for p in runs}) == [0, 1, 2, 3]
    assert any(a_start < b_end and b_start < a_end for i, (a_start, a_end) in enumerate(spans)
               for b_start, b_end in spans[i + 1:]), f"no two jobs overlapped: {spans}"
    assert session_processes(pid) == []


@pytest.mark.ray
@pytest.mark.slow  # a runtime=ray job: its parties are actors (some 20 s on 2 busy cores)
def test_a_failed_job_is_named_and_the_others_results_stay(tmp_path, ray_cluster):
    address = ray_cluster.address_info["gcs_address"]
    done, _ = sweep(["-m", "hydra/launcher=ray", "experiment=private_cb", "dataset=synthetic",
                     "runtime=ray", "horizon=20,0", "progress=false", f"ray_address={address}",
                     f"results_dir={tmp_path}"])
    assert done.returncode == 2, done.stdout[-1000:] + done.stderr[-2000:]
    assert done.stderr.splitlines()[-1] == "error: horizon must be >= 1, got 0"
    assert re.search(r"1 of 2 jobs failed: #1 : .*horizon=0", done.stdout), done.stdout[-2000:]
    (path,) = tmp_path.glob("private_cb-*.parquet")       # job #0's, written as it ended
    row = pq.read_table(path, columns=["horizon", "runtime"]).slice(0, 1).to_pylist()[0]
    assert row == {"horizon": 20, "runtime": "ray"}       # its parties ran on the same cluster
    assert ray.cluster_resources()["CPU"] == 2            # a cluster it joined is left running


def test_a_file_a_job_wrote_on_another_node_is_kept_here_and_one_here_is_left(tmp_path):
    elsewhere = tmp_path / "results" / "private_cb-1.parquet"
    _kept(JobReturn(status=JobStatus.COMPLETED, _return_value=elsewhere), b"job's bytes")
    assert elsewhere.read_bytes() == b"job's bytes"
    _kept(JobReturn(status=JobStatus.COMPLETED, _return_value=elsewhere), b"other bytes")
    assert elsewhere.read_bytes() == b"job's bytes"
    assert [p.name for p in elsewhere.parent.iterdir()] == ["private_cb-1.parquet"]
