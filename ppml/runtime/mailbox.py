"""A party's mailbox: the messages its peers sent it, each numbered by its sender.

Every sender numbers the messages it sends to this party 1, 2, 3, ... (its own count, one per
pair of parties: `ppml.runtime.link_comm`), so a party that takes part in only some of a
program's rounds (a client of the engine) needs to know nothing of the others.  The thread
reading the links delivers into the mailbox; the party's program takes the next messages out
with :meth:`Mailbox.collect`, which blocks until every expected sender's message is there,
reading the links itself meanwhile when the links give it a ``waiter``
(`ppml.runtime.links.Links.wait`).  Delivery is idempotent: a second message with a number
already delivered or already collected is ignored, so a transport that delivers at least once
(a retried call) never corrupts a round.
"""

from __future__ import annotations

import threading
import time


class Mailbox:
    def __init__(self):
        self._ready = threading.Condition()
        self._messages = {}     # (sender, number) -> (tag, body)
        self._collected = {}    # sender -> the number of the last message collected from it
        self._closed = {}       # sender -> why its link closed
        self.waiter = None
        """``waiter(done, deadline)``: waits until done() or the deadline, reading the links."""
        self.heard = None
        """``heard(sender)``: when anything (a keepalive too) last came from ``sender``, or None;
        given by the links with the waiter."""

    def deliver(self, number: int, sender: int, tag: str, body) -> bool:
        """Put message ``number`` of ``sender`` in the box; False (and nothing changes) when it
        is a duplicate."""
        with self._ready:
            if number <= self._collected.get(sender, 0) or (sender, number) in self._messages:
                return False
            self._messages[sender, number] = (tag, body)
            self._ready.notify_all()
            return True

    def close(self, sender: int, reason: str) -> None:
        """Mark ``sender``'s link closed: waiting for a message it has not sent fails at once."""
        with self._ready:
            self._closed.setdefault(sender, reason)
            self._ready.notify_all()

    def collect(self, wanted: dict, timeout_s: float, where: str = "") -> dict:
        """Wait for message ``wanted[s]`` of every sender s; returns sender -> (tag, body).

        ``where`` (for example "round 12") names the wait in errors.  Raises TimeoutError when
        a sender's message does not come within ``timeout_s`` seconds (over links: when nothing
        at all, not even a keepalive, has come from it for ``timeout_s`` seconds, so a sender
        busy between two rounds is waited for), and ConnectionError when a sender's link closed
        before its message came.
        """
        keys = list(wanted.items())
        at = f" for {where}" if where else ""

        def missing():
            return [s for s, n in keys if (s, n) not in self._messages]

        def settled():
            return not any(s not in self._closed for s in missing())

        if self.waiter is not None:
            self._wait_while_heard(settled, missing, timeout_s)
        with self._ready:
            arrived = self._ready.wait_for(settled, 0 if self.waiter is not None else timeout_s)
            absent = missing()
            if not arrived:
                raise TimeoutError(f"no message from part{'ies' if len(absent) > 1 else 'y'} "
                                   f"{', '.join(map(str, absent))}{at} within {timeout_s:g} s "
                                   f"(timeout_s)")
            if absent:
                raise ConnectionError(
                    "; ".join(f"the link to party {s} closed before its message{at} came: "
                              f"{self._closed[s]}" for s in absent))
            for s, n in keys:
                self._collected[s] = max(self._collected.get(s, 0), n)
            return {s: self._messages.pop((s, n)) for s, n in keys}

    def _wait_while_heard(self, settled, missing, timeout_s: float) -> None:
        """Read the links (`waiter`) until ``settled()``, or until some sender still missing has
        been silent for ``timeout_s`` (counted from now at the latest)."""
        start = time.monotonic()
        while not settled():
            quiet = [max(start, (self.heard(s) if self.heard else None) or start)
                     for s in missing() if s not in self._closed]
            if not quiet:          # the last missing link closed since settled() looked
                return
            deadline = min(quiet) + timeout_s
            if time.monotonic() >= deadline or self.waiter(settled, deadline):
                return
