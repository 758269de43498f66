"""Benchmark: every family's secure run against the leanest honest plaintext loop of the same
algorithm, both measured in the same run (issue 17's report; the numbers are in
docs/performance.md).

``python -m jobs.performance [size=issue|small]
[families=private_cb,linucb_ds,samba,masked_lark,pprl] [results_dir=results]`` runs each family once, one core's worth of work in this process
(runtime=local, workers=1), with fresh keys:

* ``issue``: the sizes the issue measured (private CB: 60,000 MNIST steps, P = 2, 10 arms,
  D = 20; LinUCB-DS: MovieLens K = 15, d = 3, N = 1,000; Samba: MovieLens K = 100, N = 5,000,
  UCB; Masked LARK: one epoch of training on MovieLens, batches of 64; PPRL: 200 encrypted
  steps of SARSA on the random walk, partitioned by time, DJN obfuscators), 2048-bit Paillier
  keys; needs ``PPML_DATA``; about ten minutes on one core;
* ``small``: a few seconds each, on embedded or synthetic data and 1024-bit keys (what the
  tests run).

One row per family: the secure run's seconds in all (``secure_total_s``: the numerator of
``slowdown_total``, everything the run pays: dealer, pools, keys, set-up) and online
(``secure_online_s``), the plaintext loop's (``plaintext_s``), both slowdowns, the share of
decisions equal to the plaintext reference's (``agreement``), what the total counts
(``counts``) and the load average before and after.  Each family's own columns say the same in
more detail (docs/results-schema.md, "Slowdowns").  Prints the table and writes one Parquet
file.
"""

from __future__ import annotations

import datetime as dt
import os

from jobs.bench_pprl import measure as pprl_measure
from jobs.cli import InputError, cases, finish, options, run_command
from ppml.experiments.config import RunConfig
from ppml.experiments.masked_lark import training_total_s
from ppml.experiments.registry import get
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.samba.config import SambaOptions

FAMILIES = ("private_cb", "linucb_ds", "samba", "masked_lark", "pprl")
SIZES = {
    "private_cb": {"issue": {"dataset": "mnist", "horizon": 60_000},
                   "small": {"dataset": "digits", "horizon": 200}},
    "linucb_ds": {"issue": {"dataset": "movielens", "arms": 15, "dims": 3, "horizon": 1_000},
                  "small": {"dataset": "synthetic", "arms": 5, "dims": 2, "horizon": 40}},
    "samba": {"issue": {"dataset": "movielens", "arms": 100, "horizon": 5_000},
              "small": {"dataset": "synthetic", "arms": 5, "horizon": 60}},
    "masked_lark": {"issue": {"dataset": "movielens"}, "small": {"dataset": "breast_cancer"}},
    "pprl": {"issue": {"steps": 200}, "small": {"steps": 4}},
}
"""Each family's size per ``size`` option (its run config keys; PPRL its encrypted steps)."""
KEY_BITS = {"issue": 2048, "small": 1024}
DEFAULTS = {"size": "issue", "families": ",".join(FAMILIES), "results_dir": "results"}
SHOWN = ["family", "setting", ("secure_total_s", "secure s"), ("secure_online_s", "online s"),
         ("plaintext_s", "plaintext s"), ("slowdown_online", "online x"),
         ("slowdown_total", "total x"), "agreement", ("load_before", "load")]
COUNTS = {
    "private_cb": "wall_s: the engine's set-up, the online steps and the dealer's material; "
                  "plaintext: the lean float64 loop (median of 5)",
    "linucb_ds": "keygen_s + wall_s: the roles' Paillier keys, P's obfuscator pool and the "
                 "rounds; plaintext: the lean loop of rank-one updates (median of 5)",
    "samba": "wall_s: DC's key generation, the DOs' offline obfuscators, every step; "
             "plaintext: the reference with the same draws (median of 5)",
    "masked_lark": "the helpers' whole program: label shares, engine set-up, the steps; "
                   "plaintext: float64 training on the true labels' gradients",
    "pprl": "keys and set-up, then every step's online work and its obfuscators; "
            "plaintext: float64 CRL's learning loop",
}


def _config(opts: dict, family: str, **keys) -> RunConfig:
    return RunConfig(experiment=family, key_bits=KEY_BITS[opts["size"]],
                     insecure_key_bits_ok=True, progress=False, results_dir=opts["results_dir"],
                     **keys)


def private_cb(opts: dict, size: dict) -> dict:
    config = _config(opts, "private_cb", parties=2, arms=10, dims=20, **size)
    s = get("private_cb")(config).summary
    return {"setting": f"{size['dataset']}, T = {size['horizon']:,}, P = 2, |A| = 10, D = 20",
            "secure_total_s": s["wall_s"], "secure_online_s": s["online_s"],
            "plaintext_s": s["plaintext_lean_s"], "agreement": s["arm_agreement"]}


def linucb_ds(opts: dict, size: dict) -> dict:
    s = get("linucb_ds")(_config(opts, "linucb_ds", **size)).summary
    return {"setting": f"{size['dataset']}, K = {size['arms']}, d = {size['dims']}, "
                       f"N = {size['horizon']:,}",
            "secure_total_s": s["keygen_s"] + s["wall_s"], "secure_online_s": s["online_s"],
            "plaintext_s": s["plaintext_lean_s"], "agreement": s["arm_agreement"]}


def samba(opts: dict, size: dict) -> dict:
    config = _config(opts, "samba", samba=SambaOptions(algorithm="ucb"), **size)
    s = get("samba")(config).summary
    return {"setting": f"{size['dataset']}, K = {size['arms']}, N = {size['horizon']:,}, UCB",
            "secure_total_s": s["wall_s"], "secure_online_s": s["wall_s"] - s["setup_s"],
            "plaintext_s": s["plaintext_wall_s"], "agreement": s["arm_agreement"]}


def masked_lark(opts: dict, size: dict) -> dict:
    options_ = MaskedLarkOptions(task="train", epochs=1, batch_size=64)
    s = get("masked_lark")(_config(opts, "masked_lark", masked_lark=options_, **size)).summary
    return {"setting": f"{size['dataset']}, one epoch, batches of 64, two helpers",
            "secure_total_s": training_total_s(s),
            "secure_online_s": s["train_s"], "plaintext_s": s["plaintext_train_s"],
            "agreement": s["gradient_equal_plaintext_steps"] / s["steps"]}


def pprl(opts: dict, size: dict) -> dict:
    key_bits = KEY_BITS[opts["size"]]
    row = pprl_measure(size["steps"], key_bits, "djn", "time", 1, "random", "sarsa", 128)
    seconds = row["steps"] / 1e3
    return {"setting": f"random walk by time, SARSA, random selection, {size['steps']} "
                       f"encrypted steps",
            "secure_total_s": row["setup_s"] + (row["online_ms"] + row["offline_ms"]) * seconds,
            "secure_online_s": row["online_ms"] * seconds,
            "plaintext_s": row["plaintext_ms"] * seconds,
            "agreement": float(row["q_equal_reference"])}


MEASURES = {"private_cb": private_cb, "linucb_ds": linucb_ds, "samba": samba,
            "masked_lark": masked_lark, "pprl": pprl}


def measure(opts: dict, family: str) -> dict:
    load_before = os.getloadavg()[0]
    row = MEASURES[family](opts, SIZES[family][opts["size"]])
    return {"family": family, **row,
            "slowdown_online": row["secure_online_s"] / row["plaintext_s"],
            "slowdown_total": row["secure_total_s"] / row["plaintext_s"],
            "key_bits": KEY_BITS[opts["size"]], "counts": COUNTS[family],
            "load_before": load_before, "load_after": os.getloadavg()[0]}


def main(argv=None) -> None:
    opts = options(DEFAULTS, argv)
    if opts["size"] not in KEY_BITS:
        raise InputError(f"size must be one of {', '.join(KEY_BITS)}, got {opts['size']!r}")
    families = opts["families"].split(",")
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise InputError(f"families must be among {', '.join(FAMILIES)}, got {unknown}")
    started_at = dt.datetime.now(dt.timezone.utc)
    rows = [measure(opts, family) for family in cases(families, "performance", opts,
                                                      unit="family")]
    finish("performance", rows, opts, started_at, SHOWN)


if __name__ == "__main__":
    run_command(main)
