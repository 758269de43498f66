"""Benchmark: Masked LARK against its targets (docs/masked-lark.md).

``python -m jobs.bench_masked_lark [reports=100000] [d=8] [helpers=2] [runs=local:1,ray:2]
[train=movielens] [epochs=1] [batch_size=64] [results_dir=results]`` measures, in one run:

* ``part=aggregate``, once per runtime and number of workers in ``runs``: ``reports`` browsers'
  reports of ``d`` coordinates (the synthetic log, k = 10, epsilon = 1) made (Ray tasks with
  workers > 1), reduced by ``helpers`` helpers and released: ``generation_s``, each helper phase
  (``helper_upload_s``: waiting for the reports and receiving them; ``helper_open_s``,
  ``helper_check_s``, ``helper_aggregate_s``, ``helper_noise_s``, ``helper_release_s``; the
  slower helper's), ``helper_s`` (a helper's own work: every phase but the upload; in the
  local runtime every helper's, one after the other), ``end_to_end_s`` (roles' setup,
  generation, helpers and release: everything the run costs) against ``target_s`` (60 s at
  100,000 reports), and the floor of that work, one HPKE open per report and helper, measured
  just before each run (``floor_s``: the median of 2,000 opens times the reports, times the
  helpers in the local runtime; the median moves between 60 and 120 us on this machine from
  one minute to the next, so each run gets its own) with ``floor_ratio`` = floor_s /
  helper_s (the target: at least 0.5);
* ``part=train`` (``train`` names the dataset; empty to skip): one conversion model trained by
  ``epochs`` epochs on masked gradients with two helpers and noise, and the lean float64
  training of the same model and batches measured in the same run: ``train_s`` (the helpers'
  steps, setup excluded), ``setup_s`` (the labels' shares: once per training),
  ``protocol_s`` (the whole protocol), ``plaintext_train_s``, ``slowdown_online`` (``train_s``
  against it: the target, ``target_slowdown`` = 20, is on this one, an epoch against a
  float64 epoch) and ``slowdown_total`` (everything the training costs, set-up included;
  `ppml.experiments.masked_lark.training_slowdowns`).

The million-report run with one and two workers (the reports made by Ray tasks, each
helper's opens spread over its workers, each with its own key) is ``python -m
jobs.bench_masked_lark reports=1000000 runs=local:1,local:2 train=``.

Prints the table and writes one Parquet file; the numbers are in docs/masked-lark.md.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import time

import numpy as np

from jobs.cli import cases, finish, options, run_command
from ppml.crypto import hpke
from ppml.experiments.masked_lark import training_slowdowns
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.protocol import run_aggregation
from ppml.protocols.masked_lark.training import run_training
from ppml.runtime.cluster import ensure_ray

DEFAULTS = {"reports": 100_000, "d": 8, "helpers": 2, "runs": "local:1,ray:2",
            "train": "movielens", "epochs": 1, "batch_size": 64, "results_dir": "results"}
TARGET_S = 60.0
"""100,000 reports of d = 8 with two helpers end to end: the target (docs/masked-lark.md)."""
TARGET_SLOWDOWN = 20.0
"""A training's online slowdown (an epoch of the helpers' steps against a float64 epoch): the
target (docs/masked-lark.md)."""
FLOOR_SAMPLE = 2_000

SHOWN = ["part", "runtime", "workers", "reports", "helper_s", ("end_to_end_s", "total_s"),
         "target_s", ("floor_ratio", "x floor"), ("slowdown_total", "slowdown"),
         ("final_auc", "AUC"), ("release_equal_reference", "exact")]
"""The printed table: how fast (against the target and the HPKE floor; training's slowdown),
did it work (the release equals the reference's, the model's AUC)."""


def open_floor_us(d: int, sample: int = FLOOR_SAMPLE) -> float:
    """The median microseconds of one HPKE open of a share of d coordinates."""
    key = hpke.HpkeKey()
    recipient = hpke.public_key(key.public)
    boxes = [hpke.seal(recipient, bytes(8 * d), b"floor %d" % i) for i in range(sample)]
    times = []
    for i, box in enumerate(boxes):
        start = time.perf_counter()
        key.open(box, b"floor %d" % i)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def aggregate_row(opts: dict, runtime: str, workers: int) -> dict:
    options = MaskedLarkOptions(reports=opts["reports"], d=opts["d"], bound=1)
    floor_us = open_floor_us(opts["d"])          # just before the run: this machine's speed
    start = time.perf_counter()
    result = run_aggregation(options, opts["helpers"], data_seed=0, runtime=runtime,
                             workers=workers)
    end_to_end = time.perf_counter() - start
    s = result.summary
    held = opts["helpers"] if runtime == "local" else 1       # helpers in one process
    floor_s = floor_us * 1e-6 * s["reports_sent"] * held
    return {"part": "aggregate", "runtime": runtime, "workers": workers,
            "reports": s["reports_sent"], "d": opts["d"], "helpers": opts["helpers"],
            "generation_s": s["generation_s"],
            **{name: s[name] for name in s if name.startswith("helper_") and name != "helper_s"},
            "helper_s": s["helper_s"], "end_to_end_s": end_to_end,
            "target_s": TARGET_S if opts["reports"] == 100_000 and opts["d"] == 8 else None,
            "floor_us": floor_us, "floor_s": floor_s, "floor_ratio": floor_s / s["helper_s"],
            "release_equal_reference": s["release_equal_reference"],
            "load_before": os.getloadavg()[0]}


def train_row(opts: dict) -> dict:
    options = MaskedLarkOptions(task="train", epochs=opts["epochs"],
                                batch_size=opts["batch_size"])
    result = run_training(options, opts["train"], 2, data_seed=0)
    s = result.summary
    return {"part": "train", "runtime": "local", "workers": 1, "dataset": opts["train"],
            "epochs": opts["epochs"], "batch_size": opts["batch_size"], "steps": s["steps"],
            "setup_s": s["setup_s"], "train_s": s["train_s"], "protocol_s": s["protocol_s"],
            "plaintext_train_s": s["plaintext_train_s"], **training_slowdowns(s),
            "target_slowdown": TARGET_SLOWDOWN,
            "gradient_equal_steps": s["gradient_equal_plaintext_steps"],
            "final_auc": s["final_auc"], "plaintext_auc": s["plaintext_auc"],
            "load_before": os.getloadavg()[0]}


def main(argv=None) -> None:
    opts = options(DEFAULTS, argv)
    started_at = dt.datetime.now(dt.timezone.utc)
    rows = []
    for run in cases(opts["runs"].split(","), "bench_masked_lark", opts, unit="run"):
        runtime, _, workers = run.partition(":")
        workers = int(workers or 1)
        if runtime == "ray" or workers > 1:
            ensure_ray()
        rows.append(aggregate_row(opts, runtime, workers))
    if opts["train"]:
        rows.append(train_row(opts))
    finish("bench_masked_lark", rows, opts, started_at, SHOWN)


if __name__ == "__main__":
    run_command(main)
