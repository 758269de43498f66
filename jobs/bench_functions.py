"""Benchmark: accuracy of the iterative functions, reciprocal and exp, against their rounds.

``python -m jobs.bench_functions [results_dir=results]``: for the windowed reciprocal (on [1, 10]
and on [1, 5]) and for Newton's from each start value with 1 to 8 iterations, the worst relative
error over [1, 10] and over [1, 5] (the Sherman-Morrison denominators of Algorithm 1) and the
online rounds; for exp, the paper's limit
with k squarings (``iterations``) and the range-reduced exp, the worst relative error over
[-4, 2] and over [-10, 10] and the worst error relative to max(1, e^x) over [-10, 10], and the
online rounds.  P = 2, L = 20, local runtime; prints the table and writes one Parquet file.
The numbers are in docs/mpc.md.
"""

import datetime as dt

import numpy as np

import ppml.mpc as mpc
from jobs.cli import cases, finish, options, run_command


def reciprocal_rows(grid: np.ndarray) -> list:
    """Newton's reciprocal from each start value with 1 to 8 iterations, and the windowed one
    on [1, 10] and on [1, 5] (its window fitted to the domain), on ``grid`` (values of [1, 10])."""
    runs = [(f"reciprocal/newton-{start}", iterations,
             {"method": "newton", "iterations": iterations, "start": start})
            for start in ("linear", "paper") for iterations in range(1, 9)]
    runs += [(f"reciprocal/window-1-{b}", None, {"method": "window", "domain": (1.0, float(b))})
             for b in (10, 5)]
    rows = []
    for op, iterations, keys in runs:
        inside = grid <= keys.get("domain", (1.0, 10.0))[1]
        ctx = mpc.local_context(2, seed=0)
        x = ctx.share(grid[inside], owner=0)
        before = ctx.comm.stats[0].rounds
        y = x.reciprocal(**keys)
        rounds = ctx.comm.stats[0].rounds - before
        error = np.abs(y.reveal() * grid[inside] - 1)
        rows.append({"op": op, "iterations": iterations, "rounds": rounds,
                     "max_rel_error_1_10": float(error.max()) if inside.all() else None,
                     "max_rel_error_1_5": float(error[grid[inside] <= 5].max())})
    return rows


def exp_rows(grid: np.ndarray) -> list:
    """Each exp method on ``grid`` (values of [-10, 10] on the fixed-point lattice, so that the
    errors are the function's, not the input's rounding)."""
    rows = []
    core = (grid >= -4) & (grid <= 2)
    for method, squarings in [("limit", k) for k in (4, 6, 8, 10)] + [("range_reduced", None)]:
        ctx = mpc.local_context(2, seed=0)
        x = ctx.share(grid, owner=0)
        before = ctx.comm.stats[0].rounds
        y = x.exp(method, squarings)
        rounds = ctx.comm.stats[0].rounds - before
        error = np.abs(y.reveal() - np.exp(grid))
        relative = error / np.exp(grid)
        rows.append({"op": f"exp/{method}", "iterations": squarings, "rounds": rounds,
                     "max_rel_error_-4_2": float(relative[core].max()),
                     "max_rel_error_-10_10": float(relative.max()),
                     "max_scaled_error_-10_10": float(np.max(error / np.maximum(1, np.exp(grid))))})
    return rows


def main(argv=None) -> None:
    opts = options({"results_dir": "results"}, argv)
    started_at = dt.datetime.now(dt.timezone.utc)
    parts = {"reciprocal": lambda: reciprocal_rows(np.linspace(1, 10, 2001)),
             "exp": lambda: exp_rows(np.round(np.linspace(-10, 10, 4001) * 2**20) / 2**20)}
    rows = [row for part in cases(parts, "bench_functions", opts, unit="function")
            for row in parts[part]()]
    finish("bench_functions", rows, opts, started_at)


if __name__ == "__main__":
    run_command(main)
