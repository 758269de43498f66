"""Run an experiment federated on this machine: ``python -m jobs.federated_local
experiment=<name> [key=value ...]``.

The loopback convenience launcher: ``python -m jobs.run ... runtime=federated``.  It makes a
fresh certificate authority and one certificate per party, starts one OS process per party
(``python -m jobs.party``) on 127.0.0.1, waits for them, and writes the run's Parquet file as a
single-process run would.  Sweeps (``-m``) work as in ``jobs.run``.  docs/federated.md.
"""

from __future__ import annotations

import sys

from jobs import run
from jobs.cli import InputError, run_command


def main(argv: list | None = None) -> None:
    """``python -m jobs.run`` with ``argv`` (default: this command line's) and
    ``runtime=federated`` (refused if ``argv`` names another runtime)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not any(arg.startswith("runtime=") for arg in argv):
        argv = [*argv, "runtime=federated"]
    elif "runtime=federated" not in argv:
        raise InputError("jobs.federated_local runs runtime=federated only")
    run.command(argv)


if __name__ == "__main__":
    run_command(main)
