"""Benchmark: LinUCB-DS against the targets and against the cost of its unavoidable operations.

``python -m jobs.bench_linucb_ds [sizes=15x3x1000,50x5x200] [key_bits=2048] [workers=1,2]
[obfuscators=full,djn] [dataset=movielens] [runtime=local] [scale_bits=28]
[results_dir=results]`` runs the linucb_ds experiment once per size KxdxN, worker count and kind
of P's obfuscators (`ObfuscatorPool`) and prints, per run:

* total, online and offline (obfuscator pool) seconds, and the seconds of steps 3.i, 3.ii, 4.i
  and the rest;
* ``keygen_s`` (the roles and their Paillier keys), ``plaintext_lean_s`` (the lean float64
  loop of the same run) and the slowdowns against it: ``slowdown_online`` (``online_s``) and
  ``slowdown_total`` (``keygen_s + wall_s``, everything the run costs);
* ``target_s``: the authors' code measured on this machine (`AUTHORS_S`) divided by 6, or the
  two-worker target (`TWO_WORKER_TARGET_S`), blank where the authors' code was not measured;
* ``floor_s``: what no implementation of this protocol avoids, at this machine's unit costs
  measured first: per round and per packed ciphertext one fresh obfuscator of the run's kind
  (the re-randomisation before Comp sees it) and one CRT decryption; ``tables_s``: the
  fixed-base table multiplications of step 3.ii (d K slot_bits / `scores.WINDOW` a round,
  an upper bound: zero digits are skipped);
* the unit costs in seconds (``unit_*``): a fresh r^n, a DJN obfuscator from its tables,
  making a DJN base (its complement of fresh r^n and its tables, once per pool), a CRT
  decryption, a multiplication mod n^2;
* the load average before and after (the machine is shared).

Prints the table and writes one Parquet file; the numbers are in docs/linucb-ds.md.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
from contextlib import nullcontext

import gmpy2

from jobs.bench_paillier import median_time
from jobs.cli import cases, finish, options, parse_ints, parse_sizes, run_columns, run_command
from ppml.protocols.linucb_ds.scores import WINDOW
from ppml.crypto.paillier import generate_keypair
from ppml.crypto.paillier.djn import COMPLEMENT_BASES, ShortExponentBase
from ppml.crypto.paillier.pool import fresh_obfuscators
from ppml.experiments.config import RunConfig
from ppml.experiments.linucb_ds import linucb_ds
from ppml.protocols.linucb_ds.config import LinUCBDSOptions
from ppml.runtime import cluster

DEFAULTS = {"sizes": "15x3x1000,50x5x200", "key_bits": 2048, "workers": "1,2",
            "obfuscators": "full,djn",
            "dataset": "movielens", "runtime": "local", "scale_bits": 28,
            "results_dir": "results"}
AUTHORS_S = {(15, 3, 1000, 2048): 121.0, (15, 3, 1000, 1024): 21.0, (50, 5, 200, 2048): 47.9}
"""The authors' code (github.com/anatole33/LinUCB-secure) measured on this machine: K = 15 as
first measured here; K = 50 on 2026-11-26, one pinned core, when K = 15 took 63.5 s (the
machine's speed drifts; docs/linucb-ds.md)."""
TWO_WORKER_TARGET_S = {(15, 3, 1000, 2048): 12.0}

SHOWN = [("arms", "K"), ("dims", "d"), ("horizon", "N"), "key_bits", "workers",
         ("linucb_ds.obfuscator", "obfuscator"), "wall_s", "online_s", "target_s", "floor_s",
         "sum_exact"]
"""The printed table: how fast (against the target and the floor), did it work (sum_exact)."""


def unit_costs(key_bits: int, repeats: int = 20) -> dict:
    """Median seconds of one r^n, one DJN obfuscator, one DJN base (its complement of fresh r^n
    and its tables, once per pool), one CRT decryption and one multiplication mod n^2 here."""
    public_key, private_key = generate_keypair(key_bits, insecure_key_bits_ok=True)
    c = gmpy2.mpz(secrets.randbelow(int(public_key.nsquare)))
    full = median_time(lambda: fresh_obfuscators(public_key, 1), repeats)
    complement = fresh_obfuscators(public_key, COMPLEMENT_BASES)
    base = ShortExponentBase(public_key, complement)
    return {"full_s": full, "djn_s": median_time(lambda: base.draw(1), repeats),
            "djn_base_s": median_time(lambda: ShortExponentBase(public_key, complement), 3)
            + COMPLEMENT_BASES * full,
            "decrypt_s": median_time(lambda: private_key.decrypt_raw([c]), repeats),
            "multiply_s": median_time(lambda: [c * c % public_key.nsquare for _ in range(1000)],
                                      repeats) / 1000}


def target(K: int, d: int, N: int, key_bits: int, workers: int) -> float | None:
    if workers >= 2 and (K, d, N, key_bits) in TWO_WORKER_TARGET_S:
        return TWO_WORKER_TARGET_S[K, d, N, key_bits]
    authors = AUTHORS_S.get((K, d, N, key_bits))
    return None if authors is None else authors / 6


def measure(opts: dict, K: int, d: int, N: int, workers: int, obfuscator: str,
            units: dict) -> dict:
    config = RunConfig(experiment="linucb_ds", arms=K, dims=d, horizon=N,
                       key_bits=opts["key_bits"], insecure_key_bits_ok=True, workers=workers,
                       dataset=opts["dataset"], runtime=opts["runtime"],
                       data_dir=os.environ.get("PPML_DATA"),
                       linucb_ds=LinUCBDSOptions(scale_bits=opts["scale_bits"],
                                                 obfuscator=obfuscator),
                       results_dir=opts["results_dir"])
    load_before = os.getloadavg()[0]
    s = linucb_ds(config).summary
    rounds, groups = N - 1, s["packed_groups"]
    return {**run_columns(config),
            "wall_s": s["wall_s"], "online_s": s["online_s"], "offline_s": s["offline_s"],
            "keygen_s": s["keygen_s"], "plaintext_lean_s": s["plaintext_lean_s"],
            "slowdown_online": s["slowdown_online"], "slowdown_total": s["slowdown_total"],
            "target_s": target(K, d, N, opts["key_bits"], workers),
            "time_3i_s": s["time_3i_s"], "time_3ii_s": s["time_3ii_s"],
            "time_4i_s": s["time_4i_s"], "time_rest_s": s["time_rest_s"],
            "floor_s": rounds * groups * (units[f"{obfuscator}_s"] + units["decrypt_s"]),
            "tables_s": rounds * d * K * s["slot_bits"] / WINDOW * units["multiply_s"],
            "slot_bits": s["slot_bits"], "groups": groups, "sum_exact": s["sum_exact"],
            "float_arm_agreement": s["float_arm_agreement"],
            "load_before": load_before, "load_after": os.getloadavg()[0],
            **{f"unit_{k}": v for k, v in units.items()}}


def main(argv=None) -> None:
    opts = options(DEFAULTS, argv)
    started_at = dt.datetime.now(dt.timezone.utc)
    workers = parse_ints(opts["workers"], "workers")
    sizes = parse_sizes(opts["sizes"], "KxdxN")
    ray_needed = max(workers) > 1
    with cluster.connected(num_cpus=max(workers), dashboard=False) if ray_needed else nullcontext():
        if ray_needed:
            cluster.warm_up(max(workers))           # start the worker processes untimed
        units = unit_costs(opts["key_bits"])
        rows = [measure(opts, K, d, N, w, obfuscator, units) for K, d, N, w, obfuscator in
                cases([(*size, w, obfuscator) for size in sizes for w in workers
                       for obfuscator in opts["obfuscators"].split(",")],
                      "bench_linucb_ds", opts)]
    finish("bench_linucb_ds", rows, opts, started_at, SHOWN)


if __name__ == "__main__":
    run_command(main)
