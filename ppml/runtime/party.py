"""The party actor: one computing party, holding only its own secrets.

A party holds the keys it shares with each peer (PRSS), its dealer key and its inputs; they
never leave the actor except as protocol messages or sealed boxes.  Keys are made where they
belong, never by the driver, and travel sealed (X25519, HKDF-SHA256, AES-256-GCM:
`ppml.crypto.agreement`) to the one actor that must hold them, the driver passing on public keys
and boxes only:

* the key of a pair (i, j), i < j: drawn by party i and sealed to party j;
* its dealer key: drawn by the dealer actor and sealed to this party.

With an integer seed every key is the one :mod:`ppml.mpc.keys` derives (the X25519 keys too), so
a seeded run is bit-identical to the local runtime and takes the same sealed path; with
``seed=None`` every key comes from ``os.urandom``.  The setup calls, in order: :meth:`address`
and :meth:`public`, :meth:`seal_pair_keys` (with the dealer's ``hand_out_keys``),
:meth:`connect`, then :meth:`run`.  No party holds another party's actor handle.
"""

from __future__ import annotations

import ray

from ppml.mpc.context import Context, EngineConfig
from ppml.mpc.dealer import DealerStore
from ppml.crypto.agreement import KeyAgreement
from ppml.mpc.keys import PartyKeys, agreement_key, pair, pair_key, sealed_context
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
        self._agreement = KeyAgreement(agreement_key(seed, f"party {rank}"))
        self._dealer_key = None
        self._ran = False
        self._mailbox = Mailbox()
        self._links = Links(rank, self.ranks, self._mailbox, node_address())

    def address(self) -> tuple:
        """Where the peers of higher rank connect to this party."""
        return self._links.address

    # -- key setup ---------------------------------------------------------------------------
    def public(self) -> bytes:
        """This party's X25519 public key, to which its keys are sealed."""
        return self._agreement.public

    def seal_pair_keys(self, publics: list) -> dict:
        """The key of each pair (rank, j), j > rank, sealed to party j (``publics[j]``)."""
        return {j: self._agreement.seal(publics[j], self._pair_keys[pair(self.rank, j)],
                                        sealed_context("pair", f"party {self.rank}", j))
                for j in range(self.rank + 1, self.ranks)}

    def connect(self, addresses: list, publics: list, pair_boxes: dict, dealer_public: bytes,
                dealer_box: bytes | None) -> None:
        """Open the pair keys sealed to this party by the lower ranks (``pair_boxes``: sender ->
        box) and its dealer key (None for a client), then open the authenticated links to every
        peer.  A box altered, or sealed to another party or purpose, is refused."""
        for sender, box in pair_boxes.items():
            if not 0 <= sender < self.rank:
                raise ValueError(f"party {self.rank} takes pair keys only from lower ranks, "
                                 f"got one from party {sender}")
            self._pair_keys[pair(sender, self.rank)] = self._agreement.open(
                publics[sender], box, sealed_context("pair", f"party {sender}", self.rank))
        if dealer_box is not None:
            self._dealer_key = self._agreement.open(
                dealer_public, dealer_box, sealed_context("dealer", "dealer", self.rank))
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
