"""The README's command lines, who runs each, and how the tests run them.

Every command line in the README's ```bash blocks (a line ending in a backslash continues on
the next; ``a && b`` is two commands) belongs to the longest prefix below that it starts with:
either a test file in `RUN_BY`, which runs those lines with ``readme_commands(prefix)`` at a
small size, or `NOT_RUNNABLE`, with the reason it cannot run here.  tests/jobs/test_readme.py
fails on a line that belongs to neither, and on a runner that does not call
``readme_commands`` with its prefix, so a command added to the README is run or explained.
"""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"

RUN_BY = {
    "python -m jobs.run": "tests/jobs/test_run_commands.py",
    "python -m jobs.run experiment=private_cb horizon=1797 checkpoint":
        "tests/jobs/test_checkpoint_commands.py",
    "python -m jobs.run experiment=pprl": "tests/jobs/test_pprl_commands.py",
    "python -m jobs.run -m hydra/launcher=ray": "tests/hydra_plugins/test_ppml_ray_launcher.py",
    "python -m jobs.run experiment=masked_lark": "tests/jobs/test_masked_lark_commands.py",
    "python -m jobs.federated_local": "tests/jobs/test_federated_commands.py",
    "python -m jobs.peers": "tests/jobs/test_federated_commands.py",
    "python -m jobs.party": "tests/jobs/test_federated_commands.py",
    "python -m jobs.bench_": "tests/jobs/test_bench_commands.py",
    "python -m jobs.report": "tests/jobs/test_report.py",
    "python -m jobs.performance": "tests/jobs/test_performance.py",
    "python -m jobs.data": "tests/jobs/test_data.py",
    "python -m jobs.ray_tls": "tests/test_cluster_yaml.py",
}
"""README line prefix -> the test file that runs the lines it owns."""

NOT_RUNNABLE = {
    "pip install": "installs into the environment; the tests run in the one it made",
    "pytest": "the test command: it is what runs these tests",
    "export PPML_DATA=": "sets the shell's PPML_DATA, which the tests are given",
    "ray get-auth-token": "writes the operator's own Ray token into ~/.ray",
    "ray up": "starts a cloud cluster (AWS)",
    "ray dashboard": "forwards a cloud cluster's dashboard",
    "RAY_AUTH_MODE=token ray job submit": "submits a job to a cloud cluster",
    "ray rsync-down": "copies files from a cloud cluster",
}
"""README line prefix -> why its lines cannot run in a test."""


def command_lines() -> list:
    """Every command in the README's ```bash blocks, one string each: continued lines joined,
    ``a && b`` split in two."""
    commands, in_bash = [], False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            in_bash = line == "```bash"
        elif in_bash and commands and commands[-1].endswith("\\"):
            commands[-1] = commands[-1][:-1].rstrip() + " " + line.strip()
        elif in_bash and line.strip():
            commands.append(line.strip())
    return [part.strip() for command in commands for part in command.split(" && ")]


def owner(command: str):
    """The longest prefix of `RUN_BY` or `NOT_RUNNABLE` that ``command`` starts with (None if
    none does)."""
    prefixes = [p for p in (*RUN_BY, *NOT_RUNNABLE) if command.startswith(p)]
    return max(prefixes, key=len, default=None)


def readme_commands(prefix: str) -> list:
    """The README's commands that ``prefix`` owns (it must be a `RUN_BY` prefix), split into
    arguments as the shell splits them (a trailing ``# comment`` dropped)."""
    if prefix not in RUN_BY:
        raise KeyError(f"{prefix!r} is not a RUN_BY prefix in tests/jobs/readme.py")
    return [shlex.split(c, comments=True) for c in command_lines() if owner(c) == prefix]


def is_sweep(command: list) -> bool:
    """Whether a ``python -m <job> ...`` command is a Hydra multirun (``-m`` after the job)."""
    return "-m" in command[3:] or "--multirun" in command[3:]


def smaller_sweep(command: list) -> list:
    """Overrides that cut a sweep to at most two jobs: its first swept key keeps its first two
    values, every other swept key its first value."""
    if not is_sweep(command):
        return []
    swept = [arg.partition("=") for arg in command[3:]
             if "," in arg.partition("=")[2] and not arg.partition("=")[2].startswith("[")]
    return [f"{key}={','.join(values.split(',')[:2 if i == 0 else 1])}"
            for i, (key, _, values) in enumerate(swept)]


def value(command: list, key: str, default=None):
    """The value ``command`` gives ``key`` (``default`` if it gives none)."""
    return next((a.partition("=")[2] for a in command if a.startswith(f"{key}=")), default)


def starts_ray(command: list, always: set = frozenset()) -> bool:
    """Whether ``command`` starts Ray: its job is in ``always``, or it says ``runtime=ray`` or
    more than one worker."""
    return command[2] in always or value(command, "runtime") == "ray" or any(
        int(w) > 1 for w in value(command, "workers", "1").split(","))


def marked(command: list, ray: bool, spawns: bool = False, shown: slice = slice(3, 6)):
    """``command`` as a test case named by its arguments ``shown`` ("default" if none): slow
    and marked ``ray`` where it starts Ray (some 10 s on 2 cores), slow where it ``spawns`` OS
    processes."""
    marks = [pytest.mark.slow] if spawns else [pytest.mark.slow, pytest.mark.ray] if ray else []
    return pytest.param(command, marks=marks, id=" ".join(command[shown]) or "default")


def run_command(command: list, extra: list = (), cwd=REPO, timeout: int = 300,
                env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run a ``python -m ...`` command (a README's, as written) plus ``extra`` arguments, in a
    child process with this checkout first on its path and ``env``'s variables changed (None:
    unset); with ``check``, the test fails with its output if the command fails."""
    changed = {**child_env(), **(env or {})}
    done = subprocess.run([sys.executable, *command[1:], *extra], cwd=cwd,
                          env={k: v for k, v in changed.items() if v is not None},
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0 or not check, done.stdout[-1000:] + done.stderr[-2000:]
    return done


def child_env() -> dict:
    """This process's environment with this checkout first on PYTHONPATH (a child process's)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}


def run_small(command: list, small: list, results_dir) -> Path:
    """Run a README ``python -m jobs.run ...`` command as written plus the ``small`` overrides
    into ``results_dir``; the one Parquet file it wrote."""
    run_command(command, [*small, f"results_dir={results_dir}"])
    (path,) = Path(results_dir).glob("*.parquet")
    return path

