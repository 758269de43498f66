"""The communicator of one party over its links: peer-to-peer rounds (Ray actors, role seats).

A :class:`LinkComm` holds one party (``held == (rank,)``), so share arrays carry a held-party axis
of size 1.  An exchange sends this party's piece of every payload to each receiving peer in ONE
message (one frame per peer per round), then, if this party receives, waits in its mailbox for
the P-1 pieces of the same round and stacks them over all P parties, exactly as
:class:`ppml.mpc.comm.LocalComm` returns them.  Counting and view recording are the base class's,
so stats and views are identical in both runtimes.
"""

from __future__ import annotations

import time

import numpy as np

from ppml.mpc.comm import Comm
from ppml.runtime import wire
from ppml.runtime.mailbox import Mailbox


class LinkComm(Comm):
    """One rank's endpoint: ``send(peer, frame)`` moves bytes, the mailbox receives them.

    A compute party holds its own shares (held-party axis of size 1).  A client holds none (axis
    of size 0): it sends nothing in an exchange, receives only what is revealed to it, and where
    it receives nothing gets zeros of the right shape, which its empty share arrays never use.
    """

    def __init__(self, rank: int, parties: int, send, mailbox: Mailbox, timeout_s: float,
                 record_views: bool = False, clients: int = 0):
        is_client = rank >= parties
        super().__init__(parties, () if is_client else (rank,), record_views, clients,
                         (rank,) if is_client else ())
        self.rank = rank
        self._send = send
        self._mailbox = mailbox
        self.timeout_s = timeout_s

    def exchange(self, payloads, to=None, tag="open"):
        receivers = range(self.parties) if to is None else (to,)
        round_ = self._count_round()
        shapes = [(p.dtype, p.shape[1:]) for p in payloads]
        pieces = [p[0] for p in payloads] if self.held else []
        if pieces:
            frame = wire.encode_arrays(round_, tag, pieces)
            for peer in receivers:
                if peer != self.rank:
                    self._send(peer, frame)
        stacks = None
        if self.rank in receivers:
            received = self._receive(round_, tag,
                                     [s for s in range(self.parties) if s != self.rank])
            for sender, body in received.items():
                _check_pieces(body, shapes, sender, round_, tag)
            stacks = [np.stack([pieces[k] if s == self.rank else received[s][k]
                                for s in range(self.parties)])
                      for k in range(len(payloads))]
        self._account_exchange(sum(int(p.nbytes) for p in pieces), to, stacks, tag)
        if stacks is None and not self.held:
            return [np.zeros((self.parties,) + shape, dtype) for dtype, shape in shapes]
        return stacks

    def broadcast(self, value, owner, tag="public"):
        round_ = self._count_round()
        if owner == self.rank:
            frame = wire.encode_value(round_, tag, value)
            for peer in range(self.ranks):
                if peer != self.rank:
                    self._send(peer, frame)
        else:
            value = self._receive(round_, tag, senders=(owner,))[owner]
        self._account_broadcast(value, owner, tag)
        return value

    def deliver(self, payload, sender, receiver, tag="input"):
        round_ = self._count_round()
        if self.rank == sender:
            self._send(receiver, wire.encode_arrays(round_, tag, [payload]))
        elif self.rank == receiver:
            (payload,) = self._receive(round_, tag, senders=(sender,))[sender]
        else:
            payload = None
        if payload is not None:
            self._account_delivery(payload, sender, receiver, tag)
        return payload if self.rank == receiver else None

    def _receive(self, round_: int, tag: str, senders) -> dict:
        """sender -> body of this round's messages, checked to be the step this party is at."""
        start = time.perf_counter()
        messages = self._mailbox.collect(round_, senders, self.timeout_s)
        self.wait_seconds += time.perf_counter() - start
        for sender, (got, _) in messages.items():
            if got != tag:
                raise RuntimeError(f"out of step with party {sender} in round {round_}: it sent "
                                   f"{got!r}, party {self.rank} expected {tag!r}")
        return {sender: body for sender, (_, body) in messages.items()}


def _check_pieces(body, ours: list, sender: int, round_: int, tag: str) -> None:
    """The peer's pieces must match this rank's payloads in number, dtype and shape (SPMD)."""
    theirs = [(a.dtype, a.shape) for a in body] if isinstance(body, list) else body
    if theirs != ours:
        raise RuntimeError(f"out of step with party {sender} in round {round_} ({tag!r}): it "
                           f"sent pieces {theirs}, this party has {ours}")
