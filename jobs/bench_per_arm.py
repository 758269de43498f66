"""Benchmark: a party's per-arm local work of one step, in its own process against its pinned
Ray workers; the crossover sizes of `ppml.mpc.local_tasks` and LinUCB-DS's step 3.i.

``python -m jobs.bench_per_arm [cb_sizes=10x20,...,10000x100] [ds_sizes=10x20,...,1000x100]
[workers=2] [nodes=1] [repeats=3] [results_dir=results]`` times, at every size AxD:

* ``private_cb``: the local terms c + eps y + a delta of eq. 1's [A, D, D] Beaver product (the
  Sherman-Morrison update of W^-1) on one party's uint64 shares (`multiply._local_terms`, split
  by `local_tasks.split_over_arms`); ``work`` = A D^2 elements;
* ``linucb_ds``: step 3.i's per-arm coefficients C = X A^-1 G and w = X A^-1 e on P's integers
  (`protocol.score_terms`); ``work`` = K d^2.

Each in three ways, best of ``repeats``: ``in_process_s`` (``workers=1``), ``one_task_s`` (the
whole work in one Ray task pinned to the party's node while the party waits: what moving the
operands and the result through Ray's object store costs), ``split_s`` (the code's split over
``workers``: the party's process and ``workers - 1`` pinned tasks).  ``split_speedup`` =
in_process_s / split_s, ``identical``: every way gave the in-process result.

``nodes=2`` runs a local two-node Ray cluster (`cluster.two_local_nodes`: a second raylet on
this machine) with one party on each node, both working at once, each over its own workers
pinned to its own node, as two parties do in one step; the times are both parties' wall time.
The cluster is made and shut down by the benchmark.  Prints the table, the crossover of each
kind (the smallest ``work`` from which splitting paid at every larger size) and the load
average, and writes one Parquet file.  The numbers are in docs/private-cb.md ("Party-local work
as Ray tasks") and docs/linucb-ds.md ("Per-arm coefficients over the workers").
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from types import SimpleNamespace

import numpy as np

from jobs.bench_matmul import best_of
from jobs.cli import InputError, cases, finish, options, parse_ints, parse_sizes, run_command
from ppml.mpc.local_tasks import split_over_arms
from ppml.mpc.protocols.multiply import _local_terms
from ppml.mpc.ring import ARITHMETIC
from ppml.parallel import in_one_task
from ppml.protocols.linucb_ds.protocol import score_terms
from ppml.protocols.linucb_ds.reference import FixedPoint
from ppml.runtime import cluster, node_actors

DEFAULTS = {"cb_sizes": "10x20,100x20,1000x20,10000x20,100x100,1000x100,10000x100",
            "ds_sizes": "10x20,100x20,1000x20,10000x20,100x100,1000x100",
            "workers": 2, "nodes": 1, "repeats": 3, "results_dir": "results"}
KINDS = ("private_cb", "linucb_ds")
SHOWN = ["kind", ("arms", "A"), ("dims", "D"), "work", "nodes", "workers",
         ("in_process_s", "here_s"), ("one_task_s", "task_s"), "split_s",
         ("split_speedup", "speedup"), ("identical", "same")]
"""The printed table (every column is in the Parquet file)."""
SCALE_BITS = 28
"""LinUCB-DS's default public scale (`linucb_ds.scale_bits`): the integers' sizes."""
NODE_CPUS = 2
"""Logical CPUs of each node of the two-node cluster: the party's actor and one task."""
NODE_STORE_BYTES = 4 << 30
"""Object store of each node of the two-node cluster: the largest case moves 1.6 GB a call."""


class Party:
    """One party's operands of one kind and size, and its per-arm work done each way (an
    object here with ``nodes=1``, a Ray actor on its own node with ``nodes=2``)."""

    def prepare(self, kind: str, arms: int, dims: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        if kind == "private_cb":
            def words(*shape):
                return rng.integers(0, 2**64, (1, arms, *shape), dtype=np.uint64,
                                    endpoint=False)
            self.fn = functools.partial(_local_terms, ARITHMETIC.product, ARITHMETIC)
            self.args = [words(dims, 1), words(1, dims), words(dims, dims), words(dims, 1),
                         words(1, dims)]                        # a, y, c, eps, delta
            self.split = lambda w: split_over_arms(SimpleNamespace(workers=w,
                                                                   split_min_elements=1),
                                                   self.fn, self.args, (arms, dims, dims))
        else:
            fixed = FixedPoint(SCALE_BITS)
            self.fn = functools.partial(score_terms, fixed)
            self.args = [fixed.ints(rng.uniform(-1, 1, (dims, dims))),             # A^-1
                         fixed.ints(rng.uniform(-1, 1, (arms, dims)) / np.sqrt(dims)),  # X
                         fixed.ints(rng.uniform(0, 100, (dims, dims)), 2),         # G
                         fixed.ints(rng.uniform(-100, 100, dims), 3)]              # e
            self.split = lambda w: self.fn(*self.args, workers=w)
        self.reference = self.fn(*self.args)

    def run(self, way: str, workers: int) -> bool:
        """The work done ``way`` ('in_process', 'one_task', 'split'); whether it gave the
        in-process result."""
        if way == "in_process":
            out = self.fn(*self.args)
        elif way == "one_task":
            out = in_one_task(self.fn, *self.args)
        else:
            out = self.split(workers)
        return _same(out, self.reference)


def _same(out, reference) -> bool:
    if isinstance(reference, tuple):
        return all(np.array_equal(a, b) for a, b in zip(out, reference))
    return np.array_equal(out, reference)


def measure(parties: list, call, kind: str, arms: int, dims: int, workers: int,
            repeats: int) -> dict:
    """One row: every way of one kind and size, best of ``repeats``, all ``parties`` at once
    (``call(party, method, *args)`` runs them concurrently and returns their results)."""
    call(parties, "prepare", kind, arms, dims, 0)
    row = {"kind": kind, "arms": arms, "dims": dims, "work": arms * dims * dims,
           "nodes": len(parties), "workers": workers}
    identical = True
    for way in ("in_process", "one_task", "split"):
        results = []
        row[f"{way}_s"] = best_of(lambda: results.extend(call(parties, "run", way, workers)),
                                  repeats)
        identical = identical and all(results)
    row["one_task_speedup"] = row["in_process_s"] / row["one_task_s"]
    row["split_speedup"] = row["in_process_s"] / row["split_s"]
    row["identical"] = identical
    return row


def crossover(rows: list, kind: str) -> int | None:
    """The smallest ``work`` of ``kind`` from which the split was faster at every larger size
    measured (None: at none)."""
    ordered = sorted((r["work"], r["split_speedup"] > 1) for r in rows if r["kind"] == kind)
    found = None
    for work, pays in reversed(ordered):
        if not pays:
            break
        found = work
    return found


def _here(parties, method, *args):
    return [getattr(p, method)(*args) for p in parties]


def main(argv=None) -> None:
    opts = options(DEFAULTS, argv)
    sizes = {"private_cb": parse_sizes(opts["cb_sizes"], "AxD", "cb_sizes"),
             "linucb_ds": parse_sizes(opts["ds_sizes"], "KxD", "ds_sizes")}
    (workers,) = parse_ints(opts["workers"], "workers")
    if workers < 2:
        raise InputError(f"workers must be >= 2 (the split's processes), got {workers}")
    if opts["nodes"] not in (1, 2):
        raise InputError(f"nodes must be 1 or 2, got {opts['nodes']}")
    repeats = parse_ints(opts["repeats"], "repeats")[0]
    started_at = dt.datetime.now(dt.timezone.utc)
    load_before = os.getloadavg()[0]
    points = [(kind, a, d) for kind in KINDS for a, d in sizes[kind]]
    if opts["nodes"] == 1:
        with cluster.connected(dashboard=False):
            cluster.warm_up(workers)
            rows = [measure([Party()], _here, *point, workers, repeats)
                    for point in cases(points, "bench_per_arm", opts)]
    else:
        rows = on_two_nodes(points, workers, repeats, opts)
    load_after = os.getloadavg()[0]
    for row in rows:
        row.update(load_before=load_before, load_after=load_after)
    finish("bench_per_arm", rows, opts, started_at, SHOWN)
    for kind in KINDS:
        found = crossover(rows, kind)
        print(f"{kind}: the split over {workers} workers pays "
              + ("at no size measured" if found is None else f"from work = {found:,} on"))
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after")


def on_two_nodes(points: list, workers: int, repeats: int, opts: dict) -> list:
    """The rows of ``points`` with one party on each node of a two-node cluster made here
    (`cluster.two_local_nodes`; a RuntimeError if Ray already runs in this process)."""
    with cluster.two_local_nodes(NODE_CPUS, NODE_STORE_BYTES):
        parties = node_actors.one_per_node(Party, 2)
        return [measure(parties, node_actors.call_all, *point, workers, repeats)
                for point in cases(points, "bench_per_arm", opts)]


if __name__ == "__main__":
    run_command(main)
