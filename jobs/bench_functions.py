"""Benchmark: accuracy of the iterative functions, reciprocal and exp, against their rounds.

``python -m jobs.bench_functions [results_dir=results]``: for each reciprocal start value and
number of Newton-Raphson iterations, the worst relative error over [1, 10] and over [1, 5] (the
Sherman-Morrison denominators of Algorithm 1) and the online rounds; for exp, the worst relative
error over [-4, 2] for k squarings.  P = 2, L = 20, local runtime; prints the table and writes one
Parquet file.  The numbers are in docs/mpc.md.
"""

import datetime as dt

import numpy as np

import ppml.mpc as mpc
from jobs.cli import cases, finish, options, run_command


def reciprocal_rows(grid: np.ndarray) -> list:
    rows = []
    for start in ("linear", "paper"):
        for iterations in range(1, 9):
            ctx = mpc.local_context(2, seed=0)
            x = ctx.share(grid, owner=0)
            before = ctx.comm.stats[0].rounds
            y = x.reciprocal(iterations=iterations, start=start)
            rounds = ctx.comm.stats[0].rounds - before
            error = np.abs(y.reveal() * grid - 1)
            rows.append({"op": f"reciprocal/{start}", "iterations": iterations, "rounds": rounds,
                         "max_rel_error_1_10": float(error.max()),
                         "max_rel_error_1_5": float(error[grid <= 5].max())})
    return rows


def exp_rows(grid: np.ndarray) -> list:
    rows = []
    for squarings in (4, 6, 8, 10):
        ctx = mpc.local_context(2, seed=0)
        x = ctx.share(grid, owner=0)
        before = ctx.comm.stats[0].rounds
        y = x.exp(squarings)
        rows.append({"op": "exp", "iterations": squarings,
                     "rounds": ctx.comm.stats[0].rounds - before,
                     "max_rel_error_-4_2": float(np.max(np.abs(y.reveal() / np.exp(grid) - 1)))})
    return rows


def main(argv=None) -> None:
    opts = options({"results_dir": "results"}, argv)
    started_at = dt.datetime.now(dt.timezone.utc)
    parts = {"reciprocal": lambda: reciprocal_rows(np.linspace(1, 10, 2001)),
             "exp": lambda: exp_rows(np.linspace(-4, 2, 2001))}
    rows = [row for part in cases(parts, "bench_functions", opts, unit="function")
            for row in parts[part]()]
    finish("bench_functions", rows, opts, started_at)


if __name__ == "__main__":
    run_command(main)
