"""Benchmark: the secure argmax's two methods, pairwise and tournament, against the number of values.

``python -m jobs.bench_argmax [results_dir=results] [arms=10,100,1000,10000] [max_gb=4.0]``: one
argmax over one row of A values at P = 2 (local runtime, L = 20) per method and size, each in a
fresh process: online rounds, bytes party 0 sent, online and offline (dealer) seconds, and the
peak memory the argmax added to the process (``ru_maxrss``).  A size whose peak, extrapolated
quadratically from the method's previous size, would exceed ``max_gb`` is skipped and said so.
Prints the table and writes one Parquet file; the numbers and the crossover of ``auto`` are in
docs/mpc.md.
"""

import datetime as dt
import multiprocessing
import resource
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import ppml.mpc as mpc
from jobs.cli import cases, finish, options, parse_ints, run_command

METHODS = ("pairwise", "tournament")


def measure(method: str, arms: int) -> dict:
    """One argmax over ``arms`` values in this process: its cost, time and added peak memory."""
    ctx = mpc.local_context(2, seed=0)
    x = ctx.share(np.random.default_rng(0).uniform(-1, 1, arms), owner=0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    mpc.argmax(x, method=method)
    wall = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    cost = ctx.comm.stats[0].by_op["argmax"]
    offline = ctx.store.offline_seconds
    return {"method": method, "arms": arms, "rounds": cost["rounds"],
            "bytes_per_party": cost["bytes_sent"], "online_s": wall - offline,
            "offline_s": offline, "peak_mb": peak_kb / 1024}


def in_fresh_process(method: str, arms: int) -> dict:
    """`measure` in a new interpreter, so that its peak memory is the argmax's alone."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(measure, method, arms).result()


def method_rows(method: str, sizes: list, max_gb: float) -> list:
    """``method``'s rows over increasing ``sizes``, up to the first whose estimate is too big."""
    rows = []
    for arms in sorted(sizes):
        if rows:
            estimate = rows[-1]["peak_mb"] * (arms / rows[-1]["arms"]) ** 2 / 1024
            if estimate > max_gb:
                print(f"{method} at {arms} values skipped: estimated peak {estimate:.1f} GB "
                      f"> max_gb={max_gb}")
                break
        rows.append(in_fresh_process(method, arms))
    return rows


def main(argv=None) -> None:
    opts = options({"results_dir": "results", "arms": "10,100,1000,10000", "max_gb": 4.0}, argv)
    started_at = dt.datetime.now(dt.timezone.utc)
    sizes = parse_ints(opts["arms"], "arms")
    rows = [row for method in cases(METHODS, "bench_argmax", opts, unit="method")
            for row in method_rows(method, sizes, opts["max_gb"])]
    finish("bench_argmax", rows, opts, started_at)


if __name__ == "__main__":
    run_command(main)
