"""The party actor: one computing party, holding only its own secrets.

A party holds the keys it shares with each peer (PRSS), its dealer key and its inputs; they
never leave the actor except as protocol messages.  Keys are made where they belong, never by
the driver:

* the key of a pair (i, j), i < j: drawn by party i and sent to party j alone;
* its dealer key: drawn by the dealer actor and sent to this party alone.

With an integer seed every key is the one :mod:`ppml.mpc.keys` derives, so a seeded run is
bit-identical to the local runtime; with ``seed=None`` every key comes from ``os.urandom``.
The setup calls, in order: :meth:`address`, :meth:`send_pair_keys` (with the dealer's
``hand_out_keys``), :meth:`connect`, then :meth:`run`.  Key hand-overs are idempotent, so a
retried call is harmless.
"""

from __future__ import annotations

import ray

from ppml.mpc.context import Context, EngineConfig
from ppml.mpc.dealer import DealerStore
from ppml.mpc.keys import PartyKeys, pair, pair_key
from ppml.runtime.cluster import node_address
from ppml.runtime.dealer_actor import DealerProxy
from ppml.runtime.links import Links
from ppml.runtime.mailbox import Mailbox
from ppml.runtime.link_comm import LinkComm


@ray.remote
class PartyActor:
    def __init__(self, rank: int, parties: int, seed, timeout_s: float, clients: int = 0):
        self.rank = rank
        self.parties = parties
        self.clients = clients
        self.ranks = parties + clients   # compute parties, then clients (no shares, no dealer key)
        self.timeout_s = timeout_s
        self._pair_keys = {pair(rank, j): pair_key(seed, rank, j)
                           for j in range(rank + 1, self.ranks)}
        self._dealer_key = None
        self._ran = False
        self._mailbox = Mailbox()
        self._links = Links(rank, self.ranks, self._mailbox, node_address())

    def address(self) -> tuple:
        """Where the peers of higher rank connect to this party."""
        return self._links.address

    # -- key setup ---------------------------------------------------------------------------
    def send_pair_keys(self, members: list) -> None:
        """Send the key of each pair (rank, j), j > rank, to party j (``members[j]``) alone."""
        ray.get([members[j].accept_pair_key.remote(self.rank, self._pair_keys[pair(self.rank, j)])
                 for j in range(self.rank + 1, self.ranks)], timeout=self.timeout_s)

    def accept_pair_key(self, sender: int, key: bytes) -> None:
        if not 0 <= sender < self.rank:
            raise ValueError(f"party {self.rank} takes pair keys only from lower ranks, "
                             f"got one from party {sender}")
        _set_once(self._pair_keys, pair(sender, self.rank), key, f"pair key {sender}-{self.rank}")

    def accept_dealer_key(self, key: bytes) -> None:
        if self._dealer_key is not None and self._dealer_key != key:
            raise ValueError(f"party {self.rank} already holds a different dealer key")
        self._dealer_key = key

    def connect(self, addresses: list) -> None:
        """Open the authenticated links to every peer (needs all pair keys)."""
        missing = [ij for ij in (pair(self.rank, j) for j in range(self.ranks) if j != self.rank)
                   if ij not in self._pair_keys]
        needs_dealer = self.rank < self.parties
        if missing or (needs_dealer and self._dealer_key is None):
            raise RuntimeError(f"party {self.rank} is missing keys: pairs {missing}, dealer key "
                               f"{'missing' if self._dealer_key is None else 'present'}")
        self._links.connect(addresses, self._pair_keys, self.timeout_s)

    # -- the protocol ------------------------------------------------------------------------
    def run(self, program, inputs: dict, config: EngineConfig, dealer=None):
        """``program(ctx, **inputs)`` for this party; ``dealer`` is given to party 0 only.

        A party runs one program: its rounds are numbered from the start of the links.
        """
        if self._ran:
            raise RuntimeError(f"party {self.rank} has already run a program")
        self._ran = True
        dealer_keys = {self.rank: self._dealer_key} if self.rank < self.parties else {}
        keys = PartyKeys(pairs=dict(self._pair_keys), dealer=dealer_keys)
        comm = LinkComm(self.rank, self.parties, self._links.send, self._mailbox, self.timeout_s,
                       config.record_views, self.clients)
        source = None if dealer is None else DealerProxy(dealer, self.timeout_s)
        store = DealerStore(comm.held, keys.dealer, source)
        ctx = Context(comm, keys, store, config)
        return program(ctx, **inputs)


def _set_once(keys: dict, slot, key: bytes, name: str) -> None:
    if keys.get(slot, key) != key:
        raise ValueError(f"{name} was already set to a different key")
    keys[slot] = key
