"""The README's benchmark commands (``python -m jobs.bench_...``), each as written in a child
process at a small size: the benchmark's small options appended (they win), a sweep cut to two
jobs.  Each must print its table and the Parquet file it wrote.  What the benchmarks measure is
tested beside them (tests/jobs/test_bench_*.py, tests/crypto/paillier/test_bench.py,
tests/experiments/test_linucb_ds_bench.py)."""

import re

import pytest

from tests.jobs.readme import is_sweep, readme_commands, run_command, smaller_sweep

SMALL_KEYS = ["key_bits=512"]
SMALL = {"jobs.bench_ops": ["arms=3", "dims=3", "bench.repeats=1", "progress=false"],
         "jobs.bench_functions": [],
         "jobs.bench_matmul": ["sizes=32,64"],
         "jobs.bench_ray_round": ["rounds=5"],
         "jobs.bench_links": ["rounds=5", "repeats=1", "parties=2"],
         "jobs.bench_paillier": [*SMALL_KEYS, "values=4", "dim=2", "repeats=1", "workers=1"],
         "jobs.bench_pprl": [*SMALL_KEYS, "steps=3", "obfuscators=djn"],
         "jobs.bench_masked_lark": ["reports=300", "d=3", "runs=local:1",
                                    "train=breast_cancer", "batch_size=128"],
         "jobs.bench_linucb_ds": [*SMALL_KEYS, "sizes=6x2x3", "workers=1", "dataset=synthetic"],
         "jobs.bench_samba": [*SMALL_KEYS, "sizes=3x20", "algorithms=ucb",
                              "dataset=synthetic"]}
"""What makes each benchmark small (appended, so they win over the command's own values)."""

RAY = {"jobs.bench_ray_round"}
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


def starts_ray(command: list) -> bool:
    """Whether ``command`` starts Ray (jobs.bench_ops runs Table 1 in both runtimes)."""
    return command[2] in RAY or (command[2] == "jobs.bench_ops" and not is_sweep(command))


def marked(command: list):
    """``command`` as a test case, slow where it starts Ray (some 10 s on 2 cores) or processes."""
    marks = [pytest.mark.slow, pytest.mark.ray] if starts_ray(command) else []
    if command[2] in SPAWNING:
        marks = [pytest.mark.slow]
    return pytest.param(command, marks=marks, id=" ".join(command[2:4]))


@pytest.mark.parametrize("command", [marked(c) for c in readme_commands("python -m jobs.bench_")])
def test_a_readme_benchmark_runs_as_written(tmp_path, command):
    done = run_command(command, [*small(command), f"results_dir={tmp_path}"])
    written = re.findall(r"results: (\S+\.parquet)", done.stdout)
    jobs = 2 if is_sweep(command) or command[2] == "jobs.bench_ops" else 1
    assert len(written) == jobs and sorted(written) == sorted(
        str(path) for path in tmp_path.glob("*.parquet")), done.stdout[-2000:]
