"""A seat of the secret-sharing engine inside a role: one compute party that a role holds for a
whole run, running one program per call on the same links, keys and dealer.

`ppml.runtime.spmd.run` starts fresh parties for one program.  A role-based protocol that
computes on shares between two of its own roles, step after step (Samba's selection between the
Controller and Comp, docs/samba.md), gives each of them a `Seat` instead:

1. each role makes its seat (``Seat(rank, config)``), which listens for its peers (`address`);
2. its keys reach the role by method call, sealed to it (`ppml.crypto.agreement`), never as
   creation arguments: the key of each pair of seats, and its key shared with the dealer;
3. every seat `connect`\\ s at the same time (authenticated `ppml.runtime.links`, in this
   process over the loopback interface, on Ray between nodes);
4. the role calls `run`\\ (program, ...) once per step in every seat at once: ``program(ctx,
   ...)`` on the seat's `Context`, whose rounds, keys and dealer material continue from the
   last call.

Party 0 asks the dealer for its corrections (`RoleDealer`: a role that answers
``corrections(kind, spec, batch, count)``, the next batch asked for ahead); the other parties
derive their material from their dealer keys, with no message.
"""

from __future__ import annotations

import numpy as np

from ppml.checks import check_int
from ppml.mpc.context import Context, EngineConfig
from ppml.mpc.dealer import DealerStore
from ppml.mpc.keys import PartyKeys, pair
from ppml.runtime.cluster import node_address
from ppml.runtime.link_comm import LinkComm
from ppml.runtime.links import Links
from ppml.runtime.mailbox import Mailbox

DEFAULT_TIMEOUT_S = 300.0
"""How long a seat waits for a peer's message, or for its peers to connect."""


class Seat:
    """Rank ``rank`` of ``config``'s parties (and clients), held by one role."""

    def __init__(self, rank: int, config: EngineConfig, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.rank = check_int("rank", rank, 0, config.ranks - 1, what="a party index")
        self.config, self.timeout_s = config, timeout_s
        self._mailbox = Mailbox()
        self._links = Links(rank, config.ranks, self._mailbox, node_address())
        self.ctx: Context | None = None

    @property
    def address(self) -> tuple:
        """Where the seats of higher rank connect to this one."""
        return self._links.address

    def connect(self, addresses: list, pair_keys: dict, dealer_key: bytes | None,
                dealer=None) -> None:
        """Link up with every other seat (they connect at the same time), and make the context.

        ``addresses[j]``: seat j's `address`; ``pair_keys[(i, j)]`` (i < j): the key of each
        pair this seat is in; ``dealer_key``: the key this compute party shares with the dealer
        (None for a client); ``dealer``: party 0's source of corrections (a `RoleDealer`).
        """
        peers = [pair(self.rank, j) for j in range(self.config.ranks) if j != self.rank]
        missing = [ij for ij in peers if ij not in pair_keys]
        if missing:
            raise ValueError(f"seat {self.rank} lacks the keys of pairs {missing}")
        if (self.rank < self.config.parties) != (dealer_key is not None):
            raise ValueError(f"seat {self.rank} needs a dealer key exactly when it is a compute "
                             f"party (parties: {self.config.parties})")
        if (self.rank == 0) != (dealer is not None):
            raise ValueError("party 0, and only party 0, takes its corrections from the dealer")
        self._links.connect(addresses, pair_keys, self.timeout_s)
        keys = PartyKeys(pairs={ij: pair_keys[ij] for ij in peers},
                         dealer={} if dealer_key is None else {self.rank: dealer_key})
        comm = LinkComm(self.rank, self.config.parties, self._links.send, self._mailbox,
                        self.timeout_s, self.config.record_views, self.config.clients)
        self.ctx = Context(comm, keys, DealerStore(comm.held, keys.dealer, dealer), self.config)

    def run(self, program, *args):
        """``program(ctx, *args)`` on this seat's context (every seat runs it at once)."""
        if self.ctx is None:
            raise RuntimeError(f"seat {self.rank} is not connected")
        return program(self.ctx, *args)

    def received(self) -> list:
        """Every ring element this seat received since the last call (its view, in order;
        needs ``record_views``)."""
        entries = self.ctx.comm.views[self.rank]
        values = [int(v) for *_, payload in entries
                  for piece in (payload if isinstance(payload, list) else [payload])
                  for v in np.asarray(piece).reshape(-1).tolist()]
        entries.clear()
        return values

    def close(self) -> None:
        """Close the links: a peer still waiting for this seat fails at once."""
        self._links.close()


class RoleDealer:
    """Party 0's source of corrections from a dealer played by a role, which answers
    ``corrections(kind, spec, batch, count)``; each material's next batch is asked for as soon
    as one is taken (on Ray it is made while party 0 computes)."""

    def __init__(self, role):
        self._role = role
        self._ahead = {}  # material key -> ((batch, count), its pending call)

    def _ask(self, material, batch: int, count: int):
        return self._role.submit("corrections", material.kind, material.spec, batch, count)

    def corrections(self, material, batch: int, count: int) -> dict:
        ahead = self._ahead.pop(material.key, None)
        pending = ahead[1] if ahead is not None and ahead[0] == (batch, count) else \
            self._ask(material, batch, count)
        self._ahead[material.key] = ((batch + 1, count), self._ask(material, batch + 1, count))
        return pending.result()
