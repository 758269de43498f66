"""Authenticated, encrypted TCP links between parties: the transport under :class:`LinkComm`.

Ray sets the links up (each party listens on its node's IP, the driver passes the addresses
around) and then steps aside: a round's messages go party to party over the sockets, about 15
times faster than Ray actor calls on one machine (docs/ray-runtime.md has the numbers).

There is one connection per pair of parties: the higher rank connects to the lower.  Both ends
prove they hold the pair's key (the PRSS key the two parties share) with an HMAC over fresh
nonces before the link carries anything, so nobody else on the network can pose as a peer.
Every frame then travels sealed with AES-256-GCM under a key of its direction, derived from the
pair key and both handshake nonces (fresh per connection), its nonce the frame's sequence
number and its associated data the two ranks: an eavesdropper learns the frames' lengths and
times only, and a frame altered, dropped, replayed or reordered on the wire fails
authentication, which closes the link.  Each link has a reader thread that opens frames and
decodes them (:mod:`ppml.runtime.wire`) into the mailbox; when a link breaks, the mailbox is
told, so a party waiting on that peer fails at once.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import os
import socket
import struct
import threading
import time

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ppml.crypto.rng import derive_key
from ppml.runtime import wire
from ppml.runtime.mailbox import Mailbox

NONCE_BYTES = 16
MAC_BYTES = 32
HANDSHAKE_S = 10.0  # a connection that does not complete the handshake in time is dropped
RANK = struct.Struct("<I")
LENGTH = struct.Struct("<Q")
SEQUENCE = struct.Struct(">4xQ")
"""A frame's 96-bit AES-GCM nonce: its sequence number in its direction."""
MAX_FRAME_BYTES = 2**31 - 1
"""The largest frame one AES-GCM call seals here."""


class _Sealer:
    """One direction of a link: AES-256-GCM under its own key, nonces counting frames."""

    __slots__ = ("_aead", "_associated", "_next", "_lock")

    def __init__(self, key: bytes, sender: int, receiver: int):
        self._aead = AESGCM(key)
        self._associated = b"ppml-frame|%d->%d" % (sender, receiver)
        self._next = 0
        self._lock = threading.Lock()

    def send(self, sock, frame: bytes) -> None:
        """Seal ``frame`` and write it to ``sock``: sequence number and write under one lock,
        so frames reach the wire in the order of their nonces."""
        if len(frame) > MAX_FRAME_BYTES:
            raise ValueError(f"a frame of {len(frame)} bytes exceeds the links' limit of "
                             f"{MAX_FRAME_BYTES} bytes")
        with self._lock:
            nonce, self._next = SEQUENCE.pack(self._next), self._next + 1
            sealed = self._aead.encrypt(nonce, frame, self._associated)
            sock.sendall(LENGTH.pack(len(sealed)) + sealed)

    def open(self, sealed: bytes) -> bytes:
        nonce, self._next = SEQUENCE.pack(self._next), self._next + 1
        return self._aead.decrypt(nonce, sealed, self._associated)


class Links:
    """This party's links to all its peers, and the listening socket they connect to."""

    def __init__(self, rank: int, parties: int, mailbox: Mailbox, host: str):
        self.rank = rank
        self.parties = parties
        self.mailbox = mailbox
        self._server = socket.create_server((host, 0))
        self._sockets = {}  # peer -> connected socket
        self._sealers = {}  # peer -> the sealer of frames to it

    @property
    def address(self) -> tuple:
        """(host, port) on which the peers of higher rank connect."""
        return self._server.getsockname()[:2]

    def connect(self, addresses: list, pair_keys: dict, timeout_s: float) -> None:
        """Link up with every peer: connect to lower ranks, accept higher ranks, authenticate.

        ``addresses[j]`` is party j's :attr:`address`; ``pair_keys[(i, j)]`` (i < j) the key
        this party shares with each peer.
        """
        deadline = time.monotonic() + timeout_s
        keys = {peer: pair_keys[min(peer, self.rank), max(peer, self.rank)]
                for peer in range(self.parties) if peer != self.rank}
        auth = {peer: derive_key(key, "tcp-link") for peer, key in keys.items()}
        for peer in range(self.rank):
            try:
                sock = socket.create_connection(tuple(addresses[peer]), timeout=_left(deadline))
            except OSError as exc:
                raise ConnectionError(f"party {self.rank} could not reach party {peer} at "
                                      f"{addresses[peer]}: {exc}") from exc
            try:
                nonces = self._greet(sock, peer, auth[peer], deadline)
            except BaseException:
                sock.close()
                raise
            self._start(peer, sock, keys[peer], nonces)
        while len(self._sockets) < self.parties - 1:
            self._server.settimeout(_left(deadline))
            try:
                sock, _ = self._server.accept()
            except TimeoutError:
                absent = [p for p in range(self.rank + 1, self.parties) if p not in self._sockets]
                raise TimeoutError(f"parties {absent} did not connect within {timeout_s:g} s "
                                   f"(timeout_s)") from None
            welcomed = self._welcome(sock, auth, deadline)
            if welcomed is None:
                sock.close()  # not a peer holding the pair key: ignore it, keep listening
            else:
                peer, nonces = welcomed
                self._start(peer, sock, keys[peer], nonces)
        self._server.close()

    def send(self, peer: int, frame: bytes) -> None:
        """``frame`` to ``peer``, sealed."""
        self._sealers[peer].send(self._sockets[peer], frame)

    def close(self) -> None:
        """Close every link and the listening socket; a peer waiting on this party fails at
        once (its reader sees the connection close)."""
        for sock in self._sockets.values():
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass                                  # already closed by the peer
            sock.close()
        self._sockets.clear()
        self._server.close()

    # -- handshake: the connecting party (higher rank) greets, the listener welcomes ----------
    def _greet(self, sock, peer: int, key: bytes, deadline: float) -> tuple:
        """The handshake's (listener's, connector's) nonces, once ``peer`` proved its key."""
        sock.settimeout(_left(deadline))
        try:
            server_nonce = _read(sock, NONCE_BYTES)
            nonce = os.urandom(NONCE_BYTES)
            sock.sendall(RANK.pack(self.rank) + nonce
                         + _mac(key, b"connect", peer, self.rank, server_nonce, nonce))
            answer = _read(sock, MAC_BYTES)
        except EOFError:
            raise ConnectionError(f"party {peer} closed the link during the handshake "
                                  f"(it does not hold the same pair key?)") from None
        if not hmac.compare_digest(answer, _mac(key, b"accept", peer, self.rank, server_nonce,
                                                nonce)):
            raise ConnectionError(f"the listener at {sock.getpeername()} failed to "
                                  f"authenticate as party {peer}")
        return bytes(server_nonce), nonce

    def _welcome(self, sock, auth: dict, deadline: float) -> tuple | None:
        """(The authenticated rank of a connecting peer, the handshake's (listener's,
        connector's) nonces), or None if it is not a peer."""
        try:
            sock.settimeout(min(_left(deadline), HANDSHAKE_S))
            nonce = os.urandom(NONCE_BYTES)
            sock.sendall(nonce)
            (peer,) = RANK.unpack(_read(sock, RANK.size))
            client_nonce = _read(sock, NONCE_BYTES)
            mac = _read(sock, MAC_BYTES)
            if not self.rank < peer < self.parties or peer in self._sockets:
                return None
            key = auth[peer]
            if not hmac.compare_digest(mac, _mac(key, b"connect", self.rank, peer, nonce,
                                                 client_nonce)):
                return None
            sock.sendall(_mac(key, b"accept", self.rank, peer, nonce, client_nonce))
            return peer, (nonce, bytes(client_nonce))
        except (OSError, EOFError):
            return None

    # -- reading -----------------------------------------------------------------------------
    def _start(self, peer: int, sock, key: bytes, nonces: tuple) -> None:
        """Start the link to ``peer``: one frame key per direction from the pair ``key`` and
        the handshake's ``nonces`` (listener's, connector's)."""
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        low, high = sorted((self.rank, peer))

        def direction(sender: int, receiver: int) -> _Sealer:
            return _Sealer(derive_key(key, "tcp-frames", low, high, nonces[0].hex(),
                                      nonces[1].hex(), sender, receiver), sender, receiver)

        self._sealers[peer] = direction(self.rank, peer)
        self._sockets[peer] = sock
        threading.Thread(target=self._read_from, args=(peer, sock, direction(peer, self.rank)),
                         daemon=True, name=f"ppml-link-{self.rank}-{peer}").start()

    def _read_from(self, peer: int, sock, opener: _Sealer) -> None:
        """Deliver ``peer``'s frames into the mailbox until the link closes or breaks."""
        stream = sock.makefile("rb", buffering=1 << 16)  # a small frame: one recv, not three

        def read(n: int) -> bytes:
            data = stream.read(n)
            if len(data) < n:
                raise EOFError
            return data

        try:
            while True:
                (length,) = LENGTH.unpack(read(LENGTH.size))
                if length > MAX_FRAME_BYTES + 16:
                    raise ValueError(f"a sealed frame of {length} bytes is over the limit")
                round_, tag, body = wire.read_message(_reader(opener.open(read(length))))
                self.mailbox.deliver(round_, peer, tag, body)
        except EOFError:
            self.mailbox.close(peer, "the peer closed the connection")
        except InvalidTag:
            self.mailbox.close(peer, "a frame failed authentication (altered, dropped, "
                                     "replayed or reordered on the wire)")
        except (OSError, ValueError) as exc:
            self.mailbox.close(peer, f"{type(exc).__name__}: {exc}")


def _reader(frame: bytes):
    """``read(n)`` over one opened frame: exactly n bytes, or ValueError."""
    stream = io.BytesIO(frame)

    def read(n: int) -> bytes:
        data = stream.read(n)
        if len(data) < n:
            raise ValueError("malformed frame: shorter than its header says")
        return data
    return read


def _mac(key: bytes, role: bytes, low: int, high: int, nonce_low: bytes,
         nonce_high: bytes) -> bytes:
    message = b"|".join([b"ppml-link", role, str(low).encode(), str(high).encode(),
                         nonce_low, nonce_high])
    return hmac.new(key, message, hashlib.sha256).digest()


def _read(sock, n: int) -> bytearray:
    """Exactly ``n`` bytes; EOFError when the peer closes first."""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if not k:
            raise EOFError
        got += k
    return buf


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.001)
