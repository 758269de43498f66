"""The one place where parties talk: a communicator interface and its in-process implementation.

Protocol code is written once, SPMD style (see docs/architecture.md).  Share arrays always carry a
leading *held-party* axis: in the local runtime one process holds every party, so the axis has
size P and one numpy call advances all parties at once; in the Ray runtime each actor holds one
party and the axis has size 1.  ``Comm.exchange`` is the only primitive that moves shares: one
call is one communication round, with one batched message per peer.

Every exchange is counted (rounds, bytes each party sent, split by the outermost operation) and,
when recording is on, appended to the receiving party's *view*: everything that party received.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np


@dataclass
class PartyStats:
    """Online communication of one party: rounds, bytes sent, and a breakdown by operation."""

    rounds: int = 0
    bytes_sent: int = 0
    by_op: dict = field(default_factory=dict)

    def add(self, op: str, rounds: int, nbytes: int) -> None:
        self.rounds += rounds
        self.bytes_sent += nbytes
        entry = self.by_op.setdefault(op, {"rounds": 0, "bytes_sent": 0})
        entry["rounds"] += rounds
        entry["bytes_sent"] += nbytes

    def as_dict(self) -> dict:
        return {"rounds": self.rounds, "bytes_sent": self.bytes_sent,
                "by_op": {k: dict(v) for k, v in self.by_op.items()}}


class Comm:
    """Communicator interface shared by the local and the Ray runtime.

    Attributes:
        parties: the number of parties P.
        held: the indices of the parties whose shares this process holds, in axis order.
    """

    parties: int
    held: tuple

    def __init__(self, parties: int, held: tuple, record_views: bool = False):
        self.parties = parties
        self.held = tuple(held)
        self.stats = {p: PartyStats() for p in self.held}
        self.views = {p: [] for p in self.held} if record_views else None
        self._ops: list[str] = []
        self._round = 0

    # -- bookkeeping ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def operation(self, name: str):
        """Attribute the rounds and bytes inside the block to ``name`` (outermost label wins)."""
        self._ops.append(name)
        try:
            yield
        finally:
            self._ops.pop()

    @property
    def current_op(self) -> str:
        return self._ops[0] if self._ops else "other"

    def _count(self, sender: int, nbytes: int) -> None:
        self.stats[sender].add(self.current_op, 0, nbytes)

    def _count_round(self) -> int:
        """Start a round, counted for every held party; returns its number."""
        self._round += 1
        for stats in self.stats.values():
            stats.add(self.current_op, 1, 0)
        return self._round

    def _record(self, receiver: int, sender: int, tag: str, payload) -> None:
        if self.views is not None:
            self.views[receiver].append((self._round, self.current_op, tag, sender, payload))

    def _account_exchange(self, nbytes: dict, receivers, stacks, tag: str) -> None:
        """Count and record one exchange round (after ``_count_round``), for the held parties.

        ``nbytes[s]``: the bytes of held sender ``s``'s pieces, sent to every receiver but s.
        ``stacks``: the payloads stacked over all P parties, or None where nothing is received.
        """
        for sender, n in nbytes.items():
            self._count(sender, n * sum(1 for r in receivers if r != sender))
        for receiver in receivers:
            if stacks is not None and receiver in self.held:
                for sender in range(self.parties):
                    if sender != receiver:
                        self._record(receiver, sender, tag, [s[sender].copy() for s in stacks])

    def _account_broadcast(self, value, owner: int, tag: str) -> None:
        """Count and record one broadcast round (after ``_count_round``), for the held parties."""
        if owner in self.held:
            self._count(owner, len(repr(value).encode()) * (self.parties - 1))
        for receiver in self.held:
            if receiver != owner:
                self._record(receiver, owner, tag, value)

    def check_party(self, party, name: str = "party") -> int:
        if isinstance(party, bool) or not isinstance(party, (int, np.integer)) \
                or not 0 <= party < self.parties:
            raise ValueError(f"{name} must be a party index in [0, {self.parties - 1}], got {party!r}")
        return int(party)

    def index(self, party: int) -> int | None:
        """Position of ``party`` on the held-party axis, or None when not held here."""
        return self.held.index(party) if party in self.held else None

    # -- the transport ---------------------------------------------------------------------------
    def exchange(self, payloads: list, to: int | None = None, tag: str = "open") -> list | None:
        """One round: every party sends its piece of each payload to party ``to`` (all if None).

        ``payloads`` are share arrays with the held-party axis first.  Returns, where this
        process receives, each payload stacked over all P parties (shape ``[P, ...]``); returns
        None where it does not (``to`` is another party).
        """
        raise NotImplementedError

    def broadcast(self, value, owner: int, tag: str = "public"):
        """One round: ``owner`` sends a public Python value (for example a shape) to all parties."""
        raise NotImplementedError


class LocalComm(Comm):
    """All parties in one process; the held-party axis is the full party axis."""

    def __init__(self, parties: int, record_views: bool = False):
        super().__init__(parties, tuple(range(parties)), record_views)

    def exchange(self, payloads, to=None, tag="open"):
        receivers = range(self.parties) if to is None else (to,)
        self._count_round()
        nbytes = {s: sum(int(p[s].nbytes) for p in payloads) for s in self.held}
        self._account_exchange(nbytes, receivers, payloads, tag)
        return list(payloads)

    def broadcast(self, value, owner, tag="public"):
        self._count_round()
        self._account_broadcast(value, owner, tag)
        return value
