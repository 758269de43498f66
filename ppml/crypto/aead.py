"""AES-256-GCM channels for Samba's core (Ciucanu et al., Fig. 5(b), steps 2-5).

The paper's ``Enc`` is AES-GCM under one key shared by Comp and every DO_i and unknown to the
Controller (section 4).  A `Channel` wraps that key and adds what the authors' code leaves out:

* fixed width: plaintexts of exactly ``width`` bytes, so a ciphertext's length never depends on
  a value;
* associated data binding each ciphertext to (run, t, l, kind), in one unambiguous layout;
* refusal of a ciphertext repeated within a list (`Channel.open_batch`, `Endpoints.open_each`)
  and of a (t, l) not after the last one accepted (`ReplayGuard`);
* random 96-bit nonces from a CSPRNG stream, at most ``MAX_MESSAGES`` per key.

`Channel` is one party's end; an `Endpoint` is the end of one of several parties hosted in one
process (a DO of a group), with its own AES-GCM context and nonce stream; `Endpoints` seals or
opens one message per endpoint of a list.  Every refusal raises `MessageRejected`, which names
the message's (run, t, l, kind).

Why each check, and what associated data cannot stop: docs/samba.md, "Beyond the authors'
code".
"""

from __future__ import annotations

import itertools
import operator
import struct

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ppml.crypto.rng import KEY_BYTES, Stream, fresh_key

NONCE_BYTES = 12
TAG_BYTES = 16
MAX_MESSAGES = 2**32
"""Random 96-bit nonces: at most 2^32 encryptions under one key (NIST SP 800-38D, 8.3)."""
NONCE_BLOCK = 1024
"""Nonces read from the stream at once."""
_STEP = struct.Struct(">QI")
_NONCE_SLICES = [slice(at, at + NONCE_BYTES) for at in range(0, NONCE_BYTES * NONCE_BLOCK,
                                                            NONCE_BYTES)]


class MessageRejected(ValueError):
    """A ciphertext failed authentication or replay checks: tampered, replayed or reordered."""


def _nonce_blocks(stream: Stream):
    """Lists of ``NONCE_BLOCK`` nonces from ``stream``; refuses to go past ``MAX_MESSAGES``."""
    for _ in range(MAX_MESSAGES // NONCE_BLOCK):
        yield list(map(stream.bytes(NONCE_BYTES * NONCE_BLOCK).__getitem__, _NONCE_SLICES))
    raise RuntimeError(f"this AES-GCM key has sealed {MAX_MESSAGES} messages from one nonce "
                       "stream, the limit for random nonces; start a run with a fresh key")


def nonce_source(stream: Stream):
    """The nonces of ``stream`` one at a time (an iterator), read ``NONCE_BLOCK`` at a time."""
    return itertools.chain.from_iterable(_nonce_blocks(stream))


def _seal(plaintexts, nonces, encrypts, associated: bytes) -> list[bytes]:
    """nonce || AES-GCM(plaintext) for each (plaintext, nonce, encrypt) in step (plaintexts
    first, so no nonce is drawn past the last plaintext)."""
    return [nonce + encrypt(nonce, plaintext, associated)
            for plaintext, nonce, encrypt in zip(plaintexts, nonces, encrypts)]


def _check_widths(plaintexts, width: int, kind: str) -> None:
    wrong = set(map(len, plaintexts)) - {width}
    if wrong:
        raise ValueError(f"{kind} plaintext must be exactly {width} bytes (fixed width), "
                         f"got {min(wrong)}")


def _aead(key: bytes) -> AESGCM:
    if len(key) != KEY_BYTES:
        raise ValueError(f"AES-GCM key must be {KEY_BYTES} bytes (AES-256), got {len(key)}")
    return AESGCM(key)


class _End:
    """What `Channel` and `Endpoints` share: the run, the width, the associated data of each
    kind, the checks of incoming messages and the wording of refusals."""

    def __init__(self, run_id: bytes, width: int):
        if width < 1:
            raise ValueError(f"width must be >= 1 byte, got {width}")
        self.run_id = bytes(run_id)
        self.width = width
        self.message_bytes = NONCE_BYTES + width + TAG_BYTES
        """Length of every sealed message: nonce, ciphertext and tag."""
        self._prefixes: dict = {}

    def _associated_data(self, t: int, l: int, kind: str) -> bytes:
        """"samba", run id and kind (each length-prefixed), then t (8 bytes) and l (4 bytes)."""
        prefix = self._prefixes.get(kind)
        if prefix is None:
            name = kind.encode()
            prefix = self._prefixes[kind] = (b"samba" + len(self.run_id).to_bytes(2, "big") +
                                             self.run_id + bytes([len(name)]) + name)
        return prefix + _STEP.pack(t, l)

    def _check_messages(self, messages, t: int, l: int, kind: str, count: int) -> None:
        """Exactly ``count`` messages, each ``bytes`` of the sealed length, none repeated."""
        if len(messages) != count:
            raise MessageRejected(f"expected {count} {kind} messages at t={t}, l={l}, got "
                                  f"{len(messages)}")
        if len(set(messages)) != count:
            raise MessageRejected(f"a {kind} message was replayed within the list at t={t}, "
                                  f"l={l}")
        if set(map(type, messages)) - {bytes} or set(map(len, messages)) - {self.message_bytes}:
            bad = next(m for m in messages
                       if type(m) is not bytes or len(m) != self.message_bytes)
            raise MessageRejected(f"{kind} message {self._where(t, l, kind)} must be "
                                  f"{self.message_bytes} bytes, got "
                                  f"{len(bad) if type(bad) is bytes else bad!r}")

    def _open(self, messages, decrypts, t: int, l: int, kind: str) -> list[bytes]:
        """The plaintexts of ``messages``, each opened by its decrypt (one per message)."""
        associated = self._associated_data(t, l, kind)
        try:
            return [decrypt(m[:NONCE_BYTES], m[NONCE_BYTES:], associated)
                    for m, decrypt in zip(messages, decrypts)]
        except InvalidTag:
            raise MessageRejected(f"AES-GCM authentication failed for a {kind} message "
                                  f"{self._where(t, l, kind)}: it was tampered with, or replayed "
                                  "from another run, step or iteration") from None

    def _where(self, t: int, l: int, kind: str) -> str:
        return f"(run={self.run_id.hex()[:16]}, t={t}, l={l}, kind={kind})"


class Channel(_End):
    """AES-256-GCM under ``key`` for messages of exactly ``width`` plaintext bytes.

    ``nonces`` is the CSPRNG stream nonces are drawn from (default: a fresh os.urandom key),
    ``NONCE_BLOCK`` nonces at a time.  ``encryptions`` and ``decryptions`` count the AES-GCM
    operations (Theorem 4, item 1).
    """

    def __init__(self, key: bytes, run_id: bytes, width: int, nonces: Stream | None = None):
        self._aead = _aead(key)
        super().__init__(run_id, width)
        self._nonces = nonce_source(nonces if nonces is not None else Stream(fresh_key()))
        self.encryptions = 0
        self.decryptions = 0

    def seal(self, plaintext: bytes, t: int, l: int, kind: str) -> bytes:
        """nonce || AES-GCM(plaintext) with associated data (run, t, l, kind)."""
        return self.seal_many([plaintext], t, l, kind)[0]

    def seal_many(self, plaintexts, t: int, l: int, kind: str) -> list[bytes]:
        """`seal` of each plaintext, all for one (t, l, kind), each under its own nonce."""
        _check_widths(plaintexts, self.width, kind)
        self.encryptions += len(plaintexts)
        return _seal(plaintexts, self._nonces, itertools.repeat(self._aead.encrypt),
                     self._associated_data(t, l, kind))

    def open(self, message: bytes, t: int, l: int, kind: str) -> bytes:
        """The plaintext of ``message``; `MessageRejected` if it was not sealed on this channel
        for exactly (run, t, l, kind) or was altered."""
        return self.open_batch([message], t, l, kind, 1)[0]

    def open_batch(self, messages, t: int, l: int, kind: str, count: int) -> list[bytes]:
        """Open a list of exactly ``count`` messages of one (t, l, kind), none repeated."""
        self._check_messages(messages, t, l, kind, count)
        self.decryptions += count
        return self._open(messages, itertools.repeat(self._aead.decrypt), t, l, kind)


class Endpoint:
    """One party's end among several hosted in one process (a DO of a group): its own AES-GCM
    context under its own copy ``key`` of the shared key (``encrypt``, ``decrypt``) and its own
    nonce stream (``nonce()``: the next nonce).  `Endpoints` seals and opens with it."""

    __slots__ = ("encrypt", "decrypt", "nonce")

    def __init__(self, key: bytes, nonces: Stream):
        aead = _aead(key)
        self.encrypt, self.decrypt = aead.encrypt, aead.decrypt
        self.nonce = nonce_source(nonces).__next__


_NONCE, _ENCRYPT, _DECRYPT = map(operator.attrgetter, ("nonce", "encrypt", "decrypt"))


class Endpoints(_End):
    """Batches of one message per `Endpoint` of a list (the DOs of a group, in DO order):
    ``ends[i]`` seals or opens message i with its own context and nonce stream.
    ``encryptions`` and ``decryptions`` count each endpoint's operations (the endpoints of a
    group take part in every batch)."""

    def __init__(self, run_id: bytes, width: int):
        super().__init__(run_id, width)
        self.encryptions = 0
        self.decryptions = 0

    def seal_each(self, ends: list, plaintexts, t: int, l: int, kind: str) -> list[bytes]:
        """``ends[i]`` seals ``plaintexts[i]`` under its next nonce, for (run, t, l, kind)."""
        if len(plaintexts) != len(ends):
            raise ValueError(f"expected {len(ends)} {kind} plaintexts, got {len(plaintexts)}")
        _check_widths(plaintexts, self.width, kind)
        self.encryptions += 1
        return _seal(plaintexts, map(operator.call, map(_NONCE, ends)), map(_ENCRYPT, ends),
                     self._associated_data(t, l, kind))

    def open_each(self, ends: list, messages, t: int, l: int, kind: str) -> list[bytes]:
        """``ends[i]`` opens ``messages[i]``; `MessageRejected` as `Channel.open`."""
        self._check_messages(messages, t, l, kind, len(ends))
        self.decryptions += 1
        return self._open(messages, map(_DECRYPT, ends), t, l, kind)


class ReplayGuard:
    """A receiver's record of the last (t, l) it accepted: steps and iterations only move
    forward, so an old or repeated (t, l) is refused before any decryption."""

    def __init__(self, who: str):
        self.who = who
        self.last = (0, 0)

    def advance(self, t: int, l: int) -> None:
        if (t, l) <= self.last:
            raise MessageRejected(f"{self.who} refuses (t={t}, l={l}): it already accepted "
                                  f"(t={self.last[0]}, l={self.last[1]}); replayed or reordered")
        self.last = (t, l)


class PlainChannel:
    """`Channel`'s and `Endpoints`' interface without encryption: Samba with every Enc removed
    (A_no-enc in the proof of Theorem 2), to time the distributed protocol without cryptography.
    Never secure."""

    encryptions = decryptions = 0

    def __init__(self, width: int):
        self.width = width

    def seal_many(self, plaintexts, t: int, l: int, kind: str) -> list[bytes]:
        return list(plaintexts)

    def open_batch(self, messages, t: int, l: int, kind: str, count: int) -> list[bytes]:
        return list(messages)

    def seal_each(self, ends, plaintexts, t: int, l: int, kind: str) -> list[bytes]:
        return list(plaintexts)

    def open_each(self, ends, messages, t: int, l: int, kind: str) -> list[bytes]:
        return list(messages)
