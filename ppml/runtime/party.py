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
:meth:`connect` (its `ppml.runtime.seat.Seat` links up and makes the context), then
:meth:`run`.  No party holds another party's actor handle.
"""

from __future__ import annotations

import ray

from ppml.crypto.agreement import KeyAgreement
from ppml.mpc.context import EngineConfig
from ppml.mpc.keys import agreement_key, pair, pair_key, sealed_context
from ppml.runtime.dealer_actor import DealerProxy
from ppml.runtime.seat import Seat


@ray.remote
class PartyActor:
    """Rank ``rank`` of ``config``'s parties and clients: its keys, and its `Seat` (links,
    mailbox, context), which holds the rest."""

    def __init__(self, rank: int, config: EngineConfig, timeout_s: float):
        self.rank, self.config = rank, config
        self._pair_keys = {pair(rank, j): pair_key(config.seed, rank, j)
                           for j in range(rank + 1, config.ranks)}
        self._agreement = KeyAgreement(agreement_key(config.seed, f"party {rank}"))
        self._seat = Seat(rank, config, timeout_s)
        self._ran = False

    def address(self) -> tuple:
        """Where the peers of higher rank connect to this party."""
        return self._seat.address

    # -- key setup ---------------------------------------------------------------------------
    def public(self) -> bytes:
        """This party's X25519 public key, to which its keys are sealed."""
        return self._agreement.public

    def seal_pair_keys(self, publics: list) -> dict:
        """The key of each pair (rank, j), j > rank, sealed to party j (``publics[j]``)."""
        return {j: self._agreement.seal(publics[j], self._pair_keys[pair(self.rank, j)],
                                        sealed_context("pair", f"party {self.rank}", j))
                for j in range(self.rank + 1, self.config.ranks)}

    def connect(self, addresses: list, publics: list, pair_boxes: dict, dealer_public: bytes,
                dealer_box: bytes | None, dealer=None) -> None:
        """Open the pair keys sealed to this party by the lower ranks (``pair_boxes``: sender ->
        box) and its dealer key (None for a client), then link up with every peer; ``dealer``
        (the dealer actor's handle) is given to party 0 only.  A box altered, or sealed to
        another party or purpose, is refused."""
        for sender, box in pair_boxes.items():
            if not 0 <= sender < self.rank:
                raise ValueError(f"party {self.rank} takes pair keys only from lower ranks, "
                                 f"got one from party {sender}")
            self._pair_keys[pair(sender, self.rank)] = self._agreement.open(
                publics[sender], box, sealed_context("pair", f"party {sender}", self.rank))
        dealer_key = None if dealer_box is None else self._agreement.open(
            dealer_public, dealer_box, sealed_context("dealer", "dealer", self.rank))
        source = None if dealer is None else DealerProxy(dealer, self._seat.timeout_s)
        self._seat.connect(addresses, self._pair_keys, dealer_key, source)

    # -- the protocol ------------------------------------------------------------------------
    def run(self, program, inputs: dict):
        """``program(ctx, **inputs)`` for this party.

        A party runs one program: its rounds are numbered from the start of the links.
        """
        if self._ran:
            raise RuntimeError(f"party {self.rank} has already run a program")
        self._ran = True
        return program(self._seat.ctx, **inputs)
