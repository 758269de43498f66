"""`python -m jobs.run`: validate, run the registered experiment, write Parquet, print a summary.

The test-only experiments ``probe`` and ``probe_fails`` come from probe_job.py beside this file,
registered here in-process and run as a script for the command-line tests. Their
conf/experiment/*.yaml files live in a temporary folder added to Hydra's search path.
"""

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import ray

from jobs.cli import InputError
from jobs.run import run
from ppml.experiments.results import read_results
from tests.jobs.readme import child_env

REPO = Path(__file__).resolve().parents[2]
PROBE_JOB = Path(__file__).resolve().parent / "probe_job.py"
PROBE_YAML = "# @package _global_\nexperiment: probe\nparties: 3\nhorizon: 4\n"

runpy.run_path(str(PROBE_JOB))  # registers probe and probe_fails in this process


@pytest.fixture
def searchpath(tmp_path) -> str:
    """A Hydra search-path folder holding experiment/probe.yaml and experiment/probe_fails.yaml."""
    folder = tmp_path / "conf"
    (folder / "experiment").mkdir(parents=True)
    (folder / "experiment" / "probe.yaml").write_text(PROBE_YAML)
    (folder / "experiment" / "probe_fails.yaml").write_text(
        PROBE_YAML.replace("experiment: probe", "experiment: probe_fails")
    )
    return f"hydra.searchpath=[file://{folder}]"



def test_run_writes_one_parquet_file_and_prints_summary_and_path(
    tmp_path, searchpath, capsys, compose_run_config, monkeypatch
):
    def no_ray(*args, **kwargs):
        raise AssertionError("runtime=local must not start Ray")

    monkeypatch.setattr(ray, "init", no_ray)
    results_dir = tmp_path / "results"
    path = run(compose_run_config("experiment=probe", searchpath, f"results_dir={results_dir}"))
    assert path.parent == results_dir
    table = pq.read_table(path)
    assert table.column("step").to_pylist() == [0, 1, 2, 3]
    assert set(table.column("parties").to_pylist()) == {3}
    printed = capsys.readouterr().out
    assert "secure_cumulative_reward  4.0" in printed
    assert f"results: {path}" in printed


def test_seeded_mode_logs_a_loud_insecure_warning(tmp_path, searchpath, caplog, compose_run_config):
    run(compose_run_config("experiment=probe", searchpath, f"results_dir={tmp_path}", "seed=7"))
    assert "INSECURE: seeded reproducible mode (seed=7)" in caplog.text


def test_default_mode_does_not_warn(tmp_path, searchpath, caplog, compose_run_config):
    run(compose_run_config("experiment=probe", searchpath, f"results_dir={tmp_path}"))
    assert "INSECURE" not in caplog.text


def test_a_failed_run_writes_nothing_and_keeps_earlier_runs(
    tmp_path, searchpath, compose_run_config
):
    results_dir = tmp_path / "results"
    earlier = run(compose_run_config("experiment=probe", searchpath, f"results_dir={results_dir}"))
    before = earlier.read_bytes()
    with pytest.raises(RuntimeError, match="protocol aborted"):
        run(compose_run_config("experiment=probe_fails", searchpath, f"results_dir={results_dir}"))
    assert [p.name for p in results_dir.iterdir()] == [earlier.name]
    assert earlier.read_bytes() == before


def test_an_unreachable_ray_address_fails_before_anything_runs(tmp_path, compose_run_config):
    cfg = compose_run_config("experiment=bench_ops", "runtime=ray", "ray_address=127.0.0.1:1",
                             f"results_dir={tmp_path}")
    with pytest.raises(ConnectionError, match=r"ray_address=127\.0\.0\.1:1"):
        run(cfg)
    assert not list(tmp_path.glob("*.parquet"))


def test_an_unregistered_experiment_is_refused_naming_the_known_ones(tmp_path, compose_run_config):
    cfg = compose_run_config(f"results_dir={tmp_path}")
    cfg.experiment = "not_registered"
    known = "unknown experiment 'not_registered'; known experiments: .*probe"
    with pytest.raises(InputError, match=known):
        run(cfg)
    assert not list(tmp_path.glob("*.parquet"))


def no_ray_init(*args, **kwargs):
    raise AssertionError("Ray was started before the inputs were checked")


@pytest.mark.parametrize("overrides, message", [
    (["experiment=private_cb", "dataset=mnist", "data_dir={missing}"],
     "data directory .*missing.* does not exist"),
    (["experiment=samba", "dataset=movielens", "data_dir={missing}"],
     "data directory .*missing.* does not exist"),
    (["experiment=linucb_ds", "dataset=movielens", "data_dir={missing}"],
     "data directory .*missing.* does not exist"),
    (["experiment=pprl", "pprl.backend=shares", "pprl.scale_bits=60", "pprl.methods=[pprl]"],
     "pprl.scale_bits=60 .*lower pprl.scale_bits by at least"),
])
def test_inputs_are_checked_before_ray_starts(tmp_path, compose_run_config, monkeypatch,
                                              overrides, message):
    monkeypatch.setattr(ray, "init", no_ray_init)
    missing = tmp_path / "missing"
    cfg = compose_run_config(*(o.format(missing=missing) for o in overrides), "runtime=ray",
                             f"results_dir={tmp_path}")
    with pytest.raises(InputError, match=message):
        run(cfg)


def test_a_config_error_is_one_line_with_status_2_and_its_traceback_on_request(tmp_path):
    command = [sys.executable, "-m", "jobs.run", "parties=1", f"results_dir={tmp_path}"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=child_env())
    assert (done.returncode, done.stderr) == (2, "error: parties must be >= 2, got 1\n")
    verbose = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300,
                             env={**child_env(), "HYDRA_FULL_ERROR": "1"})
    assert verbose.returncode == 1 and "Traceback (most recent call last)" in verbose.stderr
    assert "parties must be >= 2, got 1" in verbose.stderr


def run_child(tmp_path: Path, searchpath: str, *args: str) -> subprocess.CompletedProcess:
    """Run probe_job.py (jobs.run's Hydra main with probe registered) in a child process."""
    results_dir = tmp_path / "results"
    overrides = ["experiment=probe", searchpath, f"results_dir={results_dir}"]
    command = [sys.executable, str(PROBE_JOB), *args, *overrides]  # Hydra flags (-m) come first
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=child_env())
    assert done.returncode == 0, done.stderr
    return done


def test_multirun_sweeps_one_file_per_job(tmp_path, searchpath):
    run_child(tmp_path, searchpath, "-m", "parties=2,5")
    table = read_results(tmp_path / "results")
    assert sorted(set(table.column("parties").to_pylist())) == [2, 5]
    assert len(list((tmp_path / "results").glob("*.parquet"))) == 2
    assert not (REPO / "multirun").exists() and not (REPO / "outputs").exists()


def test_runs_started_in_the_same_second_get_a_folder_each(tmp_path, searchpath):
    results_dir = tmp_path / "results"
    command = [sys.executable, str(PROBE_JOB), "experiment=probe", searchpath,
               f"results_dir={results_dir}"]
    children = [subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, env=child_env())
                for _ in range(2)]
    for child in children:
        assert child.wait(timeout=300) == 0, child.stderr.read()
        child.stderr.close()
    folders = list((results_dir / ".hydra" / "runs").iterdir())
    assert len(folders) == 2 and all((f / ".hydra" / "config.yaml").exists() for f in folders)
    assert len(list(results_dir.glob("*.parquet"))) == 2


LOCAL_RUNS = (
    ("experiment=samba", "dataset=synthetic", "arms=3", "horizon=6"),
    ("experiment=linucb_ds", "dataset=synthetic", "arms=3", "dims=2", "horizon=4"),
    ("experiment=bench_ops", "runtime=local", "arms=3", "dims=2", "bench.repeats=1"),
)
"""Tiny local runs of the role-based families (Paillier, seats, roles) and of the engine."""


def test_a_local_run_imports_neither_ray_nor_matplotlib_and_rows_carry_its_peak(tmp_path):
    """A ``runtime=local`` process never imports Ray or matplotlib (docs/memory.md): each run
    of `LOCAL_RUNS` in one fresh interpreter, which then names the ones it imported; every row
    of every run carries the process's peak resident set (``peak_rss_mb``)."""
    code = (
        "import sys\n"
        "from hydra import compose, initialize_config_dir\n"
        "from jobs.run import CONF_DIR, run\n"
        f"for overrides in {LOCAL_RUNS!r}:\n"
        "    with initialize_config_dir(config_dir=CONF_DIR, version_base='1.3'):\n"
        "        run(compose('config', overrides=[*overrides, 'key_bits=512',\n"
        "            'insecure_key_bits_ok=true', 'progress=false',\n"
        f"            'results_dir={tmp_path}']))\n"
        "print('imported:', sorted({'ray', 'matplotlib'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=child_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "imported: []"
    table = read_results(tmp_path)
    assert sorted(set(table.column("experiment").to_pylist())) == [
        "bench_ops", "linucb_ds", "samba"]
    assert all(mb > 0 for mb in table.column("peak_rss_mb").to_pylist())


@pytest.mark.ray
@pytest.mark.slow  # starts a full Ray instance with its dashboard (about 10 s on 2 cores)
def test_runtime_ray_starts_a_private_instance(tmp_path, searchpath):
    run_child(tmp_path, searchpath, "runtime=ray")
    assert set(read_results(tmp_path / "results").column("ray").to_pylist()) == {True}


@pytest.mark.ray
def test_runtime_ray_joins_the_cluster_at_ray_address(tmp_path, searchpath, ray_cluster):
    address = ray_cluster.address_info["gcs_address"]
    run_child(tmp_path, searchpath, "runtime=ray", f"ray_address={address}")
    assert set(read_results(tmp_path / "results").column("ray").to_pylist()) == {True}


@pytest.mark.parametrize("overrides, loaders", [
    (["experiment=samba", "dataset=synthetic", "arms=3", "horizon=6", "key_bits=512",
      "insecure_key_bits_ok=true"], ["ppml.experiments.samba.load_bernoulli_arms"]),
    (["experiment=private_cb", "arms=10", "dims=4", "horizon=2", "seed=3"],
     ["ppml.experiments.private_cb.load_contextual"]),
    (["experiment=linucb_ds", "dataset=synthetic", "arms=4", "dims=2", "horizon=3",
      "key_bits=512", "insecure_key_bits_ok=true"], ["ppml.experiments.linucb_ds.instance"]),
    (["experiment=masked_lark", "masked_lark.task=train", "dataset=breast_cancer", "parties=2",
      "masked_lark.epochs=1", "masked_lark.batch_size=128"],
     ["ppml.experiments.masked_lark.load_conversions",
      "ppml.protocols.masked_lark.training.load_conversions"]),
])
def test_a_run_reads_its_inputs_once_the_check_s_result_passed_on(
        tmp_path, compose_run_config, monkeypatch, overrides, loaders):
    """The input check loads the data before anything starts, and the experiment gets what it
    loaded (`registry.register`): the driver's loader runs once per run (a Masked LARK role,
    a party of its own, loads its own part in its own role)."""
    calls = []
    for path in loaders:
        module, name = path.rsplit(".", 1)
        loader = getattr(sys.modules[module], name)
        monkeypatch.setattr(sys.modules[module], name,
                            lambda *args, loader=loader, **kwargs: calls.append(1) or
                            loader(*args, **kwargs))
    run(compose_run_config(*overrides, "progress=false", f"results_dir={tmp_path}"))
    assert len(calls) == 1
