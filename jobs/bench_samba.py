"""Benchmark: Samba's running time against its targets and Fig. 8(a)/(b) (Ciucanu et al.).

``python -m jobs.bench_samba [sweep=targets] [sizes=] [algorithms=ucb,thompson]
[masks=mpc,paper] [dataset=movielens] [runtime=local] [key_bits=2048] [results_dir=results]``
runs the samba experiment (plaintext reference, protocol without cryptography, secure run; fresh
OS keys) once per algorithm, mask and size KxN.  ``sweep`` names the sizes unless ``sizes``
lists them:

* ``targets``: K = 10, N = 10^5 and K = 100, N = 5,000 (the configurations the authors' code
  was timed at) and K = 100, N = 10^5;
* ``fig8a``: K = 100, N = 50,000 ... 100,000 (time against N);
* ``fig8b``: N = 10^5, K = 10 ... 100 (time against K).

Each row has the run's dataset, runtime and key size, the three wall times, the secure run's
slowdowns against the plaintext reference (``slowdown_online``: steps 2-7; ``slowdown_total``:
the whole run, set-up included; the experiment's), its
phases (setup with DC's key generation and the DOs' offline obfuscators ``offline_s``, steps 2-5,
steps 6-7 with the K Paillier encryptions, each one multiplication online), the time per
step, the AES-GCM floor of a step measured in the same run (``aead_floor_us``: 4K AEAD calls of
the run's sizes per iteration) and the step's ratio to it (``floor_ratio``), the framing
floor (``framing_floor_us``: the same calls with fresh nonces, each sent ahead of its ciphertext
and split off to open it, the least any protocol sending these messages adds) and its ratio to
the AES-GCM floor (``framing_ratio``), the selection on shares'
rounds per step (``selection_rounds``) and the kB the Controller sent in them
(``selection_controller_kb``; Comp sends as much in every round but the last, and the dealer's
material is not counted), whether secure and plaintext agree (arms and reward),
``target_s`` where docs/samba.md sets one (mask=paper: a third of the authors' time at K = 10,
N = 10^5 and K = 100, N = 5,000, UCB's figure for the algorithms whose only iteration is
argmax, Thompson's for the others, and 180 s at K = 100, N = 10^5 for single-iteration
algorithms; mask=mpc: 180 s at K = 10, N = 10^5 and 600 s at K = 100, N = 10^5 per iteration
of a step) and the load average before and after (the machine may be shared).  Prints the table and writes one Parquet file (``jobs.report`` draws
Fig. 8(a)/(b) from it); the numbers are in docs/samba.md.
"""

from __future__ import annotations

import datetime as dt
import os

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from jobs.bench_paillier import median_time
from jobs.cli import InputError, cases, finish, options, parse_sizes, run_columns, run_command
from ppml.crypto.aead import NONCE_BYTES
from ppml.experiments.config import RunConfig
from ppml.experiments.samba import samba
from ppml.protocols.samba.config import SambaOptions
from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.protocols.samba.wire import SCORE_BYTES

SWEEPS = {
    "targets": [(10, 100_000), (100, 5_000), (100, 100_000)],
    "fig8a": [(100, n) for n in range(50_000, 100_001, 10_000)],
    "fig8b": [(k, 100_000) for k in range(10, 101, 10)],
}
AUTHORS_S = {(10, 100_000): {"argmax": 29.0, "other": 33.0},
             (100, 5_000): {"argmax": 14.0, "other": 21.0}}
"""The authors' code on this machine, one core, 2048-bit Paillier: UCB, Thompson."""
ARGMAX_ONLY = ("ucb", "eps_greedy", "eps_greedy_decreasing")
"""Algorithms whose single iteration is an argmax of deterministic scores (UCB's figure)."""
SINGLE_ITERATION_LIMIT_S = 180.0
MPC_LIMITS_S = {(10, 100_000): 180.0, (100, 100_000): 600.0}
"""mask=mpc: the time limits of one iteration a step (docs/samba.md, the targets)."""
DEFAULTS = {"sweep": "targets", "sizes": "", "algorithms": "ucb,thompson", "masks": "mpc,paper",
            "dataset": "movielens", "runtime": "local", "key_bits": 2048,
            "results_dir": "results"}

SHOWN = [("samba.algorithm", "algorithm"), ("samba.mask", "mask"), ("arms", "K"),
         ("horizon", "N"), "secure_s", "target_s", ("meets_target", "meets"), "step_us",
         ("floor_ratio", "x AES floor"), "agree"]
"""The printed table: did it work (agree), how fast (against the target and the AES-GCM floor)."""


def target(algorithm: str, arms: int, horizon: int, mask: str = "paper") -> float | None:
    """The time limit of one run (docs/samba.md), None where none is set.

    mask=paper: a third of the authors' time.  The authors' code was timed for UCB and Thompson
    only.  An algorithm of nb_A iterations a step (Pursuit: 2) runs the core nb_A times
    (Theorem 4), so its limit is nb_A times the figure of its kind: an estimate of the authors'
    time, stated as such in docs/samba.md.  mask=mpc: `MPC_LIMITS_S` per iteration.
    """
    iterations = AlgorithmSpec(algorithm).policy(arms).iterations
    if mask == "mpc":
        limit = MPC_LIMITS_S.get((arms, horizon))
        return None if limit is None else iterations * limit
    if (arms, horizon) in AUTHORS_S:
        kind = "argmax" if algorithm in ARGMAX_ONLY else "other"
        return iterations * AUTHORS_S[arms, horizon][kind] / 3
    return SINGLE_ITERATION_LIMIT_S if (arms, horizon) == (100, 100_000) and iterations == 1 \
        else None


def aead_floor_us(arms: int, iterations: int, repeats: int = 5, framed: bool = False) -> float:
    """The AES-GCM floor of one step, in microseconds: per iteration 4K AEAD calls of the run's
    sizes (K DOs seal a 16-byte score, Comp opens K, Comp seals K bits, the DOs open K), with
    associated data as long as the protocol's, timed now with the cryptography package's AESGCM
    alone (median of ``repeats``); nothing else of a step is counted.  ``framed`` adds the least
    that any protocol sending these messages does besides the calls: fresh random nonces for
    every batch, each sent as nonce || ciphertext and split again to open it (the framing
    floor, ``framing_floor_us``)."""
    aead = AESGCM(os.urandom(32))
    associated = b"samba" + bytes(2) + bytes(16) + bytes(1) + b"score" + bytes(12)
    plaintexts = [os.urandom(SCORE_BYTES) for _ in range(arms)]
    nonces = [os.urandom(NONCE_BYTES) for _ in range(arms)]
    slices = [slice(at, at + NONCE_BYTES) for at in range(0, NONCE_BYTES * arms, NONCE_BYTES)]
    encrypt, decrypt = aead.encrypt, aead.decrypt

    def bare():
        sealed = [encrypt(n, p, associated) for n, p in zip(nonces, plaintexts)]
        for n, c in zip(nonces, sealed):
            decrypt(n, c, associated)

    def framed_batch():
        fresh = list(map(os.urandom(NONCE_BYTES * arms).__getitem__, slices))
        sealed = [n + encrypt(n, p, associated) for n, p in zip(fresh, plaintexts)]
        for m in sealed:
            decrypt(m[:NONCE_BYTES], m[NONCE_BYTES:], associated)

    batch = framed_batch if framed else bare
    rounds = max(1, 2000 // arms)
    seconds = median_time(lambda: [batch() for _ in range(2 * rounds)], repeats, warmup=True)
    return 1e6 * iterations * seconds / rounds


def measure(opts: dict, algorithm: str, mask: str, arms: int, horizon: int) -> dict:
    load_before = os.getloadavg()[0]
    config = RunConfig(experiment="samba", samba=SambaOptions(algorithm=algorithm, mask=mask),
                       dataset=opts["dataset"], arms=arms, horizon=horizon,
                       runtime=opts["runtime"], key_bits=opts["key_bits"],
                       insecure_key_bits_ok=True, progress=False,
                       results_dir=opts["results_dir"])
    out = samba(config)
    s = out.summary
    limit = target(algorithm, arms, horizon, mask)
    iterations = AlgorithmSpec(algorithm).policy(arms).iterations
    floor = aead_floor_us(arms, iterations)
    framing = aead_floor_us(arms, iterations, framed=True)
    steps = max(1, horizon - arms)
    return {**run_columns(config),
            "plaintext_s": s["plaintext_wall_s"], "distributed_s": s["distributed_wall_s"],
            "secure_s": s["wall_s"], "slowdown_online": s["slowdown_online"],
            "slowdown_total": s["slowdown_total"], "target_s": limit,
            "meets_target": None if limit is None else s["wall_s"] <= limit,
            "keygen_s": s["keygen_s"], "offline_s": s["offline_s"], "setup_s": s["setup_s"],
            "steps_s": s["steps_s"],
            "end_s": s["end_s"], "step_us": 1e3 * s["step_ms"],
            "aead_floor_us": floor, "floor_ratio": 1e3 * s["step_ms"] / floor,
            "framing_floor_us": framing, "framing_ratio": framing / floor,
            "distributed_step_us": 1e3 * s["distributed_step_ms"],
            "selection_rounds": s["selection_rounds"] / steps,
            "selection_controller_kb": s["selection_bytes"] / steps / 1e3,
            "agree": s["arm_agreement"] == 1.0
            and s["secure_cumulative_reward"] == s["plaintext_cumulative_reward"],
            "load_before": load_before, "load_after": os.getloadavg()[0]}


def main(argv=None) -> None:
    opts = options(DEFAULTS, argv)
    started_at = dt.datetime.now(dt.timezone.utc)
    if opts["sizes"]:
        sizes = parse_sizes(opts["sizes"], "KxN")
    elif opts["sweep"] in SWEEPS:
        sizes = SWEEPS[opts["sweep"]]
    else:
        raise InputError(f"sweep must be one of {', '.join(SWEEPS)}, got {opts['sweep']!r}")
    rows = [measure(opts, algorithm, mask, arms, horizon) for arms, horizon, algorithm, mask in
            cases([(arms, horizon, algorithm, mask) for arms, horizon in sizes
                   for algorithm in opts["algorithms"].split(",")
                   for mask in opts["masks"].split(",")], "bench_samba", opts)]
    finish("bench_samba", rows, opts, started_at, SHOWN)


if __name__ == "__main__":
    run_command(main)
