"""TLS links: only a peer whose certificate is trusted, valid, pinned and rightly named gets a
link; frames cross sealed: a man in the middle reads nothing and can change, replay or reorder
nothing unnoticed; each pair agrees a key over its link."""

import datetime as dt
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ppml.crypto.agreement import PUBLIC_BYTES, KeyAgreement
from ppml.runtime import wire
from ppml.runtime.links import LinkError, Links
from ppml.runtime.mailbox import Mailbox
from ppml.runtime.tls import Authority, Identity, Trust, fingerprint

NAMES = ["party-0", "party-1"]


def issued(authority: Authority, name: str, **issue) -> Identity:
    identity = Identity(name)
    identity.install(authority.issue(identity.request(), **issue))
    return identity


def federation(**issue_1) -> tuple:
    """Two identities of one authority (party 1's issued with ``issue_1``) and the trust of a
    party of it, pinning both."""
    ca = Authority()
    ids = [issued(ca, NAMES[0]), issued(ca, NAMES[1], **issue_1)]
    return ids, Trust(ca.certificate, {i.name: fingerprint(i.certificate) for i in ids})


def link_up(identities: list, trusts: list, timeout_s: float = 5.0, proxy=None) -> list:
    """Two parties on 127.0.0.1 linking up in threads (party 1 through ``proxy`` if given, a
    `Wire` in front of party 0); returns (links, error) per party."""
    links = [Links(identity, "127.0.0.1", Mailbox(), {n: r for r, n in enumerate(NAMES)})
             for identity in identities]
    address = links[0].address
    if proxy is not None:
        proxy.forward_to(address)
        address = proxy.address

    def connect(rank):
        try:
            links[rank].connect(NAMES, {NAMES[0]: address}, trusts[rank], timeout_s)
            return links[rank], None
        except ConnectionError as exc:
            return links[rank], exc

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(connect, range(2)))


def test_linked_parties_exchange_frames_and_agree_a_key():
    ids, trust = federation()
    (low, err0), (high, err1) = link_up(ids, [trust, trust])
    assert err0 is None and err1 is None
    high.send("party-0", wire.encode_value(1, "shape", (4, 5)))
    low.send("party-1", wire.encode_value(1, "shape", (6,)))
    assert low.mailbox.collect({1: 1}, timeout_s=5.0) == {1: ("shape", (4, 5))}
    assert high.mailbox.collect({0: 1}, timeout_s=5.0) == {0: ("shape", (6,))}
    assert low.agreed["party-1"] == high.agreed["party-0"] and len(low.agreed["party-1"]) == 32
    (again, _), _ = link_up(ids, [trust, trust])
    assert again.agreed["party-1"] != low.agreed["party-1"]          # fresh for every link


def test_parties_sending_each_other_frames_larger_than_the_buffers_do_not_block():
    """Each party sends first and collects after, as every round does: with frames larger than
    the sockets' buffers, each sender reads while it waits to write."""
    ids, trust = federation()
    (low, _), (high, _) = link_up(ids, [trust, trust])
    big = np.arange(4_000_000, dtype=np.uint64)                       # 32 MB a frame

    def play(links, peer, rank):
        links.send(peer, wire.encode_arrays(1, "open", [big + rank]))
        return links.mailbox.collect({1 - rank: 1}, timeout_s=60.0)

    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(play, [low, high], NAMES[::-1], [0, 1]))
    assert (got[0][1][1][0] == big + 1).all() and (got[1][0][1][0] == big).all()
    low.close()
    high.close()


def test_two_waiting_threads_are_both_served_by_whichever_reads():
    ids, trust = federation()
    (low, _), (high, _) = link_up(ids, [trust, trust])
    with ThreadPoolExecutor(2) as pool:
        waiting = [pool.submit(low.mailbox.collect, {1: r}, 10.0) for r in (1, 2)]
        for r in (1, 2):
            high.send("party-0", wire.encode_value(r, "public", r * 10))
        assert [w.result(10.0) for w in waiting] == [{1: ("public", 10)}, {1: ("public", 20)}]
    low.close()
    high.close()


def test_a_frame_that_came_with_the_key_agreement_is_delivered(monkeypatch):
    """The peer's first frame can arrive in the same read as its X25519 key: it is decrypted
    and delivered when the link starts, not left until the peer sends again."""
    agree = Links._agree

    def slow(self, peer, tls, deadline):
        if self.name != "party-1":
            return agree(self, peer, tls, deadline)
        mine = KeyAgreement(os.urandom(32))
        tls.send(mine.public)
        time.sleep(0.5)                      # party 0's key and first frame arrive together
        theirs = tls.read(PUBLIC_BYTES, deadline)
        low, high = sorted((self.name, peer))
        self.agreed[peer] = mine.agree(theirs, f"ppml-link|{low}|{high}".encode())

    monkeypatch.setattr(Links, "_agree", slow)
    ids, trust = federation()
    parties = [Links(i, "127.0.0.1", Mailbox(), {n: r for r, n in enumerate(NAMES)})
               for i in ids]

    def first():
        parties[0].connect(NAMES, {}, trust, 5.0)
        parties[0].send("party-1", wire.encode_value(1, "x", 7))

    with ThreadPoolExecutor(1) as pool:
        done = pool.submit(first)
        parties[1].connect(NAMES, {NAMES[0]: parties[0].address}, trust, 5.0)
        done.result(10.0)
    assert parties[1].mailbox.collect({0: 1}, timeout_s=5.0) == {0: ("x", 7)}
    for links in parties:
        links.close()


def test_closing_the_links_fails_the_waits_on_them_at_once():
    ids, trust = federation()
    (low, _), (high, _) = link_up(ids, [trust, trust])
    low.close()
    with pytest.raises(ConnectionError, match="party-0 closed its links"):
        low.mailbox.collect({1: 1}, timeout_s=30.0)
    with pytest.raises(ConnectionError, match="party-0 closed the connection"):
        high.mailbox.collect({0: 1}, timeout_s=30.0)
    high.close()


def test_a_busy_peer_is_waited_for_and_a_silent_one_is_named():
    """A wait times out on silence, not on time: keepalives (every KEEPALIVE_S = 1 s) carry a
    wait for a peer busy 3.5 s past a 2 s timeout; a peer that sends nothing at all, not even
    keepalives (as a stopped process), is named about 2 s after it was last heard."""
    ids, trust = federation()
    (low, _), (high, _) = link_up(ids, [trust, trust])
    try:
        later = threading.Timer(3.5, high.send, ["party-0", wire.encode_value(1, "shape", (2,))])
        later.start()
        assert low.mailbox.collect({1: 1}, timeout_s=2.0) == {1: ("shape", (2,))}
        high.send = lambda *args, **kwargs: None        # silent from now on, keepalives too
        start = time.monotonic()
        with pytest.raises(TimeoutError, match="no message from party 1 for round 2"):
            low.mailbox.collect({1: 2}, timeout_s=2.0, where="round 2")
        assert 1.0 <= time.monotonic() - start < 3.5
    finally:
        low.close()
        high.close()


def test_self_signed_pinned_certificates_link_up():
    ids = [Identity.self_signed(n) for n in NAMES]
    trusts = [Trust.pinned({ids[1 - r].name: ids[1 - r].certificate}) for r in range(2)]
    (_, err0), (_, err1) = link_up(ids, trusts)
    assert err0 is None and err1 is None


def test_a_peer_of_another_authority_is_refused_naming_it():
    ids, trust = federation()
    stranger = issued(Authority(), "party-1")                      # right name, other CA
    (_, err0), (_, err1) = link_up([ids[0], stranger], [trust, trust], timeout_s=1.5)
    assert isinstance(err1, LinkError) and err1.peer == "party-0"
    assert "refused party-1" in str(err1)
    assert isinstance(err0, LinkError) and err0.peer == "party-1"
    assert "party-1 did not connect" in str(err0) and "certificate" in str(err0)


def test_a_listener_of_another_authority_is_refused_naming_it():
    ids, trust = federation()
    impostor = issued(Authority(), "party-0")
    (_, err0), (_, err1) = link_up([impostor, ids[1]], [trust, trust], timeout_s=1.5)
    assert isinstance(err1, LinkError) and err1.peer == "party-0"
    assert "refused the certificate of party-0" in str(err1)


def test_an_expired_certificate_is_refused():
    ids, trust = federation(days=1, not_before=dt.datetime.now(dt.timezone.utc)
                            - dt.timedelta(days=10))
    (_, err0), (_, err1) = link_up(ids, [trust, trust], timeout_s=1.5)
    assert isinstance(err0, LinkError) and "expired" in str(err0)
    assert isinstance(err1, LinkError)


def test_a_certificate_with_the_wrong_name_is_refused():
    ca = Authority()
    ids = [issued(ca, "party-7"), issued(ca, "party-1")]            # party-7 listens as party 0
    trust = Trust(ca.certificate, {"party-0": None, "party-1": None, "party-7": None})
    links = Links(ids[1], "127.0.0.1")
    listener = Links(ids[0], "127.0.0.1")
    threading.Thread(target=lambda: _quietly(listener.connect, ["party-7", "party-1"], {},
                                             trust, 2.0), daemon=True).start()
    with pytest.raises(LinkError, match="party-0") as err:
        links.connect(NAMES, {"party-0": listener.address}, trust, 2.0)
    assert err.value.peer == "party-0"


def test_a_certificate_other_than_the_pinned_one_is_refused():
    ca = Authority()
    ids = [issued(ca, "party-0"), issued(ca, "party-1")]
    other = issued(ca, "party-1")                                   # same CA and name, not pinned
    trust = Trust(ca.certificate, {i.name: fingerprint(i.certificate) for i in ids})
    (_, err0), (_, err1) = link_up([ids[0], other], [trust, trust], timeout_s=1.5)
    assert isinstance(err0, LinkError) and "not the one pinned" in str(err0)
    assert isinstance(err1, LinkError)


def _quietly(fn, *args):
    try:
        fn(*args)
    except ConnectionError:
        pass


class Wire:
    """A man in the middle between party 1 and party 0: forwards every byte both ways, keeps
    what it saw, and once `arm`ed flips a bit of, or replays, the next chunk party 1 sends."""

    def __init__(self):
        self._server = socket.create_server(("127.0.0.1", 0))
        self.address = self._server.getsockname()[:2]
        self.seen = bytearray()
        self.attack = None

    def forward_to(self, target) -> None:
        threading.Thread(target=self._run, args=(tuple(target),), daemon=True).start()

    def _run(self, target) -> None:
        near, _ = self._server.accept()
        far = socket.create_connection(target)
        threading.Thread(target=self._pump, args=(far, near, False), daemon=True).start()
        self._pump(near, far, True)

    def _pump(self, source, sink, from_party_1: bool) -> None:
        try:
            while data := source.recv(1 << 16):
                data = bytearray(data)
                self.seen += data
                attack, self.attack = (self.attack, None) if from_party_1 else (None, self.attack)
                if attack == "flip":
                    data[len(data) // 2] ^= 1
                sink.sendall(data)
                if attack == "replay":
                    sink.sendall(data)
        except OSError:
            pass


SECRET = "a share nobody on the wire may read"


def test_an_eavesdropper_on_the_wire_reads_no_frame():
    ids, trust = federation()
    wire_ = Wire()
    (low, err0), (high, err1) = link_up(ids, [trust, trust], proxy=wire_)
    assert err0 is None and err1 is None
    high.send("party-0", wire.encode_value(1, "secret", SECRET))
    low.send("party-1", wire.encode_value(1, "secret", SECRET + "!"))
    assert low.mailbox.collect({1: 1}, timeout_s=5.0) == {1: ("secret", SECRET)}
    assert high.mailbox.collect({0: 1}, timeout_s=5.0) == {0: ("secret", SECRET + "!")}
    assert SECRET.encode() not in wire_.seen and b"secret" not in wire_.seen


@pytest.mark.parametrize("attack", ["flip", "replay"])
def test_a_frame_altered_or_replayed_on_the_wire_closes_the_link(attack):
    ids, trust = federation()
    wire_ = Wire()
    (low, err0), (high, err1) = link_up(ids, [trust, trust], proxy=wire_)
    assert err0 is None and err1 is None
    wire_.attack = attack
    high.send("party-0", wire.encode_value(1, "shape", (4, 5)))
    with pytest.raises(ConnectionError, match="TLS failed on the link from party-1"):
        got = low.mailbox.collect({1: 1}, timeout_s=5.0)
        assert attack == "replay" and got == {1: ("shape", (4, 5))}   # the original, then
        low.mailbox.collect({1: 2}, timeout_s=5.0)                     # the replay fails


def test_strangers_who_connect_and_say_nothing_delay_nobody():
    ids, trust = federation()
    listener = Links(ids[0], "127.0.0.1", Mailbox(), {n: r for r, n in enumerate(NAMES)})
    idle = [socket.create_connection(listener.address) for _ in range(3)]   # no handshake
    dialler = Links(ids[1], "127.0.0.1", Mailbox(), {n: r for r, n in enumerate(NAMES)})
    with ThreadPoolExecutor(1) as pool:
        accepting = pool.submit(listener.connect, NAMES, {}, trust, 5.0)
        dialler.connect(NAMES, {"party-0": listener.address}, trust, 5.0)
        accepting.result(timeout=5.0)
    assert "party-0" in dialler.agreed
    for sock in idle:
        sock.close()


def test_a_self_signed_identity_cannot_vouch_for_others():
    from cryptography import x509
    identity = Identity.self_signed("party-0")
    cert = x509.load_pem_x509_certificate(identity.certificate)
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    with pytest.raises(ValueError, match="needs a certificate authority"):
        Trust(identity.certificate, {"party-1": None})
