"""Per-round latency of the runtimes at P = 2 and 3.

    python -m jobs.bench_ray_round [rounds=200] [results_dir=results]

Each measurement opens a 10-element shared array ``rounds`` times (one round each) and divides
the wall time of that loop, measured inside the program, by ``rounds``; actor start-up and key
setup are not included.  Three rows per party count:

* ``local``: all parties in one process (LocalComm), for reference;
* ``ray``: the Ray runtime (party actors exchanging over their TCP links);
* ``ray-actor-calls``: the same mailbox fed by Ray actor calls instead of the links (one call
  per peer per round, threaded actors), the transport the links replaced.

Prints a table and writes one Parquet file (columns runtime, parties, rounds,
ms_per_round) to the results folder.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import time

import numpy as np
import ray

import ppml.mpc as mpc
from jobs.cli import finish, options
from ppml.mpc.ring import ARITHMETIC
from ppml.parties.mailbox import Mailbox

PARTIES = (2, 3)
SIZE = 10


def open_repeatedly(ctx, rounds: int, x=None):
    """Share party 0's array, then open it ``rounds`` times; seconds per opening."""
    shared = ctx.share(x, 0, shape=(SIZE,))
    start = time.perf_counter()
    for _ in range(rounds):
        ctx.open([shared.data], ARITHMETIC)
    return (time.perf_counter() - start) / rounds


@ray.remote(max_concurrency=2)
class ActorCallPeer:
    """A party whose rounds travel as Ray actor calls into the peers' mailboxes."""

    def __init__(self, rank: int, parties: int):
        self.rank, self.parties = rank, parties
        self.mailbox = Mailbox()

    def deliver(self, round_: int, sender: int, pieces: list) -> None:
        self.mailbox.deliver(round_, sender, "open", pieces)

    def open_repeatedly(self, peers: list, rounds: int) -> float:
        piece = [np.arange(SIZE, dtype=np.uint64)]
        others = [p for p in range(self.parties) if p != self.rank]
        start = time.perf_counter()
        for round_ in range(1, rounds + 1):
            for p in others:
                peers[p].deliver.remote(round_, self.rank, piece)
            self.mailbox.collect(round_, others, timeout_s=60.0)
        return (time.perf_counter() - start) / rounds


def measure(runtime: str, parties: int, rounds: int) -> float:
    """Seconds per round, the slowest party's."""
    if runtime == "ray-actor-calls":
        peers = [ActorCallPeer.remote(p, parties) for p in range(parties)]
        try:
            return max(ray.get([peer.open_repeatedly.remote(peers, rounds) for peer in peers]))
        finally:
            for peer in peers:
                ray.kill(peer)
    inputs = {0: {"x": np.arange(SIZE, dtype=np.float64)}}
    return max(mpc.run(functools.partial(open_repeatedly, rounds=rounds), parties,
                       runtime=runtime, inputs=inputs))


def main(argv=None) -> None:
    opts = options({"rounds": 200, "results_dir": "results"}, argv)
    if opts["rounds"] < 1:
        raise SystemExit(f"rounds must be >= 1, got {opts['rounds']}")
    started_at = dt.datetime.now(dt.timezone.utc)
    ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False)
    try:
        rows = [{"runtime": runtime, "parties": parties, "rounds": opts["rounds"],
                 "ms_per_round": 1e3 * measure(runtime, parties, opts["rounds"])}
                for runtime in ("local", "ray", "ray-actor-calls") for parties in PARTIES]
    finally:
        ray.shutdown()
    finish("bench_ray_round", rows, opts["results_dir"], started_at)


if __name__ == "__main__":
    main()
