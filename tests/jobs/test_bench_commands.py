"""The README's benchmark commands (``python -m jobs.bench_...``), each as written in a child
process at a small size: the benchmark's small options appended (they win), a sweep cut to two
jobs.  Each must print its table and the Parquet file it wrote.  What the benchmarks measure is
tested beside them (tests/jobs/test_bench_*.py, tests/crypto/paillier/test_bench.py,
tests/experiments/test_linucb_ds_bench.py)."""

import re

import pytest

from jobs.regression import SMALL_KEYS
from tests.jobs.readme import (is_sweep, marked, readme_commands, run_command, smaller_sweep,
                               starts_ray)

KEYS = SMALL_KEYS[:1]
"""Small Paillier keys: a benchmark allows them by itself (it takes no insecure_key_bits_ok)."""
SMALL = {"jobs.bench_ops": ["arms=3", "dims=3", "bench.repeats=1", "progress=false"],
         "jobs.bench_functions": [],
         "jobs.bench_matmul": ["sizes=32,64"],
         "jobs.bench_ray_round": ["rounds=5"],
         "jobs.bench_per_arm": ["cb_sizes=3x2", "ds_sizes=3x2", "repeats=1"],
         "jobs.bench_links": ["rounds=5", "repeats=1", "parties=2"],
         "jobs.bench_paillier": [*KEYS, "values=4", "dim=2", "repeats=1", "workers=1"],
         "jobs.bench_pprl": [*KEYS, "steps=3", "obfuscators=djn"],
         "jobs.bench_masked_lark": ["reports=300", "d=3", "runs=local:1",
                                    "train=breast_cancer", "batch_size=128"],
         "jobs.bench_linucb_ds": [*KEYS, "sizes=6x2x3", "workers=1", "dataset=synthetic"],
         "jobs.bench_samba": [*KEYS, "sizes=3x20", "algorithms=ucb",
                              "dataset=synthetic"]}
"""What makes each benchmark small (appended, so they win over the command's own values)."""

RAY = {"jobs.bench_ray_round", "jobs.bench_per_arm"}
"""Benchmarks that start Ray whatever their size."""
SPAWNING = {"jobs.bench_links"}
"""Benchmarks that start OS processes whatever their size (jobs.bench_links: one per party, for
each transport; some 15 s of CPU)."""


def small(command: list) -> list:
    """The overrides that make ``command`` small: a sweep of jobs.bench_ops in one runtime."""
    job = command[2]
    assert job in SMALL, f"tests/jobs/test_bench_commands.py: no SMALL for {job}"
    extra = ["runtime=local"] if job == "jobs.bench_ops" and is_sweep(command) else []
    return [*smaller_sweep(command), *SMALL[job], *extra]


def case(command: list):
    """``command`` as a test case (`marked`): jobs.bench_ops runs Table 1 in both runtimes
    unless swept."""
    ray = starts_ray(command, RAY) or (command[2] == "jobs.bench_ops" and not is_sweep(command))
    return marked(command, ray, spawns=command[2] in SPAWNING, shown=slice(2, 4))


@pytest.mark.parametrize("command", [case(c) for c in readme_commands("python -m jobs.bench_")])
def test_a_readme_benchmark_runs_as_written(tmp_path, command):
    done = run_command(command, [*small(command), f"results_dir={tmp_path}"])
    written = re.findall(r"results: (\S+\.parquet)", done.stdout)
    jobs = 2 if is_sweep(command) or command[2] == "jobs.bench_ops" else 1
    assert len(written) == jobs and sorted(written) == sorted(
        str(path) for path in tmp_path.glob("*.parquet")), done.stdout[-2000:]
