"""Benchmark: exact uint64 matrix products, numpy's integer loop against 16-bit limbs on BLAS.

``python -m jobs.bench_matmul [sizes=32,64,128,256,512,1024] [results_dir=results]`` times
n x n products for each n in ``sizes``, with the float64 BLAS product as the plaintext baseline
measured in the same run, prints the table and writes one Parquet file.
ppml.mpc.ring.LIMB_MATMUL_MIN_WORK is chosen from these numbers (docs/mpc.md).
"""

import datetime as dt
import time

import numpy as np

from jobs.cli import cases, finish, options, parse_ints, run_command
from ppml.mpc import ring


def best_of(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(n: int, rng) -> dict:
    a = rng.integers(0, 2**64, (n, n), dtype=np.uint64, endpoint=False)
    b = rng.integers(0, 2**64, (n, n), dtype=np.uint64, endpoint=False)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    old = ring.LIMB_MATMUL_MIN_WORK
    ring.LIMB_MATMUL_MIN_WORK = 1
    try:
        limbs = best_of(lambda: ring.matmul(a[None], b[None]))
    finally:
        ring.LIMB_MATMUL_MIN_WORK = old
    integer = best_of(lambda: np.matmul(a, b))
    float64 = best_of(lambda: fa @ fb)
    return {"size": n, "integer_s": integer, "limbs_s": limbs, "plaintext_s": float64,
            "speedup": integer / limbs, "slowdown": limbs / float64}


def main(argv=None) -> None:
    opts = options({"sizes": "32,64,128,256,512,1024", "results_dir": "results"}, argv)
    sizes = parse_ints(opts["sizes"], "sizes")
    started_at = dt.datetime.now(dt.timezone.utc)
    rng = np.random.default_rng(0)
    rows = [measure(n, rng) for n in cases(sizes, "bench_matmul", opts, unit="size")]
    finish("bench_matmul", rows, opts, started_at)


if __name__ == "__main__":
    run_command(main)
