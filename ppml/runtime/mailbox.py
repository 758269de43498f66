"""A party's mailbox: messages from its peers, keyed by (round, sender), waited for by round.

The thread reading the links delivers into the mailbox; the party's program takes a round's
messages out with :meth:`Mailbox.collect`, which blocks until every expected sender's message
for that round is there, reading the links itself meanwhile when the links give it a
``waiter`` (`ppml.runtime.links.Links.wait`).  Delivery is idempotent: a second message
for a (round, sender) already delivered or already collected is ignored, so a transport that
delivers at least once (a retried call) never corrupts a round.
"""

from __future__ import annotations

import threading
import time


class Mailbox:
    def __init__(self):
        self._ready = threading.Condition()
        self._messages = {}     # (round, sender) -> (tag, body)
        self._collected = 0     # every round up to this one has been collected
        self._closed = {}       # sender -> why its link closed
        self.waiter = None
        """``waiter(done, deadline)``: waits until done() or the deadline, reading the links."""

    def deliver(self, round_: int, sender: int, tag: str, body) -> bool:
        """Put one message in the box; False (and nothing changes) when it is a duplicate."""
        with self._ready:
            if round_ <= self._collected or (round_, sender) in self._messages:
                return False
            self._messages[round_, sender] = (tag, body)
            self._ready.notify_all()
            return True

    def close(self, sender: int, reason: str) -> None:
        """Mark ``sender``'s link closed: waiting for a message it has not sent fails at once."""
        with self._ready:
            self._closed.setdefault(sender, reason)
            self._ready.notify_all()

    def collect(self, round_: int, senders, timeout_s: float) -> dict:
        """Wait for the messages of ``round_`` from every sender; returns sender -> (tag, body).

        Raises TimeoutError when a sender's message does not come within ``timeout_s`` seconds,
        and ConnectionError when a sender's link closed before its message came.
        """
        senders = tuple(senders)

        def missing():
            return [s for s in senders if (round_, s) not in self._messages]

        def settled():
            return not any(s not in self._closed for s in missing())

        if self.waiter is not None:
            self.waiter(settled, time.monotonic() + timeout_s)
        with self._ready:
            arrived = self._ready.wait_for(settled, 0 if self.waiter is not None else timeout_s)
            absent = missing()
            if not arrived:
                raise TimeoutError(f"no message from part{'ies' if len(absent) > 1 else 'y'} "
                                   f"{', '.join(map(str, absent))} for round {round_} within "
                                   f"{timeout_s:g} s (timeout_s)")
            if absent:
                raise ConnectionError(
                    "; ".join(f"the link to party {s} closed before its message for round "
                              f"{round_} came: {self._closed[s]}" for s in absent))
            self._collected = max(self._collected, round_)
            return {s: self._messages.pop((round_, s)) for s in senders}
