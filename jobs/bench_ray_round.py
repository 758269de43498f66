"""Benchmark: per-round latency of the local and the Ray runtime at P = 2 and 3.

    python -m jobs.bench_ray_round [rounds=200] [results_dir=results]

Each measurement opens a 10-element shared array ``rounds`` times (one round each) and divides
the wall time of that loop, measured inside the program, by ``rounds``; actor start-up and key
setup are not included.  Two rows per party count:

* ``local``: all parties in one process (LocalComm), for reference;
* ``ray``: the Ray runtime (party actors exchanging over their TCP links).

The transport the links replaced (Ray actor calls into the peers' mailboxes) is measured in
docs/ray-runtime.md; it is no longer part of the benchmark, which uses only ppml's runtime.

Prints a table and writes one Parquet file (columns runtime, parties, rounds,
ms_per_round) to the results folder.
"""

from __future__ import annotations

import datetime as dt
import functools
import time

import numpy as np

from jobs.cli import InputError, cases, finish, options, run_command
from ppml.mpc.ring import ARITHMETIC
from ppml.runtime import cluster, spmd

PARTIES = (2, 3)
SIZE = 10


def open_repeatedly(ctx, rounds: int, x=None):
    """Share party 0's array, then open it ``rounds`` times; seconds per opening."""
    shared = ctx.share(x, 0, shape=(SIZE,))
    start = time.perf_counter()
    for _ in range(rounds):
        ctx.open([shared.data], ARITHMETIC)
    return (time.perf_counter() - start) / rounds


def measure(runtime: str, parties: int, rounds: int) -> float:
    """Seconds per round, the slowest party's."""
    inputs = {0: {"x": np.arange(SIZE, dtype=np.float64)}}
    return max(spmd.run(functools.partial(open_repeatedly, rounds=rounds), parties,
                       runtime=runtime, inputs=inputs))


def main(argv=None) -> None:
    opts = options({"rounds": 200, "results_dir": "results"}, argv)
    if opts["rounds"] < 1:
        raise InputError(f"rounds must be >= 1, got {opts['rounds']}")
    started_at = dt.datetime.now(dt.timezone.utc)
    with cluster.connected(dashboard=False):
        rows = [{"runtime": runtime, "parties": parties, "rounds": opts["rounds"],
                 "ms_per_round": 1e3 * measure(runtime, parties, opts["rounds"])}
                for runtime, parties in cases([(runtime, parties) for runtime in ("local", "ray")
                                               for parties in PARTIES], "bench_ray_round", opts)]
    finish("bench_ray_round", rows, opts, started_at)


if __name__ == "__main__":
    run_command(main)
