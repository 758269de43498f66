"""The party actor: one computing party, holding only its own secrets.

A party holds the keys it shares with each peer (PRSS), its dealer key, its TLS identity and its
inputs; they never leave the actor except as protocol messages.  Keys are made where they
belong, never by the driver:

* its TLS identity: a private key made in the actor, with a self-signed certificate that the
  driver hands to the other parties, which pin it (`ppml.runtime.tls.Trust.pinned`);
* the key of a pair (i, j): agreed by parties i and j over their authenticated TLS link
  (X25519, `ppml.runtime.links`);
* its dealer key: drawn by the dealer actor and sealed to this party's X25519 key
  (`ppml.crypto.agreement`); the driver passes on the public key and the box only.

With an integer seed the pair and dealer keys are the ones :mod:`ppml.mpc.keys` derives, so a
seeded run is bit-identical to the local runtime (an INSECURE mode); with ``seed=None`` every
key comes from ``os.urandom`` or the agreement.  The setup calls, in order: :meth:`address`,
:meth:`certificate` and :meth:`public` (with the dealer's ``hand_out_keys``), :meth:`connect`
(its `ppml.runtime.seat.Seat` links up and makes the context), then :meth:`run`.  No party holds
another party's actor handle.
"""

from __future__ import annotations

import ray

from ppml.crypto.agreement import KeyAgreement
from ppml.mpc.context import EngineConfig
from ppml.mpc.keys import agreement_key, pair, pair_key, sealed_context
from ppml.runtime.dealer_actor import DealerProxy
from ppml.runtime.seat import Seat, pinned


@ray.remote
class PartyActor:
    """Rank ``rank`` of ``config``'s parties and clients: its keys, and its `Seat` (identity,
    links, mailbox, context), which holds the rest."""

    def __init__(self, rank: int, config: EngineConfig, timeout_s: float):
        self.rank, self.config = rank, config
        self._agreement = KeyAgreement(agreement_key(config.seed, f"party {rank}"))
        self._seat = Seat(rank, config, timeout_s)
        self._ran = False

    def address(self) -> tuple:
        """Where the peers of higher rank connect to this party."""
        return self._seat.address

    def certificate(self) -> bytes:
        """This party's self-signed TLS certificate, which its peers pin."""
        return self._seat.certificate

    def public(self) -> bytes:
        """This party's X25519 public key, to which the dealer seals its dealer key."""
        return self._agreement.public

    def connect(self, addresses: list, certificates: list, dealer_public: bytes,
                dealer_box: bytes | None, dealer=None) -> None:
        """Open the dealer key sealed to this party (None for a client), then link up with
        every peer, accepting exactly the peers' ``certificates``; ``dealer`` (the dealer
        actor's handle) is given to party 0 only.  A box altered, or sealed to another party or
        purpose, is refused."""
        dealer_key = None if dealer_box is None else self._agreement.open(
            dealer_public, dealer_box, sealed_context("dealer", "dealer", self.rank))
        source = None if dealer is None else DealerProxy(dealer, self._seat.timeout_s)
        trust = pinned({r: pem for r, pem in enumerate(certificates) if r != self.rank})
        seed = self.config.seed
        pair_keys = None if seed is None else {
            pair(self.rank, j): pair_key(seed, self.rank, j)
            for j in range(self.config.ranks) if j != self.rank}
        self._seat.connect(addresses, trust, pair_keys, dealer_key, source)

    # -- the protocol ------------------------------------------------------------------------
    def run(self, program, inputs: dict):
        """``program(ctx, **inputs)`` for this party.

        A party runs one program: its rounds are numbered from the start of the links.
        """
        if self._ran:
            raise RuntimeError(f"party {self.rank} has already run a program")
        self._ran = True
        return program(self._seat.ctx, **inputs)
