"""TCP links: only a peer that holds the pair key gets a link; frames reach the mailbox."""

from concurrent.futures import ThreadPoolExecutor

from ppml.runtime import wire
from ppml.runtime.links import Links
from ppml.runtime.mailbox import Mailbox

KEY = bytes(range(32))


def link_up(keys: list, timeout_s: float = 5.0) -> list:
    """Two parties on 127.0.0.1 linking up in threads; returns (links, error) per party."""
    boxes = [Mailbox(), Mailbox()]
    links = [Links(rank, 2, boxes[rank], "127.0.0.1") for rank in range(2)]
    addresses = [link.address for link in links]

    def connect(rank):
        try:
            links[rank].connect(addresses, {(0, 1): keys[rank]}, timeout_s)
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
