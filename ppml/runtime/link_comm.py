"""The communicator of one party over its links: peer-to-peer rounds (Ray actors, role seats).

A :class:`LinkComm` holds one party (``held == (rank,)``), so share arrays carry a held-party axis
of size 1.  An exchange sends this party's piece of every payload to each receiving peer in ONE
message (one frame per peer per round), then, if this party receives, waits in its mailbox for
the P-1 pieces of the same round and stacks them over all P parties, exactly as
:class:`ppml.mpc.comm.LocalComm` returns them.  Counting and view recording are the base class's,
so a compute party's stats and views are identical in both runtimes.

Each pair of parties numbers its own messages (the k-th frame from one party to another carries
k), not the program's rounds: a client of the engine (p', p'') that holds no shares can then
follow only the rounds it takes part in (its inputs and the values opened to it) and skip every
other operation of the program, and its rounds, views and error messages ("round N") count
only those.
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
        self._sent = [0] * self.ranks     # frames sent to each peer
        self._taken = [0] * self.ranks    # frames taken from each peer
        self._send = send
        self._mailbox = mailbox
        self.timeout_s = timeout_s

    def exchange(self, payloads, to=None, tag="open"):
        receivers = range(self.parties) if to is None else (to,)
        round_ = self._count_round()
        shapes = [(p.dtype, p.shape[1:]) for p in payloads]
        pieces = [p[0] for p in payloads] if self.held else []
        if pieces:
            for peer in receivers:
                if peer != self.rank:
                    self._send(peer, wire.encode_arrays(self._next(peer),
                                                        self._label(tag, round_, peer), pieces))
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
            for peer in range(self.ranks):
                if peer != self.rank:
                    self._send(peer, wire.encode_value(self._next(peer),
                                                       self._label(tag, round_, peer), value))
        else:
            value = self._receive(round_, tag, senders=(owner,))[owner]
        self._account_broadcast(value, owner, tag)
        return value

    def deliver(self, payload, sender, receiver, tag="input"):
        round_ = self._count_round()
        if self.rank == sender:
            self._send(receiver, wire.encode_arrays(self._next(receiver),
                                                    self._label(tag, round_, receiver),
                                                    [payload]))
        elif self.rank == receiver:
            (payload,) = self._receive(round_, tag, senders=(sender,))[sender]
        else:
            payload = None
        if payload is not None:
            self._account_delivery(payload, sender, receiver, tag)
        return payload if self.rank == receiver else None

    def _label(self, tag: str, round_: int, peer: int) -> str:
        """The tag of a frame between this rank and ``peer``: with the round when both are
        compute parties, which take every round, so that a frame of another round is caught
        even where its tag and shapes are the same; a client counts only its own rounds."""
        return f"{tag}@{round_}" if self.rank < self.parties and peer < self.parties else tag

    def _next(self, peer: int) -> int:
        """The number of the next frame this rank sends ``peer`` (the pair's own count)."""
        self._sent[peer] += 1
        return self._sent[peer]

    def _receive(self, round_: int, tag: str, senders) -> dict:
        """sender -> body of this round's messages (the next one of each sender), checked to be
        the step this party is at."""
        start = time.perf_counter()
        wanted = {s: self._taken[s] + 1 for s in senders}
        messages = self._mailbox.collect(wanted, self.timeout_s, f"round {round_}")
        for s in senders:
            self._taken[s] += 1
        self.wait_seconds += time.perf_counter() - start
        for sender, (got, _) in messages.items():
            expected = self._label(tag, round_, sender)
            if got != expected:
                raise RuntimeError(f"out of step with party {sender} in round {round_}: it sent "
                                   f"{got!r}, party {self.rank} expected {expected!r}")
        return {sender: body for sender, (_, body) in messages.items()}


def _check_pieces(body, ours: list, sender: int, round_: int, tag: str) -> None:
    """The peer's pieces must match this rank's payloads in number, dtype and shape (SPMD)."""
    theirs = [(a.dtype, a.shape) for a in body] if isinstance(body, list) else body
    if theirs != ours:
        raise RuntimeError(f"out of step with party {sender} in round {round_} ({tag!r}): it "
                           f"sent pieces {theirs}, this party has {ours}")
