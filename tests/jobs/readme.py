"""The README's command lines, as the shell reads them, for the tests that run them."""

import shlex
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_commands(prefix: str) -> list:
    """The README's command lines that start with ``prefix`` (a line ending in a backslash
    continues on the next), split into arguments as the shell splits them (a trailing
    ``# comment`` dropped)."""
    lines, joined = README.read_text().splitlines(), []
    for line in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line.strip()
        else:
            joined.append(line)
    return [shlex.split(line, comments=True) for line in joined if line.startswith(prefix)]


def run_small(command: list, small: list, results_dir) -> Path:
    """Run a README ``python -m jobs.run ...`` command as written plus the ``small`` overrides
    into ``results_dir``; the one Parquet file it wrote (the test fails with the command's
    stderr if it fails)."""
    done = subprocess.run([sys.executable, *command[1:], *small, f"results_dir={results_dir}"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = Path(results_dir).glob("*.parquet")
    return path
