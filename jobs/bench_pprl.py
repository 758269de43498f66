"""Benchmark: PPRL partitioned by time (Sakuma et al., Fig. 2) per encrypted learning step,
against the paper's times and against its floor.

``python -m jobs.bench_pprl [steps=200] [key_bits=1024,2048] [obfuscators=full,djn]
[workers=1,2] [selection=random,epsilon_greedy] [learner=sarsa] [task=random_walk]
[results_dir=results]`` runs one trial of two agents per key size, kind of obfuscator, worker
count and selection (``workers`` > 1: Ray tasks fill each agent's
obfuscator pools while the steps run; ``offline_ms`` is then the time spent waiting to start
them): agent 0 learns ``steps`` steps in the clear, agent 1 ``steps`` encrypted steps.
Each row has:

* ``online_ms`` and ``offline_ms`` per encrypted step: the run's online seconds (the steps, the
  first agent's table encryption, the hand-over, the final opening) and its offline seconds
  (each turn's obfuscators, computed before it), divided by the encrypted steps;
* ``setup_s``: the agents' key generation and the engine's set-up, once a run;
* ``estimate_15000_s``: setup + (online + offline) x 15,000, everything the secure run costs
  for the length of one agent's turn in Table 2 (the first agent's turn in the clear included),
  against ``paper_s``, the paper's PPRL time for the same run (Table 2 at 1024-bit keys:
  4,710 s with random selection, 33,600 s with epsilon-greedy; none for greedy), and
  ``speedup`` = paper / estimate (the issue's target: >= 100);
* ``floor_ms``: one CRT decryption of the run's key size, the least an encrypted step costs
  (the owner must open the masked value), timed here; ``plaintext_ms``: the fixed-point
  reference's step (`crl_fixed`, the leanest honest loop of the same algorithm), timed here;
* ``comparisons``: the private greedy selections of the run (`greedy`);
* ``q_equal_reference``: the decrypted table equals the reference's.

Prints the table and writes one Parquet file; the numbers are in docs/pprl.md.
"""

from __future__ import annotations

import datetime as dt
import time
from contextlib import nullcontext

from jobs.bench_paillier import median_time
from jobs.cli import finish, options
from ppml.crypto.paillier import ObfuscatorPool, generate_keypair
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.protocol import run_time_protocol
from ppml.protocols.pprl.reference import run_time_partitioned
from ppml.runtime import cluster

PAPER_S = {"random": 4.71e3, "epsilon_greedy": 3.36e4}
"""Table 2, PPRL/rnd. and PPRL/eps-greedy: 15,000 encrypted steps (B's turn) at 1024 bits."""
TABLE_2_STEPS = 15_000
DEFAULTS = {"steps": 200, "key_bits": "1024,2048", "obfuscators": "full,djn", "workers": "1",
            "selection": "random", "learner": "sarsa", "task": "random_walk",
            "results_dir": "results"}


def decryption_ms(key_bits: int) -> float:
    """One CRT decryption at ``key_bits``, in milliseconds (median of 5)."""
    public_key, private_key = generate_keypair(key_bits, insecure_key_bits_ok=True)
    ciphertext = public_key.encrypt_raw([12345], ObfuscatorPool(public_key, 1).take(1))
    return 1e3 * median_time(lambda: private_key.decrypt_raw(ciphertext), 5, warmup=True)


def measure(steps: int, key_bits: int, obfuscator: str, task: str, workers: int,
            selection: str, learner: str) -> dict:
    options_ = PPRLOptions(task=task, steps_per_agent=steps, methods=["pprl"],
                           obfuscator=obfuscator, selection=selection, learner=learner)
    row = run_time_protocol(options_, 2, 0, 0, key_bits, insecure_key_bits_ok=True,
                            workers=workers).rows[0]
    start = time.perf_counter()
    run_time_partitioned(options_, "crl_fixed", 2, 0, 0)
    plaintext_ms = 1e3 * (time.perf_counter() - start) / (2 * steps)
    online, offline = 1e3 * row["online_s"] / steps, 1e3 * row["offline_s"] / steps
    estimate = row["setup_s"] + (online + offline) * TABLE_2_STEPS / 1e3
    paper = PAPER_S.get(selection) if learner == "sarsa" else None
    return {"task": task, "selection": selection, "learner": learner, "key_bits": key_bits,
            "obfuscator": obfuscator, "workers": workers, "steps": steps,
            "setup_s": row["setup_s"], "online_ms": online, "offline_ms": offline,
            "estimate_15000_s": estimate,
            "paper_s": paper, "speedup": None if paper is None else paper / estimate,
            "floor_ms": decryption_ms(key_bits), "plaintext_ms": plaintext_ms,
            "encryptions": row["encryptions"], "decryptions": row["decryptions"],
            "comparisons": row["comparisons"],
            "q_equal_reference": row["q_equal_reference"]}


def main(argv=None) -> None:
    opts = options(DEFAULTS, argv)
    if opts["steps"] < 1:
        raise SystemExit("steps must be >= 1")
    started_at = dt.datetime.now(dt.timezone.utc)
    workers = [int(w) for w in str(opts["workers"]).split(",")]
    with cluster.connected(None) if max(workers) > 1 else nullcontext():
        rows = [measure(opts["steps"], int(bits), obfuscator, opts["task"], w, selection,
                        opts["learner"])
                for bits in str(opts["key_bits"]).split(",")
                for obfuscator in opts["obfuscators"].split(",") for w in workers
                for selection in opts["selection"].split(",")]
    finish("bench_pprl", rows, opts["results_dir"], started_at)


if __name__ == "__main__":
    main()
