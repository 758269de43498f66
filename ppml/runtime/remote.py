"""Calls between roles in different trust domains, over their TLS link: no handle, no pickle.

In the federated runtime a role that must ask another party something (the private CB's p'
pulling an arm from the world, party 0 asking the dealer for corrections) holds a `RemoteRole`:
the same ``call`` / ``submit`` as a `ppml.runtime.roles.Role`, each wait bounded by its
``timeout_s`` and a failure naming the role.  The party that answers serves one object
(`serve`) and says which methods each peer may call: anything else is refused with a
`PermissionError`, so a peer can never reach a method it was not given (unlike a Ray actor
handle, which runs anything in the actor).  Arguments and values cross as data only
(`ppml.runtime.codec`).

A call is ``[id, method, args]`` on channel `CALL`; its answer ``[id, ok, value or error]`` on
channel `ANSWER`.  The server runs calls on a small thread pool, so the link's reader never
blocks; a thread waiting for an answer reads its links meanwhile (`Links.wait`, through the
answer's future); when a link breaks, the calls waiting on it fail at once.

A call may run as long as it needs: while it runs, the server sends ``[id, None, None]`` on
`ANSWER` every `BUSY_EVERY_S` (a busy note), and the caller's ``timeout_s`` counts from the last
thing it heard about the call, not from its start.  A peer that stops (a stopped or frozen
process, a lost machine) falls silent and is named within ``timeout_s``; a long aggregation or
turn is not cut short.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import logging
import threading
import time

from ppml.runtime import codec
from ppml.runtime.links import ANSWER, CALL, Links
from ppml.runtime.roles import DEFAULT_TIMEOUT_S, Pending, RoleError, gather

log = logging.getLogger(__name__)

MAX_PENDING = 64
"""Calls a served role queues at most; more are refused (a peer cannot flood its memory)."""
BUSY_EVERY_S = 1.0
"""How often a server tells a caller that its call is still running."""


class Server(concurrent.futures.ThreadPoolExecutor):
    """The pool that runs the served calls, and the busy notes of those that run long: one
    thread sends them for every call running longer than `BUSY_EVERY_S`."""

    def __init__(self, links: Links, workers: int, busy_every_s: float = BUSY_EVERY_S):
        super().__init__(workers, thread_name_prefix=f"serve-{links.name}")
        self.links, self.busy_every_s = links, busy_every_s
        self.running = {}          # (peer, call id) -> when it started
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._notes = threading.Thread(target=self._send_notes, daemon=True,
                                       name=f"busy-{links.name}")
        self._notes.start()

    def started(self, peer: str, call_id: int) -> None:
        with self._lock:
            self.running[peer, call_id] = time.monotonic()

    def finished(self, peer: str, call_id: int) -> None:
        with self._lock:
            self.running.pop((peer, call_id), None)

    def _send_notes(self) -> None:
        while not self._stop.wait(self.busy_every_s / 2):
            now = time.monotonic()
            with self._lock:
                late = [key for key, began in self.running.items()
                        if now - began >= self.busy_every_s]
            for peer, call_id in late:
                try:
                    self.links.send(peer, codec.encode([call_id, None, None]), ANSWER)
                except Exception as exc:               # noqa: BLE001 - the link is gone
                    log.debug("%s could not tell %s it is busy: %s", self.links.name, peer, exc)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._stop.set()
        super().shutdown(wait, cancel_futures=cancel_futures)


def serve(links: Links, role, allowed: dict, pass_caller: bool = False,
          workers: int = 4) -> Server:
    """Answer the calls of ``links``' peers on ``role``: ``allowed[peer]`` is the set of
    methods that peer may call; with ``pass_caller`` each method gets the caller's name first
    (the dealer answers each party with its own key).  Returns the pool (shut it down last)."""
    pool = Server(links, workers)
    pending = threading.BoundedSemaphore(MAX_PENDING)

    def answer(peer: str, call_id: int, ok: bool, value) -> None:
        try:
            try:
                payload = codec.encode([call_id, ok, value])
            except Exception as exc:                   # noqa: BLE001 - a value that is not data
                payload = codec.encode([call_id, False, TypeError(
                    f"{links.name} could not send its answer: {type(exc).__name__}: {exc}")])
            links.send(peer, payload, ANSWER)
        except Exception as exc:                       # noqa: BLE001 - the link is gone
            log.warning("%s could not answer %s: %s", links.name, peer, exc)

    def run(peer: str, call_id: int, method: str, args: list) -> None:
        pool.started(peer, call_id)
        try:
            value = getattr(role, method)(*([peer] if pass_caller else []), *args)
        except Exception as exc:                       # noqa: BLE001 - it goes to the caller
            pool.finished(peer, call_id)
            answer(peer, call_id, False, exc)
        else:
            pool.finished(peer, call_id)
            answer(peer, call_id, True, value)

    def on_call(peer: str, payload: bytes) -> None:
        """Runs in the thread reading the links, which may be sending to ``peer``: every
        answer, refusals too, is sent from the pool."""
        call_id, method, args = codec.decode(payload)
        if method not in allowed.get(peer, ()):
            pool.submit(answer, peer, call_id, False, PermissionError(
                f"{peer} may not call {links.name}.{method}"))
            return
        if not pending.acquire(blocking=False):
            pool.submit(answer, peer, call_id, False, RuntimeError(
                f"{links.name} has {MAX_PENDING} calls waiting; {peer}'s {method} is refused"))
            return

        def run_and_release():
            try:
                run(peer, call_id, method, args)
            finally:
                pending.release()
        pool.submit(run_and_release)

    links.on(CALL, on_call)
    return pool


class Caller:
    """The calls this party has made over ``links`` and is waiting for."""

    def __init__(self, links: Links):
        self.links = links
        self._ids = itertools.count()
        self._waiting = {}  # id -> (peer, future)
        self._lock = threading.Lock()
        links.on(ANSWER, self._on_answer, closed=self._on_closed)

    def start(self, peer: str, method: str, args: tuple) -> concurrent.futures.Future:
        future = concurrent.futures.Future()
        future.waiter = self.links.wait        # `roles.gather` reads the links while it waits
        future.heard = time.monotonic()        # ... and counts its silence from here
        with self._lock:
            call_id = next(self._ids)
            self._waiting[call_id] = (peer, future)
        try:
            self.links.send(peer, codec.encode([call_id, method, list(args)]), CALL)
        except BaseException as exc:
            with self._lock:
                mine = self._waiting.pop(call_id, None)
            if mine is not None:                     # else the link's closing failed it first
                future.set_exception(exc)
        return future

    def _on_answer(self, peer: str, payload: bytes) -> None:
        call_id, ok, value = codec.decode(payload)
        with self._lock:
            waiting = self._waiting.get(call_id)
            if waiting is None or waiting[0] != peer:
                raise ValueError(f"{peer} answered call {call_id}, which it was not asked")
            if ok is None:                           # a busy note: the call is still running
                waiting[1].heard = time.monotonic()
                return
            del self._waiting[call_id]
        future = waiting[1]
        future.set_result(value) if ok else future.set_exception(
            value if isinstance(value, BaseException) else RuntimeError(repr(value)))

    def _on_closed(self, peer: str, reason: str) -> None:
        with self._lock:
            lost = [k for k, (p, _) in self._waiting.items() if p == peer]
            futures = [self._waiting.pop(k)[1] for k in lost]
        for future in futures:
            future.set_exception(RoleError(peer, f"the link to {peer} closed: {reason}"))


class RemoteRole:
    """A role of another party, reached over this party's link to it (`Caller`)."""

    def __init__(self, caller: Caller, peer: str, timeout_s: float | None = DEFAULT_TIMEOUT_S):
        self.name, self.timeout_s = peer, timeout_s
        self._caller = caller

    def submit(self, method: str, *args) -> Pending:
        return Pending(self, method, future=self._caller.start(self.name, method, args))

    def call(self, method: str, *args):
        return gather([self.submit(method, *args)])[0]
