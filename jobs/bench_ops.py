"""The operations benchmark, Hannun et al.'s Table 1: ``python -m jobs.bench_ops [overrides]``.

It is ``python -m jobs.run -m experiment=bench_ops`` with the Table 1 setting as defaults
(P = 2, |A| = 100, D = 10) and both runtimes swept; any key given on the command line wins, and
``-m parties=2,3,5 arms=10,100,1000`` sweeps further.  Each run prints its table and writes one
Parquet file; ``python -m jobs.report`` draws the slowdowns.
"""

import sys

from jobs.cli import run_command
from jobs.run import command

TABLE1 = {"experiment": "bench_ops", "parties": "2", "arms": "100", "dims": "10",
          "bench.repeats": "5", "runtime": "local,ray"}
MULTIRUN = ("-m", "--multirun")


def with_defaults(argv: list) -> list:
    """``argv`` with the Table 1 defaults for the keys it does not set, as a Hydra multirun
    (the flag first, however the user placed it)."""
    given = {arg.split("=", 1)[0].lstrip("+~") for arg in argv if "=" in arg}
    defaults = [f"{key}={value}" for key, value in TABLE1.items() if key not in given]
    return ["--multirun"] + defaults + [arg for arg in argv if arg not in MULTIRUN]


if __name__ == "__main__":
    run_command(lambda: command(with_defaults(sys.argv[1:])))
