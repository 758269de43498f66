"""Benchmark: what TLS costs the links, per round, at P = 2, 3 and 5 parties.

    python -m jobs.bench_links [rounds=1000] [repeats=2] [parties=2,3,5] [results_dir=results]

P OS processes on 127.0.0.1 (one per party, as ``runtime=federated`` runs them) link up with
`ppml.runtime.links.Links` and play ``rounds`` rounds: in each, every party sends every other
party one frame of 10 uint64 (an opening of a shared 10-element array) and waits for all of
theirs.  Measured twice per setting, alternating:

* ``tls``: the links as every run uses them (mutually authenticated TLS 1.3);
* ``plain``: the same code with ``insecure_plaintext=True`` (no TLS: the baseline TLS is
  measured against; never used by a run).

Each row: the transport, P, rounds, the milliseconds per round (the slowest party's wall time
over the rounds, after 50 warm-up rounds; process start, handshakes and key agreement are not
included), and the bytes each party wrote to its sockets per round (TLS records included).
Prints a table (with TLS's time and bytes relative to plain) and writes one Parquet file;
docs/federated.md has the numbers.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing
import tempfile
import time
from pathlib import Path

import numpy as np

from jobs.cli import InputError, cases, finish, options, parse_ints, run_command
from ppml.runtime import wire
from ppml.runtime.federated import Peers, loopback
from ppml.runtime.links import Links
from ppml.runtime.mailbox import Mailbox
from ppml.runtime.tls import Identity

WARMUP = 50
SIZE = 10
TIMEOUT_S = 60.0


def party(directory: str, name: str, rounds: int, plain: bool, results) -> None:
    """One party: link up, play the rounds, report (seconds per round, bytes per round)."""
    peers = Peers.load(Path(directory) / "peers.yaml")
    identity = Identity.load(name, str(Path(directory) / f"{name}.crt"),
                             str(Path(directory) / f"{name}.key"))
    ranks = {n: r for r, n in enumerate(peers.order)}
    me = peers.parties[name]
    links = Links(identity, me.host, Mailbox(), ranks, port=me.port, insecure_plaintext=plain)
    addresses = {n: (p.host, p.port) for n, p in peers.parties.items()}
    links.connect(peers.order, addresses, peers.trust(name, peers.order), TIMEOUT_S)
    others = [n for n in peers.order if n != name]
    payload = np.arange(SIZE, dtype=np.uint64)
    try:
        for r in range(1, WARMUP + rounds + 1):
            if r == WARMUP + 1:
                start, sent = time.perf_counter(), links.bytes_sent
            frame = wire.encode_arrays(r, "open", [payload])
            for peer in others:
                links.send(peer, frame)
            links.mailbox.collect({ranks[p]: r for p in others}, TIMEOUT_S)
        results.put((name, (time.perf_counter() - start) / rounds,
                     (links.bytes_sent - sent) / rounds))
    finally:
        links.close()


def measure(parties: int, rounds: int, plain: bool) -> tuple:
    """(ms per round, bytes per round per party), the slowest party's time."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    with tempfile.TemporaryDirectory(prefix="ppml-bench-links-") as directory:
        names = [f"party-{p}" for p in range(parties)]
        loopback(Path(directory), names)
        processes = [context.Process(target=party, args=(directory, n, rounds, plain, results))
                     for n in names]
        for p in processes:
            p.start()
        try:
            got = [results.get(timeout=TIMEOUT_S + rounds) for _ in names]
        finally:
            for p in processes:
                p.join(5)
                if p.is_alive():
                    p.kill()
    return 1e3 * max(s for _, s, _ in got), float(np.mean([b for _, _, b in got]))


def main(argv=None) -> None:
    opts = options({"rounds": 1000, "repeats": 2, "parties": "2,3,5",
                    "results_dir": "results"}, argv)
    if opts["rounds"] < 1 or opts["repeats"] < 1:
        raise InputError(f"rounds and repeats must be >= 1, got rounds={opts['rounds']} "
                         f"repeats={opts['repeats']}")
    counts = parse_ints(opts["parties"], "parties")
    started_at = dt.datetime.now(dt.timezone.utc)
    rows = []
    for parties, repeat, transport in cases(
            [(p, r, t) for p in counts for r in range(opts["repeats"]) for t in ("tls", "plain")],
            "bench_links", opts):
        ms, sent = measure(parties, opts["rounds"], transport == "plain")
        rows.append({"transport": transport, "parties": parties, "repeat": repeat,
                     "rounds": opts["rounds"], "ms_per_round": ms, "bytes_per_round": sent})
    for row in rows:
        base = [r for r in rows if r["transport"] == "plain" and r["parties"] == row["parties"]
                and r["repeat"] == row["repeat"]][0]
        row["time_vs_plain"] = row["ms_per_round"] / base["ms_per_round"]
        row["bytes_vs_plain"] = row["bytes_per_round"] / base["bytes_per_round"]
    finish("bench_links", rows, opts, started_at)


if __name__ == "__main__":
    run_command(main)
