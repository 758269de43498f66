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

from dataclasses import dataclass, field

import numpy as np

from ppml.checks import check_int


def payload_bytes(value) -> int:
    """What a broadcast value counts as sent: an array's or a byte string's length in bytes, a
    sequence's sum of its items', anything else its text (a shape, a small public value)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, (np.ndarray, bytes, list, tuple))
                                                for v in value):
        return sum(payload_bytes(v) for v in value)
    return len(repr(value).encode())


@dataclass
class PartyStats:
    """Online communication of one party: rounds, bytes sent, and a breakdown by operation."""

    rounds: int = 0
    bytes_sent: int = 0
    by_op: dict = field(default_factory=dict)

    @classmethod
    def of(cls, rounds_by_op: dict, bytes_by_op: dict) -> "PartyStats":
        ops = list(dict.fromkeys(list(rounds_by_op) + list(bytes_by_op)))
        return cls(sum(rounds_by_op.values()), sum(bytes_by_op.values()),
                   {op: {"rounds": rounds_by_op.get(op, 0), "bytes_sent": bytes_by_op.get(op, 0)}
                    for op in ops})

    def as_dict(self) -> dict:
        return {"rounds": self.rounds, "bytes_sent": self.bytes_sent,
                "by_op": {k: dict(v) for k, v in self.by_op.items()}}


class _Operation:
    """The context manager of :meth:`Comm.operation` (a class: it runs on every protocol call)."""

    __slots__ = ("ops", "name")

    def __init__(self, ops: list, name: str):
        self.ops, self.name = ops, name

    def __enter__(self):
        self.ops.append(self.name)

    def __exit__(self, *exc):
        self.ops.pop()


class Comm:
    """Communicator interface shared by the local and the Ray runtime.

    Ranks 0..P-1 are the *compute parties*, which hold shares.  Ranks P..P+C-1 are *clients*
    (Hannun et al.'s p' and p''): they hold no shares, but can input secrets (one message to
    party 0, the other shares derived from pairwise keys) and receive values revealed to them.

    Attributes:
        parties: the number P of compute parties.
        clients: the number C of clients.
        held: the compute parties whose shares this process holds, in axis order.
        held_clients: the clients this process runs.
    """

    parties: int
    held: tuple

    def __init__(self, parties: int, held: tuple, record_views: bool = False, clients: int = 0,
                 held_clients: tuple = ()):
        self.parties = parties
        self.clients = clients
        self.held = tuple(held)
        self.held_clients = tuple(held_clients)
        self._rounds_by_op = {}                                 # every rank takes every round
        self._bytes_by_op = {p: {} for p in self.held_ranks}    # what each held rank sent
        self._exchanged = {}   # (op, receiver or None for all) -> bytes each held party sent
        self.views = {p: [] for p in self.held_ranks} if record_views else None
        self._ops: list[str] = []
        self._round = 0
        self.wait_seconds = 0.0  # time spent waiting for peers' messages (0 in one process)

    @property
    def ranks(self) -> int:
        """P + C: every compute party and every client."""
        return self.parties + self.clients

    @property
    def held_ranks(self) -> tuple:
        return self.held + self.held_clients

    @property
    def stats(self) -> dict:
        """Held rank -> its :class:`PartyStats` so far."""
        return {p: PartyStats.of(self._rounds_by_op, self._sent_by_op(p)) for p in self.held_ranks}

    def _sent_by_op(self, rank: int) -> dict:
        """What ``rank`` sent, by operation: its broadcasts and deliveries, and its exchanges
        (kept per (op, receiver) on the hot path and expanded here)."""
        sent = dict(self._bytes_by_op[rank])
        if rank in self.held:
            for (op, to), nbytes in self._exchanged.items():
                copies = self.parties - 1 if to is None else int(rank != to)
                sent[op] = sent.get(op, 0) + nbytes * copies
        return sent

    def counters(self, rank: int) -> dict:
        """What a checkpoint keeps of ``rank``'s communication: its round number and stats."""
        return {"round": self._round, "rounds_by_op": dict(self._rounds_by_op),
                "bytes_by_op": dict(self._bytes_by_op[rank]),
                "exchanged": [(op, to, n) for (op, to), n in self._exchanged.items()],
                "wait_seconds": self.wait_seconds}

    def restore_counters(self, rank: int, counters: dict) -> None:
        """Go on counting from :meth:`counters` (the round numbers then match the peers')."""
        self._round = counters["round"]
        self._rounds_by_op = dict(counters["rounds_by_op"])
        self._bytes_by_op[rank] = dict(counters["bytes_by_op"])
        self._exchanged = {(op, to): n for op, to, n in counters["exchanged"]}
        self.wait_seconds = counters["wait_seconds"]

    # -- bookkeeping ---------------------------------------------------------------------------
    def operation(self, name: str) -> "_Operation":
        """Attribute the rounds and bytes inside the block to ``name`` (outermost label wins)."""
        return _Operation(self._ops, name)

    @property
    def current_op(self) -> str:
        return self._ops[0] if self._ops else "other"

    def _count(self, sender: int, nbytes: int) -> None:
        sent = self._bytes_by_op[sender]
        op = self.current_op
        sent[op] = sent.get(op, 0) + nbytes

    def _count_round(self) -> int:
        """Start a round (counted for every held rank); returns its number."""
        self._round += 1
        op = self.current_op
        self._rounds_by_op[op] = self._rounds_by_op.get(op, 0) + 1
        return self._round

    def _record(self, receiver: int, sender: int, tag: str, payload) -> None:
        if self.views is not None:
            self.views[receiver].append((self._round, self.current_op, tag, sender, payload))

    def _account_exchange(self, nbytes: int, to, stacks, tag: str) -> None:
        """Count and record one exchange round (after ``_count_round``), for the held parties.

        ``nbytes``: the bytes of each held party's pieces (the same for every party: SPMD), sent
        to party ``to`` (every party but itself when None).
        ``stacks``: the payloads stacked over all P parties, or None where nothing is received.
        """
        key = (self._ops[0] if self._ops else "other", to)
        self._exchanged[key] = self._exchanged.get(key, 0) + nbytes
        if self.views is None or stacks is None:
            return
        for receiver in range(self.parties) if to is None else (to,):
            if receiver in self.held_ranks:
                for sender in range(self.parties):
                    if sender != receiver:
                        self._record(receiver, sender, tag, [s[sender].copy() for s in stacks])

    def _account_broadcast(self, value, owner: int, tag: str) -> None:
        """Count and record one broadcast round (after ``_count_round``), for the held ranks."""
        if owner in self.held_ranks:
            self._count(owner, payload_bytes(value) * (self.ranks - 1))
        for receiver in self.held_ranks:
            if receiver != owner:
                self._record(receiver, owner, tag, value)

    def _account_delivery(self, payload, sender: int, receiver: int, tag: str) -> None:
        """Count and record one message from ``sender`` to ``receiver`` (after _count_round)."""
        if sender in self.held_ranks:
            self._count(sender, int(payload.nbytes))
        if receiver in self.held_ranks:
            self._record(receiver, sender, tag, [payload.copy()])

    def check_party(self, party, name: str = "party") -> int:
        """``party`` if it is a rank (compute party or client), else a ValueError naming
        ``name``."""
        return check_int(name, party, 0, self.ranks - 1, what="a party index")

    def holds(self, rank: int) -> bool:
        """Whether this process runs ``rank`` (a compute party or a client)."""
        return rank in self.held or rank in self.held_clients

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
        """One round: ``owner`` sends a public Python value (for example a shape) to all ranks."""
        raise NotImplementedError

    def deliver(self, payload, sender: int, receiver: int, tag: str = "input"):
        """One round: ``sender`` sends one array to ``receiver``; returns it there, else None."""
        raise NotImplementedError


class LocalComm(Comm):
    """Every compute party and every client in one process."""

    def __init__(self, parties: int, record_views: bool = False, clients: int = 0):
        super().__init__(parties, tuple(range(parties)), record_views, clients,
                         tuple(range(parties, parties + clients)))

    def exchange(self, payloads, to=None, tag="open"):
        self._count_round()
        self._account_exchange(sum(p.nbytes for p in payloads) // self.parties, to, payloads, tag)
        return list(payloads)

    def broadcast(self, value, owner, tag="public"):
        self._count_round()
        self._account_broadcast(value, owner, tag)
        return value

    def deliver(self, payload, sender, receiver, tag="input"):
        self._count_round()
        self._account_delivery(payload, sender, receiver, tag)
        return payload
