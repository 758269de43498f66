"""TCP links: only a peer that holds the pair key gets a link; frames reach the mailbox sealed:
a man in the middle reads nothing and can change nothing unnoticed."""

import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from ppml.runtime import wire
from ppml.runtime.links import Links
from ppml.runtime.mailbox import Mailbox

KEY = bytes(range(32))


def link_up(keys: list, timeout_s: float = 5.0, proxy=None) -> list:
    """Two parties on 127.0.0.1 linking up in threads (party 1 through ``proxy`` if given, a
    `Wire` in front of party 0); returns (links, error) per party."""
    boxes = [Mailbox(), Mailbox()]
    links = [Links(rank, 2, boxes[rank], "127.0.0.1") for rank in range(2)]
    addresses = [link.address for link in links]
    if proxy is not None:
        proxy.forward_to(addresses[0])

    def connect(rank):
        try:
            seen = [proxy.address, addresses[1]] if proxy is not None and rank == 1 \
                else addresses
            links[rank].connect(seen, {(0, 1): keys[rank]}, timeout_s)
            return links[rank], None
        except (ConnectionError, TimeoutError) as exc:
            return links[rank], exc

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(connect, range(2)))


def test_linked_parties_exchange_frames_into_their_mailboxes():
    (low, err0), (high, err1) = link_up([KEY, KEY])
    assert err0 is None and err1 is None
    high.send(0, wire.encode_value(1, "shape", (4, 5)))
    low.send(1, wire.encode_value(1, "shape", (6,)))
    assert low.mailbox.collect(1, [1], timeout_s=5.0) == {1: ("shape", (4, 5))}
    assert high.mailbox.collect(1, [0], timeout_s=5.0) == {0: ("shape", (6,))}


def test_a_connection_without_the_pair_key_is_refused():
    (_, err0), (_, err1) = link_up([KEY, bytes(32)], timeout_s=1.0)
    assert isinstance(err1, ConnectionError) and "handshake" in str(err1)
    assert isinstance(err0, TimeoutError) and "parties [1] did not connect" in str(err0)


HANDSHAKE_FROM_CONNECTOR = 4 + 16 + 32
"""Bytes party 1 sends before its first frame: its rank, its nonce, its MAC."""


class Wire:
    """A man in the middle between party 1 and party 0: forwards every byte both ways, keeps
    what it saw, and flips the bit of one byte party 1 sends if asked."""

    def __init__(self, flip_at: int | None = None):
        self._server = socket.create_server(("127.0.0.1", 0))
        self.address = self._server.getsockname()[:2]
        self.seen = bytearray()
        self._flip_at = flip_at

    def forward_to(self, target) -> None:
        threading.Thread(target=self._run, args=(tuple(target),), daemon=True).start()

    def _run(self, target) -> None:
        near, _ = self._server.accept()
        far = socket.create_connection(target)
        threading.Thread(target=self._pump, args=(far, near, None), daemon=True).start()
        self._pump(near, far, self._flip_at)

    def _pump(self, source, sink, flip_at) -> None:
        sent = 0
        while data := source.recv(1 << 16):
            data = bytearray(data)
            if flip_at is not None and sent <= flip_at < sent + len(data):
                data[flip_at - sent] ^= 1
            sent += len(data)
            self.seen += data
            sink.sendall(data)


SECRET = "a share nobody on the wire may read"


def test_an_eavesdropper_on_the_wire_reads_no_frame():
    wire_ = Wire()
    (low, err0), (high, err1) = link_up([KEY, KEY], proxy=wire_)
    assert err0 is None and err1 is None
    high.send(0, wire.encode_value(1, "secret", SECRET))
    low.send(1, wire.encode_value(1, "secret", SECRET + "!"))
    assert low.mailbox.collect(1, [1], timeout_s=5.0) == {1: ("secret", SECRET)}
    assert high.mailbox.collect(1, [0], timeout_s=5.0) == {0: ("secret", SECRET + "!")}
    assert SECRET.encode() not in wire_.seen and b"secret" not in wire_.seen


def test_a_frame_altered_on_the_wire_closes_the_link():
    wire_ = Wire(flip_at=HANDSHAKE_FROM_CONNECTOR + 8 + 3)    # inside party 1's first frame
    (low, err0), (high, err1) = link_up([KEY, KEY], proxy=wire_)
    assert err0 is None and err1 is None
    high.send(0, wire.encode_value(1, "shape", (4, 5)))
    with pytest.raises(ConnectionError, match="failed authentication"):
        low.mailbox.collect(1, [1], timeout_s=5.0)
