"""Benchmark: PPRL per encrypted learning step, partitioned by time (Sakuma et al., Fig. 2) on
the random walk or by observation (Fig. 3) on load balancing, against the paper's times and
against the floor.

``python -m jobs.bench_pprl [steps=200] [key_bits=1024,2048] [obfuscators=full,djn]
[workers=1,2] [selection=random,epsilon_greedy] [learner=sarsa] [partition=time|observation]
[backends=paillier,shares] [scale_bits=128] [runtimes=local,ray] [results_dir=results]`` runs
one trial of two agents per key size, kind of obfuscator, worker count, selection and runtime
(``local``, every role in this process, or ``ray``, the agents, the dealer and by observation
the world as Ray actors, each engine's seats over TLS links) (``workers`` > 1: Ray tasks fill each agent's obfuscator pools while the
steps run; ``offline_ms`` is then the time spent waiting to start them).  By time, agent 0
learns ``steps`` steps in the clear, agent 1 ``steps`` encrypted steps; by observation, one
episode of ``steps`` encrypted steps.  Each row has:

* ``online_ms`` and ``offline_ms`` per encrypted step: the run's online seconds (the steps, the
  table's first encryption, the hand-over, the final opening) and its offline seconds (the
  obfuscators, computed before each turn or episode), divided by the encrypted steps;
* ``setup_s``: the key generation (by observation, the dealer's) and the engine's set-up;
* ``estimate_s``: setup + (online + offline) x ``estimate_steps``, everything the secure run
  costs for 15,000 steps by time (one agent's turn in Table 2, the first agent's turn in the
  clear included) or 100,000 by observation (one trial of docs/pprl.md's 1,000 episodes of
  100 steps), against ``paper_s``, the paper's PPRL time for the same run (Table 2 at 1024-bit
  keys: 4,710 s with random selection, 33,600 s with epsilon-greedy; none otherwise: Table 3
  does not give its run's length), and ``speedup`` = paper / estimate (the target: >= 100);
* ``floor_ms``: the least decryption a step needs, timed here: by time one CRT decryption (the
  owner opens the masked value), by observation two threshold decryption shares (no CRT);
  ``plaintext_ms``: float64 CRL's learning step (`crl`, the leanest honest loop of the same
  algorithm: float64 Q-values where the fixed-point reference's are integers of
  ``scale_bits``), its learning seconds alone (`TrialResult.seconds`: no evaluation episode),
  timed here;
* the slowdowns against it over the run's encrypted steps: ``slowdown_online``
  (``online_ms`` / ``plaintext_ms``) and ``slowdown_total`` (everything the run costs:
  ``setup_s`` + (``online_ms`` + ``offline_ms``) x ``steps``, against ``plaintext_ms`` x
  ``steps``); the shares backend's online time holds its dealer material, so its two are
  equal;
* ``comparisons``: the private greedy selections of the run (`greedy`);
* the online step's parts, per step: ``division_ms`` and ``comparison_ms`` (the private
  divisions and greedy selections, each with its encryptions, decryptions and engine rounds),
  ``encryption_ms`` and ``decryption_ms`` (all of them, wherever made); the rest of
  ``online_ms`` is the homomorphic arithmetic, the hand-over, the first table's encryption and
  the final opening, and the messages between the roles (in this process: hand-overs between
  threads);
* with ``backends=...,shares`` (``scale_bits`` must then leave |K dQ| < 2^62: 40 by time, 30
  by observation, whose global reward is larger): one ``backend=shares`` row per selection, everything its run costs per step (the
  engine's dealer material included) with ``rounds_per_step``, and on each Paillier row
  ``shares_speedup``, its online + offline step over the shares step of the same selection,
  measured in the same run;
* ``q_equal_reference``: the decrypted table equals the reference's.

Prints the table and writes one Parquet file; the numbers are in docs/pprl.md.
"""

from __future__ import annotations

import datetime as dt
from contextlib import nullcontext

from jobs.bench_paillier import median_time
from jobs.cli import InputError, cases, finish, options, parse_ints, run_command
from ppml.crypto.paillier import ObfuscatorPool, generate_keypair
from ppml.crypto.paillier.threshold import deal
from ppml.experiments.slowdown import slowdowns
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.observation import run_observation_protocol
from ppml.protocols.pprl.protocol import run_time_protocol
from ppml.protocols.pprl.reference import run_observation_partitioned, run_time_partitioned
from ppml.protocols.pprl.shares_observation import run_shares_observation
from ppml.protocols.pprl.shares_time import run_shares_protocol
from ppml.runtime import cluster

PAPER_S = {"random": 4.71e3, "epsilon_greedy": 3.36e4}
"""Table 2, PPRL/rnd. and PPRL/eps-greedy: 15,000 encrypted steps (B's turn) at 1024 bits."""
TABLE_2_STEPS = 15_000
TRIAL_STEPS = 100_000
"""One load-balancing trial as docs/pprl.md runs it: 1,000 episodes of 100 steps."""
DEFAULTS = {"steps": 200, "key_bits": "1024,2048", "obfuscators": "full,djn", "workers": "1",
            "selection": "random", "learner": "sarsa", "partition": "time",
            "backends": "paillier", "scale_bits": 128, "runtimes": "local",
            "results_dir": "results"}

SHOWN = ["backend", "selection", ("key_bits", "bits"), ("obfuscator", "obfusc."),
         ("online_ms", "on. ms"), ("offline_ms", "off. ms"), "estimate_s",
         ("speedup", "x Table 2"), ("slowdown_total", "slowdown"), ("q_equal_reference", "Q exact")]
"""The printed table: how fast (a step, the estimate and its speedup over Table 2's time, the
whole run against float64 CRL), did it work (Q exact); workers, paper_s and the parts of a step
are in the Parquet file."""


def decryption_ms(key_bits: int) -> float:
    """One CRT decryption at ``key_bits``, in milliseconds (median of 5)."""
    public_key, private_key = generate_keypair(key_bits, insecure_key_bits_ok=True)
    ciphertext = public_key.encrypt_raw([12345], ObfuscatorPool(public_key, 1).take(1))
    return 1e3 * median_time(lambda: private_key.decrypt_raw(ciphertext), 5, warmup=True)


def threshold_share_ms(key_bits: int) -> float:
    """One agent's decryption share under a 2-agent threshold key (no CRT), in ms."""
    public_key, private_key = generate_keypair(key_bits, insecure_key_bits_ok=True)
    share = deal(private_key, 2)[0]
    ciphertext = public_key.encrypt_raw([12345], ObfuscatorPool(public_key, 1).take(1))
    return 1e3 * median_time(lambda: share.partial_decrypt(ciphertext), 5, warmup=True)


def setting(steps: int, partition: str, **choices) -> tuple:
    """(options, by_time) of one measured run: by time the random walk, ``steps`` encrypted
    steps after as many in the clear; by observation load balancing, one episode of
    ``steps``."""
    by_time = partition == "time"
    return PPRLOptions(task="random_walk" if by_time else "load_balancing",
                       partition=partition, steps_per_agent=steps, episodes=1,
                       episode_steps=steps, methods=["pprl"], **choices), by_time


def plaintext_ms(options_: PPRLOptions, steps: int, by_time: bool) -> float:
    """Float64 CRL's learning step, timed here: the leanest honest loop."""
    if by_time:
        result = run_time_partitioned(options_, "crl", 2, 0, 0)
    else:
        result = run_observation_partitioned(options_, "crl", 0, 0, 2)
    return 1e3 * result.seconds / ((2 if by_time else 1) * steps)


def against_plaintext(row: dict) -> dict:
    """A row's slowdowns over its ``steps`` encrypted steps: online, and with the set-up and
    the offline obfuscators."""
    seconds = row["steps"] / 1e3
    return slowdowns(row["online_ms"] * seconds,
                     row["setup_s"] + (row["online_ms"] + row["offline_ms"]) * seconds,
                     row["plaintext_ms"] * seconds)


def against_paper(options_: PPRLOptions, by_time: bool, step_ms: float, setup_s: float) -> dict:
    """The run's estimate over `TABLE_2_STEPS` or `TRIAL_STEPS` (setup and every step's
    cost), against Table 2's time where the paper gives one."""
    length = TABLE_2_STEPS if by_time else TRIAL_STEPS
    estimate = setup_s + step_ms * length / 1e3
    paper = PAPER_S.get(options_.selection) if by_time and options_.learner == "sarsa" else None
    return {"estimate_steps": length, "estimate_s": estimate, "paper_s": paper,
            "speedup": None if paper is None else paper / estimate}


def measure(steps: int, key_bits: int, obfuscator: str, partition: str, workers: int,
            selection: str, learner: str, scale_bits: int, runtime: str = "local") -> dict:
    options_, by_time = setting(steps, partition, obfuscator=obfuscator, selection=selection,
                                learner=learner, scale_bits=scale_bits)
    run = run_time_protocol if by_time else run_observation_protocol
    row = run(options_, 2, 0, 0, key_bits, insecure_key_bits_ok=True, workers=workers,
              runtime=runtime).rows[-1]
    online, offline = 1e3 * row["online_s"] / steps, 1e3 * row["offline_s"] / steps
    measured = {"task": options_.task, "partition": partition, "backend": "paillier",
                "selection": selection, "learner": learner, "scale_bits": scale_bits,
                "key_bits": key_bits, "obfuscator": obfuscator, "workers": workers,
                "runtime": runtime, "steps": steps,
                "setup_s": row["setup_s"], "online_ms": online, "offline_ms": offline,
                **against_paper(options_, by_time, online + offline, row["setup_s"]),
                "floor_ms": decryption_ms(key_bits) if by_time else
                2 * threshold_share_ms(key_bits),
                "plaintext_ms": plaintext_ms(options_, steps, by_time),
                **{f"{part}_ms": 1e3 * row[f"{part}_s"] / steps
                   for part in ("division", "comparison", "encryption", "decryption")},
                "encryptions": row["encryptions"], "decryptions": row["decryptions"],
                "comparisons": row["comparisons"],
                "q_equal_reference": row["q_equal_reference"]}
    return {**measured, **against_plaintext(measured)}


def measure_shares(steps: int, partition: str, selection: str, learner: str,
                   scale_bits: int) -> dict:
    """The shares backend's step: everything in the run's seconds (the engine's dealer
    material is made during it), divided by the shared steps."""
    options_, by_time = setting(steps, partition, selection=selection, learner=learner,
                                scale_bits=scale_bits, backend="shares")
    run = run_shares_protocol if by_time else run_shares_observation
    row = run(options_, 2, 0, 0).rows[-1]
    online = 1e3 * row["online_s"] / steps
    measured = {"task": options_.task, "partition": partition, "backend": "shares",
                "selection": selection, "learner": learner, "scale_bits": scale_bits,
                "steps": steps, "setup_s": 0.0, "online_ms": online, "offline_ms": 0.0,
                **against_paper(options_, by_time, online, 0.0),
                "plaintext_ms": plaintext_ms(options_, steps, by_time),
                "rounds_per_step": row["rounds"] / steps,
                "comparisons": row["comparisons"], "q_equal_reference": row["q_equal_reference"]}
    return {**measured, **against_plaintext(measured)}


def main(argv=None) -> None:
    opts = options(DEFAULTS, argv)
    if opts["steps"] < 1:
        raise InputError(f"steps must be >= 1, got {opts['steps']}")
    started_at = dt.datetime.now(dt.timezone.utc)
    workers = parse_ints(opts["workers"], "workers")
    runtimes = opts["runtimes"].split(",")
    with cluster.connected(None) if max(workers) > 1 or "ray" in runtimes else nullcontext():
        backends = opts["backends"].split(",")
        selections = opts["selection"].split(",")
        rows = [measure(opts["steps"], bits, obfuscator, opts["partition"], w, selection,
                        opts["learner"], opts["scale_bits"], runtime)
                for bits, obfuscator, w, selection, runtime in cases(
                    [(bits, obfuscator, w, selection, runtime)
                     for bits in parse_ints(opts["key_bits"], "key_bits")
                     for obfuscator in opts["obfuscators"].split(",") for w in workers
                     for selection in selections for runtime in runtimes],
                    "bench_pprl paillier", opts)] if "paillier" in backends else []
    shared = {selection: measure_shares(opts["steps"], opts["partition"], selection,
                                        opts["learner"], opts["scale_bits"])
              for selection in cases(selections, "bench_pprl shares", opts,
                                     unit="selection")} if "shares" in backends else {}
    for row in rows:                   # how much faster the shares backend's step is
        other = shared.get(row["selection"])
        row["shares_speedup"] = None if other is None else \
            (row["online_ms"] + row["offline_ms"]) / other["online_ms"]
    finish("bench_pprl", rows + list(shared.values()), opts, started_at, SHOWN)


if __name__ == "__main__":
    run_command(main)
