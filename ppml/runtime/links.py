"""Mutually authenticated TLS 1.3 links between parties: the transport of every cross-party
message, in the Ray runtime's one cluster and between federated parties alike.

A party's `Links` listens on one port.  Each pair of parties has one connection: the party
later in the run's roster connects to the earlier one.  The TLS handshake authenticates both
ends by certificate (`ppml.runtime.tls`: chain, dates, the name expected at that end, the
pinned fingerprint), so nobody else can pose as a peer, read a frame or alter, drop, replay or
reorder one without the link failing (TLS records are sealed with AES-GCM under per-direction
keys and sequence numbers).  Right after the handshake, both ends send an X25519 public key over
the link and derive the pair's key from it (`agreed`): the two parties agree on it over their
authenticated link, and nobody else ever holds it.

A frame is ``length | channel | payload``.  Channel `ENGINE` carries the secret-sharing
engine's rounds (:mod:`ppml.runtime.wire`), delivered into the mailbox under the sender's
engine rank; other channels go to the handler registered for them (`on`).

Who reads: the thread that waits.  A thread waiting for a round's messages or a call's answer
(`Links.wait`) reads every link itself while it waits, so a round costs no hand-over between
threads (a reader thread per link cost 45 us a round, two thirds of a round between two
processes; docs/federated.md).  When no thread has waited for `IDLE_S`, one background thread
reads instead (calls to a served role, links that close).  A thread that cannot send because
its peer's buffer is full reads meanwhile, so two parties sending each other large frames never
block each other.  TLS runs over memory buffers (`ssl.MemoryBIO`) under one lock per link, so
the reader and the senders never drive one SSL object at once (OpenSSL objects are not
thread-safe); when a link breaks, the mailbox and the handlers are told, so a party waiting on
that peer fails at once, naming it.

Silence, not work, is what times out.  A link on which this party has sent nothing for
`KEEPALIVE_S` gets an empty frame on channel `KEEPALIVE` (from a thread of its own, so also
while the party computes for minutes between two rounds); every frame that comes in counts as
hearing from its sender (`heard_from`).  A party waiting for a round's message
(`ppml.runtime.mailbox.Mailbox.collect`) thus fails only when the sender has been silent for its
``timeout_s``: stopped, frozen or cut off, not busy.
"""

from __future__ import annotations

import concurrent.futures
import os
import select
import selectors
import socket
import ssl
import struct
import logging
import threading
import time

from ppml.crypto.agreement import PUBLIC_BYTES, KeyAgreement
from ppml.runtime import wire
from ppml.runtime.deadlines import STARTUP_FACTOR, startup_s
from ppml.runtime.mailbox import Mailbox
from ppml.runtime.tls import Identity, Trust

log = logging.getLogger(__name__)

HANDSHAKE_S = 10.0
"""An accepted connection that does not complete its handshake in time is dropped."""
LENGTH = struct.Struct("<QB")
"""A frame's head: payload length and channel."""
MAX_FRAME_BYTES = 2**32
"""The largest frame a link accepts (4 GiB; its length is read before the payload, so a peer
cannot make a party buffer more)."""
WELCOMING = 8
"""Connections whose handshake a listener runs at once."""
MAX_REFUSED = 5
"""Refused connections a timeout's error lists."""
ENGINE, CALL, ANSWER, KEEPALIVE = 0, 1, 2, 3
"""Channels: the engine's rounds; calls to a role and their answers (`ppml.runtime.remote`);
empty frames that say the sender is alive."""
KEEPALIVE_S = 1.0
"""A link this party has sent nothing on for this long gets a keepalive frame."""
IDLE_S = 0.005
"""After a thread last waited, how long the links stay the waiting threads' to read before the
background reader takes them back."""
_RECORD = 1 << 16
_NAME = struct.Struct("<B")


class LinkError(ConnectionError):
    """A link could not be made or broke; ``peer`` names the party at its other end."""

    def __init__(self, peer: str, message: str):
        super().__init__(message)
        self.peer = peer


def _receive(sock, deadline: float | None) -> bytes:
    """What ``sock`` has now (b"" when nothing came within the link's own timeout and there is
    no ``deadline``: the reader of a live link, for which idling is no error); TimeoutError
    past ``deadline``, EOFError when the peer closed."""
    if deadline is not None:
        sock.settimeout(_left(deadline))
    try:
        data = sock.recv(_RECORD)
    except TimeoutError:
        if deadline is not None:
            raise
        return b""
    if not data:
        raise EOFError
    return data


def _take(sock) -> bytes | None:
    """What the non-blocking ``sock`` has (None: nothing yet); EOFError when the peer closed."""
    try:
        data = sock.recv(_RECORD)
    except (BlockingIOError, InterruptedError):
        return None
    if not data:
        raise EOFError
    return data


class _Tls:
    """One TLS connection over memory buffers: sends under a lock, reads by one thread at a
    time."""

    def __init__(self, sock, context: ssl.SSLContext, server: bool, hostname: str | None):
        self.sock = sock
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = context.wrap_bio(self._in, self._out, server_side=server,
                                    server_hostname=hostname)
        self._ssl_lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._plain = bytearray()
        self.sent = 0                           # bytes written to the socket
        self.eof = False

    def handshake(self, deadline: float) -> None:
        while True:
            try:
                self.obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                self._fill(deadline)
        self._flush()

    def _flush(self) -> None:
        data = self._out.read()
        if data:
            self.sock.sendall(data)
            self.sent += len(data)

    def _fill(self, deadline: float | None) -> None:
        """Feed the TLS object what the socket has (`_receive`)."""
        data = _receive(self.sock, deadline)
        with self._ssl_lock:
            self._in.write(data)

    def send(self, data: bytes, write=socket.socket.sendall) -> None:
        """Seal ``data`` and write it with ``write(sock, bytes)`` (blocking during the
        handshake, `Links._write_all` on a started link)."""
        with self._send_lock:
            with self._ssl_lock:
                self.obj.write(data)
                out = self._out.read()
            write(self.sock, out)
            self.sent += len(out)

    @property
    def buffer(self) -> bytearray:
        """Plaintext received and not yet taken."""
        return self._plain

    def take(self, receive: bool = True) -> None:
        """Move what the (non-blocking) socket has (with ``receive``), and every whole record
        already buffered, into `buffer`, decrypted; ``eof`` once the peer has closed (the
        records before its close are kept)."""
        try:
            data = _take(self.sock) if receive else None
        except EOFError:
            self.eof = True
            return
        with self._ssl_lock:
            if data is not None:
                self._in.write(data)
            while self._in.pending or self.obj.pending():   # no try when nothing is left
                try:
                    chunk = self.obj.read(_RECORD)
                except ssl.SSLWantReadError:
                    return                               # only part of a record: wait for more
                except ssl.SSLZeroReturnError:
                    chunk = b""
                if not chunk:                            # the peer's close_notify
                    self.eof = True
                    return
                self._plain += chunk

    def read(self, n: int, deadline: float | None = None) -> bytes:
        """Exactly ``n`` plaintext bytes; EOFError when the peer closes first, TimeoutError
        past ``deadline``."""
        while len(self._plain) < n:
            with self._ssl_lock:
                if self._in.pending or self.obj.pending():   # no try when nothing came in
                    try:
                        data = self.obj.read(_RECORD)
                    except ssl.SSLWantReadError:
                        data = None                      # only part of a record: read more
                    except ssl.SSLZeroReturnError:
                        raise EOFError from None
                    if data == b"":                      # the peer's close_notify
                        raise EOFError
                    if data:
                        self._plain += data
                        continue
            self._fill(deadline)
        data = bytes(self._plain[:n])
        del self._plain[:n]
        return data


class _Plain:
    """INSECURE: the same connection without TLS, for `jobs.bench_links` to measure what TLS
    costs.  Nothing is authenticated or encrypted; never used by a run."""

    def __init__(self, sock):
        self.sock = sock
        self._lock = threading.Lock()
        self._buffer = bytearray()
        self.sent = 0
        self.eof = False

    def send(self, data: bytes, write=socket.socket.sendall) -> None:
        with self._lock:
            write(self.sock, data)
            self.sent += len(data)

    @property
    def buffer(self) -> bytearray:
        return self._buffer

    def take(self, receive: bool = True) -> None:
        try:
            data = _take(self.sock) if receive else None
        except EOFError:
            self.eof = True
            return
        if data is not None:
            self._buffer += data

    def read(self, n: int, deadline: float | None = None) -> bytes:
        while len(self._buffer) < n:
            self._buffer += _receive(self.sock, deadline)
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data


class Links:
    """This party's links to its peers, and the listening socket they connect to.

    ``identity``: this party's `Identity`; ``host``, ``port``: where it listens (port 0: any
    free port); ``mailbox``: where engine frames go, under ``ranks[peer name]`` (None when this
    party runs no engine program)."""

    def __init__(self, identity: Identity, host: str, mailbox: Mailbox | None = None,
                 ranks: dict | None = None, port: int = 0, insecure_plaintext: bool = False):
        self.identity = identity
        self.insecure_plaintext = insecure_plaintext
        """INSECURE, `jobs.bench_links` only: no TLS, peers named by what they say."""
        self.name = identity.name
        self.mailbox = mailbox
        self.ranks = dict(ranks or {})
        self._peer_of_rank = {rank: peer for peer, rank in self.ranks.items()}
        self.agreed = {}     # peer -> the key agreed over the link
        self.refused = []    # (address, why) of connections refused while accepting
        self._server = socket.create_server((host, port))
        self._links = {}     # peer -> _Tls
        self._handlers = {}  # channel -> handler(peer, payload)
        self._closers = []   # handler(peer, reason) when a link breaks
        self._closed = {}    # peer -> why its link closed
        self.heard_from = {}             # peer -> when a frame of it last came in
        self._sent_at = {}               # peer -> when this party last sent it a frame
        self._keepalive = None
        self._change = threading.Condition()
        self._lock = threading.Lock()
        self.timeout_s: float | None = None
        self._selector = selectors.DefaultSelector()
        self._wake_in, self._wake_out = socket.socketpair()
        self._wake_in.setblocking(False)
        self._wake_out.setblocking(False)
        self._selector.register(self._wake_in, selectors.EVENT_READ, None)
        self._lead = threading.Lock()        # held by the thread reading the links
        self._activity = threading.Condition()
        self._turn = 0                       # counts the readers' passes, under _activity
        self._waiters = 0                    # threads in `wait`, under _activity
        self._last_wait = 0.0
        self._closing = False
        self._background = None
        self._background_leads = False
        self._backlog = set()                # peers whose buffered records are still unread
        if mailbox is not None:
            mailbox.waiter = self.wait
            mailbox.heard = self._heard_from_rank

    @property
    def address(self) -> tuple:
        """(host, port) on which the peers later in the roster connect."""
        return self._server.getsockname()[:2]

    def on(self, channel: int, handler, closed=None) -> None:
        """Deliver the frames of ``channel`` to ``handler(peer, payload)``; ``closed(peer,
        reason)`` hears when a link breaks."""
        self._handlers[channel] = handler
        if closed is not None:
            self._closers.append(closed)

    def connect(self, roster: list, addresses: dict, trust: Trust, timeout_s: float,
                starting: bool = False) -> None:
        """Link up with every other party of ``roster`` (names, this party among them): connect
        to those before it, accept those after it, all within ``timeout_s`` (the links'
        silence bound from then on), or, while the peers may still be ``starting`` their
        processes, `ppml.runtime.deadlines.startup_s` of it.

        ``addresses[name]``: (host, port) of each party this one connects to.  A peer that is
        refused, or that does not come in time, raises `LinkError` naming it.
        """
        if self.name not in roster:
            raise ValueError(f"{self.name} is not in the roster {roster}")
        self.timeout_s = timeout_s
        within = startup_s(timeout_s) if starting else timeout_s
        limit = f"{within:g} s ({STARTUP_FACTOR} x timeout_s)" if starting else \
            f"{within:g} s (timeout_s)"
        deadline = time.monotonic() + within
        position = roster.index(self.name)
        client = None if self.insecure_plaintext else self.identity.context(trust, server=False)
        for peer in roster[:position]:
            self._dial(peer, tuple(addresses[peer]), client, trust, deadline, limit)
        later = roster[position + 1:]
        if later:
            server = None if self.insecure_plaintext else self.identity.context(trust, server=True)
            self._accept(later, server, trust, deadline, limit)
        self._server.close()

    def _accept(self, later: list, context, trust: Trust, deadline: float,
                limit: str) -> None:
        """Welcome the parties of ``later``, each connection's handshake on its own thread (at
        most `WELCOMING` at once), so that a stranger who connects and says nothing delays
        nobody; `LinkError` naming the first absent party at ``deadline``."""
        welcoming = concurrent.futures.ThreadPoolExecutor(WELCOMING,
                                                          thread_name_prefix="ppml-welcome")
        try:
            while any(p not in self._links for p in later):
                if time.monotonic() >= deadline:
                    absent = [p for p in later if p not in self._links]
                    refused = "".join(f"; refused {a[0]}:{a[1]}: {why}"
                                      for a, why in self.refused[:MAX_REFUSED])
                    raise LinkError(absent[0], f"{', '.join(absent)} did not connect to "
                                               f"{self.name} within {limit}{refused}")
                self._server.settimeout(min(_left(deadline), 0.2))
                try:
                    sock, where = self._server.accept()
                except TimeoutError:
                    continue
                except OSError as exc:                   # e.g. out of file descriptors
                    self._refuse(("?", 0), f"accept failed: {exc}")
                    time.sleep(0.05)
                    continue
                welcoming.submit(self._welcome, sock, where, context, trust, later, deadline)
        finally:
            welcoming.shutdown(wait=False, cancel_futures=True)

    def _refuse(self, where: tuple, why: str) -> None:
        with self._lock:
            if len(self.refused) < 10 * MAX_REFUSED:
                self.refused.append((where[:2], why))

    def _dial(self, peer: str, address: tuple, context, trust: Trust, deadline: float,
              limit: str) -> None:
        while True:                                      # the peer may not listen yet
            try:
                sock = socket.create_connection(address, timeout=_left(deadline))
                break
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise LinkError(peer, f"{self.name} could not reach {peer} at {address} "
                                          f"within {limit}: {exc}") from None
                time.sleep(0.05)
        if self.insecure_plaintext:
            link = _Plain(sock)
            link.send(_NAME.pack(len(self.name)) + self.name.encode())
            self._start(peer, link)
            return
        tls = _Tls(sock, context, False, peer)
        try:
            try:
                tls.handshake(deadline)
            except ssl.SSLCertVerificationError as exc:
                raise LinkError(peer, f"{self.name} refused the certificate of {peer} at "
                                      f"{address}: {exc.verify_message}") from None
            trust.check(peer, tls.obj.getpeercert(binary_form=True))
            self._agree(peer, tls, deadline)
        except LinkError:
            sock.close()
            raise
        except TimeoutError:
            sock.close()
            raise LinkError(peer, f"{peer} at {address} did not complete the handshake with "
                                  f"{self.name} within {limit}") from None
        except (ConnectionError, ValueError) as exc:
            sock.close()
            raise LinkError(peer, f"{self.name} refused {peer} at {address}: {exc}") from None
        except (ssl.SSLError, EOFError, OSError) as exc:
            sock.close()
            why = "closed the connection" if isinstance(exc, EOFError) else str(exc)
            raise LinkError(peer, f"{peer} at {address} refused {self.name} during the TLS "
                                  f"handshake ({why}): is {self.name}'s certificate one "
                                  f"{peer} trusts?") from None
        self._start(peer, tls)

    def _welcome(self, sock, where, context, trust: Trust, later: list, deadline: float) -> None:
        """Authenticate one connecting party; a stranger is refused and recorded, not fatal."""
        handshake_deadline = min(deadline, time.monotonic() + HANDSHAKE_S)
        try:
            if self.insecure_plaintext:
                link = _Plain(sock)
                (length,) = _NAME.unpack(link.read(_NAME.size, handshake_deadline))
                peer = link.read(length, handshake_deadline).decode()
            else:
                link = _Tls(sock, context, True, None)
                link.handshake(handshake_deadline)
                peer = trust.check(None, link.obj.getpeercert(binary_form=True))
            if peer not in later or peer in self._links:
                raise ConnectionError(f"{peer} is not expected to connect to {self.name} now")
            if not self.insecure_plaintext:
                self._agree(peer, link, handshake_deadline)
            self._start(peer, link, expected=later)
        except Exception as exc:                        # noqa: BLE001 - refuse, keep listening
            self._refuse(where, getattr(exc, "verify_message", None) or str(exc)
                         or type(exc).__name__)
            sock.close()

    def _agree(self, peer: str, tls: _Tls, deadline: float) -> None:
        """The pair's key, from X25519 public keys sent over the authenticated link."""
        mine = KeyAgreement(os.urandom(32))
        tls.send(mine.public)
        theirs = tls.read(PUBLIC_BYTES, deadline)
        low, high = sorted((self.name, peer))
        self.agreed[peer] = mine.agree(theirs, f"ppml-link|{low}|{high}".encode())

    def send(self, peer: str, payload: bytes, channel: int = ENGINE) -> None:
        """``payload`` to ``peer`` on ``channel``."""
        link = self._links.get(peer)
        if link is None:
            raise LinkError(peer, f"{self.name} has no link to {peer}")
        if len(payload) > MAX_FRAME_BYTES:
            raise ValueError(f"a frame of {len(payload)} bytes exceeds the links' limit of "
                             f"{MAX_FRAME_BYTES} bytes")
        try:
            link.send(LENGTH.pack(len(payload), channel) + payload, self._write_all)
            self._sent_at[peer] = time.monotonic()
        except TimeoutError:
            raise LinkError(peer, f"{peer} took nothing from {self.name} for "
                                  f"{self.timeout_s:g} s (timeout_s)") from None
        except OSError as exc:
            raise LinkError(peer, f"the link from {self.name} to {peer} is closed: "
                                  f"{self._closed.get(peer, exc)}") from None

    @property
    def bytes_sent(self) -> int:
        """Bytes this party wrote to its sockets since its links started (TLS records and
        handshakes included)."""
        return sum(link.sent for link in self._links.values())

    def _write_all(self, sock, data: bytes) -> None:
        """Write ``data`` to the non-blocking ``sock``; while the peer's buffer is full, read
        the links if no other thread does (the peer may be writing to this party), and give up
        after the link's timeout (TimeoutError)."""
        view = memoryview(data)
        deadline = None
        while view:
            try:
                view = view[sock.send(view):]
                continue
            except (BlockingIOError, InterruptedError):
                pass
            deadline = deadline or time.monotonic() + (self.timeout_s or HANDSHAKE_S)
            if time.monotonic() >= deadline:
                raise TimeoutError
            if self._lead.acquire(blocking=False):
                try:
                    self._pump(0.0)
                finally:
                    self._lead.release()
                self._passed()                        # a waiter's frames may have come
            select.select([], [sock], [], 0.005)

    def close(self) -> None:
        """Close every link and the listening socket; a peer waiting on this party fails at
        once (its reader sees the connection close)."""
        for peer in list(self._links):                # whoever waits on a peer fails now
            self._broken(peer, f"{self.name} closed its links")
        self._closing = True
        self._wake()
        if self._background is not None and self._background is not threading.current_thread():
            self._background.join(1.0)
        leading = self._lead.acquire(timeout=2.0)      # a reader in select is woken above
        try:
            for link in list(self._links.values()):
                self._forget(link)
                link.sock.close()
            self._links.clear()
            self._selector.close()
            self._wake_in.close()
            self._wake_out.close()
        finally:
            if leading:
                self._lead.release()
        self._server.close()

    # -- reading -----------------------------------------------------------------------------
    def _start(self, peer: str, link, expected: list | None = None) -> None:
        """Register the link to ``peer`` (refused if one exists, or ``peer`` is not in
        ``expected``) for reading; frames that came with the handshake are delivered now."""
        with self._lock:
            if peer in self._links or (expected is not None and peer not in expected):
                raise ConnectionError(f"{peer} is already linked to {self.name}")
            self._links[peer] = link
            link.sock.setblocking(False)
            link.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._selector.register(link.sock, selectors.EVENT_READ, peer)
            if self._background is None:
                self._background = threading.Thread(target=self._read_in_background,
                                                     daemon=True, name=f"ppml-links-{self.name}")
                self._background.start()
                self._keepalive = threading.Thread(target=self._keep_alive, daemon=True,
                                                   name=f"ppml-keepalive-{self.name}")
                self._keepalive.start()
        self._backlog.add(peer)           # what came with the handshake: read on the next pass
        self._wake()

    def wait(self, done, deadline: float) -> bool:
        """Until ``done()`` is true (True) or ``deadline`` passes (False); meanwhile this
        thread reads the links whenever no other thread does."""
        with self._activity:
            self._waiters += 1
        try:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0 or self._closing:
                    return done()
                turn = self._turn
                if self._lead.acquire(blocking=False):
                    try:
                        if not done():
                            self._pump(min(left, 1.0))
                    finally:
                        self._lead.release()
                    if self._waiters > 1:
                        self._passed()
                else:                                 # another reads: let it deliver, or
                    if self._background_leads:        # make the background reader step aside
                        self._wake()
                    with self._activity:
                        self._activity.wait_for(lambda: self._turn != turn, min(left, 0.05))
            return True
        finally:
            with self._activity:
                self._waiters -= 1
                self._last_wait = time.monotonic()

    def _passed(self) -> None:
        with self._activity:
            self._turn += 1
            self._activity.notify_all()

    def _wake(self) -> None:
        try:
            self._wake_out.send(b"\0")
        except OSError:
            pass                                      # full (a wake is pending) or closed

    def _read_in_background(self) -> None:
        """Read the links when no thread has waited for `IDLE_S`, until the links close."""
        def idle():
            return self._closing or (not self._waiters and
                                     time.monotonic() - self._last_wait >= IDLE_S)
        while not self._closing:
            with self._activity:
                if not self._activity.wait_for(idle, IDLE_S):
                    continue
            if not self._lead.acquire(timeout=IDLE_S):
                continue
            self._background_leads = True
            try:
                while not self._closing and not self._waiters:
                    self._pump(IDLE_S)
            except (OSError, ValueError) as exc:       # the selector of closed links
                if not self._closing:
                    log.warning("%s: reading the links failed: %s", self.name, exc)
                    time.sleep(IDLE_S)
            finally:
                self._background_leads = False
                self._lead.release()
                self._passed()

    def _keep_alive(self) -> None:
        """Send an empty frame on every link quiet for `KEEPALIVE_S`, until the links close."""
        while not self._closing:
            time.sleep(KEEPALIVE_S / 2)
            now = time.monotonic()
            for peer in list(self._links):
                if now - self._sent_at.get(peer, 0.0) >= KEEPALIVE_S and not self._closing:
                    try:
                        self.send(peer, b"", KEEPALIVE)
                    except (ConnectionError, OSError, ValueError) as exc:   # the link is gone
                        log.debug("%s: no keepalive to %s: %s", self.name, peer, exc)

    def _heard_from_rank(self, rank: int) -> float | None:
        """When a frame last came in from the peer of engine rank ``rank`` (None: never)."""
        return self.heard_from.get(self._peer_of_rank.get(rank))

    def _pump(self, timeout: float) -> None:
        """One pass of the reader (the caller holds ``_lead``): wait up to ``timeout`` for a
        link to have bytes, then deliver every whole frame that came."""
        while self._backlog:
            peer = self._backlog.pop()
            if peer in self._links:
                self._read(peer, self._links[peer], take=False)
        for key, _ in self._selector.select(timeout):
            peer = key.data
            if peer is None:                           # a wake: drain it
                try:
                    while self._wake_in.recv(4096):
                        pass
                except OSError:
                    pass
                continue
            link = self._links.get(peer)
            if link is not None:
                self._read(peer, link)

    def _read(self, peer: str, link, take: bool = True) -> None:
        """Take what ``link``'s socket has (with ``take``) and deliver its whole frames; a
        link that fails is closed, its waiters told why."""
        try:
            link.take(receive=take)
            self._frames(peer, link)
            if link.eof:
                raise EOFError
        except EOFError:
            self._broken(peer, f"{peer} closed the connection")
        except ssl.SSLError as exc:
            self._broken(peer, f"TLS failed on the link from {peer} (a record altered, "
                               f"dropped, replayed or reordered on the wire?): {exc}")
        except Exception as exc:                       # noqa: BLE001 - the link is gone either way
            self._broken(peer, f"{type(exc).__name__}: {exc}")

    def _frames(self, peer: str, link) -> None:
        """Deliver the whole frames in ``link``'s buffer."""
        buffer, rank = link.buffer, self.ranks.get(peer)
        while len(buffer) >= LENGTH.size:
            length, channel = LENGTH.unpack_from(buffer)
            if length > MAX_FRAME_BYTES:
                raise ValueError(f"a frame of {length} bytes is over the limit")
            end = LENGTH.size + length
            if len(buffer) < end:
                return
            payload = bytes(buffer[LENGTH.size:end])
            del buffer[:end]
            self.heard_from[peer] = time.monotonic()
            if channel == KEEPALIVE:
                continue
            if channel == ENGINE and self.mailbox is not None and rank is not None:
                self._deliver(rank, payload)
            elif channel in self._handlers:
                self._handlers[channel](peer, payload)
            else:
                raise ValueError(f"{peer} sent a frame on channel {channel}, which "
                                 f"{self.name} does not serve")

    def _deliver(self, rank: int, payload: bytes) -> None:
        number, tag, body = wire.read_message(_reader(payload))
        self.mailbox.deliver(number, rank, tag, body)

    def _forget(self, link) -> None:
        try:
            self._selector.unregister(link.sock)
        except (KeyError, ValueError, OSError):
            pass                                      # not registered, or already closed

    def wait_closed(self, peers: list, idle_s: float) -> None:
        """Block until each of ``peers`` has closed its link; TimeoutError naming those of them
        from whom no frame has come in for ``idle_s`` seconds (each peer's own frames count:
        another peer's keepalives do not keep a stopped one's wait open)."""
        start = time.monotonic()
        with self._change:
            while any(p not in self._closed for p in peers):
                now = time.monotonic()
                heard = {p: self.heard_from.get(p, start) for p in peers if p not in self._closed}
                silent = [p for p, at in heard.items() if now - at > idle_s]
                if silent:
                    raise TimeoutError(f"{', '.join(silent)} sent {self.name} nothing for "
                                       f"{idle_s:g} s and did not close (party_timeout_s)")
                self._change.wait(min(1.0, idle_s - (now - min(heard.values())) + 0.01))

    def _broken(self, peer: str, reason: str) -> None:
        rank = self.ranks.get(peer)
        link = self._links.get(peer)
        if link is not None:                  # the peer must not wait on a dead link either
            self._forget(link)
            try:
                link.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        with self._change:
            self._closed.setdefault(peer, reason)
            self._change.notify_all()
        if self.mailbox is not None and rank is not None:
            self.mailbox.close(rank, reason)
        for closed in self._closers:
            closed(peer, reason)


def _reader(frame: bytes):
    """``read(n)`` over one frame: exactly n bytes, or ValueError."""
    at = [0]

    def read(n: int) -> bytes:
        if at[0] + n > len(frame):
            raise ValueError("malformed frame: shorter than its header says")
        data = frame[at[0]:at[0] + n]
        at[0] += n
        return data
    return read


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.001)
