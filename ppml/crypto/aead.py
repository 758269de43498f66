"""AES-256-GCM channels for Samba's core (Ciucanu et al., Fig. 5(b), steps 2-5).

The paper's ``Enc`` is AES-GCM under one key shared by Comp and every DO_i and unknown to the
Controller (section 4).  A `Channel` wraps that key and adds what the authors' code leaves out:

* fixed width: plaintexts of exactly ``width`` bytes, so a ciphertext's length never depends on
  a value;
* associated data binding each ciphertext to (run, t, l, kind), in one unambiguous layout;
* refusal of a ciphertext repeated within a list (`Channel.open_batch`, `Endpoints.open_each`)
  and of a (t, l) not after the last one accepted (`ReplayGuard`);
* random 96-bit nonces from a CSPRNG stream, at most ``MAX_MESSAGES`` per key.

`Channel` is one process's end: a party's, or that of the DOs a process hosts, which hold the same
key and draw their nonces from the process's one stream.  Every refusal raises
`MessageRejected`, which names the message's (run, t, l, kind).

Why each check, and what associated data cannot stop: docs/samba.md, "Beyond the authors'
code".
"""

from __future__ import annotations

import itertools
import struct

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ppml.checks import check_int
from ppml.crypto.rng import KEY_BYTES, Stream, fresh_key

NONCE_BYTES = 12
TAG_BYTES = 16
MAX_MESSAGES = 2**32
"""Random 96-bit nonces: at most 2^32 encryptions under one key (NIST SP 800-38D, 8.3)."""
NONCE_BLOCK = 1024
"""Nonces read from the stream at once."""
MAX_FIELD_BYTES = 2**16 - 1
"""The associated data prefixes the run id with its length in 2 bytes."""
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


def _nonce_source(stream: Stream):
    """The nonces of ``stream`` one at a time (an iterator), read ``NONCE_BLOCK`` at a time."""
    return itertools.chain.from_iterable(_nonce_blocks(stream))


def _aead(key: bytes) -> AESGCM:
    if not isinstance(key, bytes) or len(key) != KEY_BYTES:
        raise ValueError(f"AES-GCM key must be {KEY_BYTES} bytes (AES-256), got "
                         f"{len(key) if isinstance(key, bytes) else type(key).__name__}")
    return AESGCM(key)


class Channel:
    """AES-256-GCM under ``key`` for messages of exactly ``width`` plaintext bytes.

    ``nonces`` is the CSPRNG stream nonces are drawn from (default: a fresh os.urandom key),
    ``NONCE_BLOCK`` nonces at a time.  ``encryptions`` and ``decryptions`` count the AES-GCM
    operations (Theorem 4, item 1).  A batch is one loop of AES-GCM calls under one context;
    the checks around it are set operations over the batch, so a step's cost stays near the
    AES-GCM calls themselves (docs/samba.md, "Against the AES-GCM floor").
    """

    def __init__(self, key: bytes, run_id: bytes, width: int, nonces: Stream | None = None):
        width = check_int("width", width, 1, what="a number of bytes")
        if not isinstance(run_id, (bytes, bytearray)) or len(run_id) > MAX_FIELD_BYTES:
            raise ValueError(f"run_id must be bytes, at most {MAX_FIELD_BYTES} of them, got "
                             f"{run_id!r:.40}")
        aead = _aead(key)
        self._encrypt, self._decrypt = aead.encrypt, aead.decrypt
        self.run_id = bytes(run_id)
        self.width = width
        self.message_bytes = NONCE_BYTES + width + TAG_BYTES
        """Length of every sealed message: nonce, ciphertext and tag."""
        self._prefixes: dict = {}
        self._stream = nonces if nonces is not None else Stream(fresh_key())
        self._nonces = _nonce_source(self._stream)
        self.encryptions = 0
        self.decryptions = 0

    def state(self) -> dict:
        """What a checkpoint keeps of this end: its counts, and where its nonce stream stands
        past every nonce read so far (those read ahead are never used: a resumed channel under
        the same key repeats no nonce).  The key is the run's, made again when it resumes."""
        return {"nonces": self._stream.position, "encryptions": self.encryptions,
                "decryptions": self.decryptions}

    def restore(self, state: dict) -> None:
        """Go on from `state`: nonces from that position of the same nonce stream, counts."""
        self._stream = Stream(self._stream.key, state["nonces"])
        self._nonces = _nonce_source(self._stream)
        self.encryptions, self.decryptions = state["encryptions"], state["decryptions"]

    def _associated_data(self, t: int, l: int, kind: str) -> bytes:
        """"samba", run id and kind (each length-prefixed), then t (8 bytes) and l (4 bytes);
        a ValueError naming kind, t or l when they do not fit their fields."""
        prefix = self._prefixes.get(kind) if type(kind) is str else None
        if prefix is None:
            if not isinstance(kind, str) or len(kind.encode()) > 255:
                raise ValueError(f"kind must be a text of at most 255 bytes, got {kind!r:.40}")
            name = kind.encode()
            prefix = self._prefixes[kind] = (b"samba" + len(self.run_id).to_bytes(2, "big") +
                                             self.run_id + bytes([len(name)]) + name)
        try:
            return prefix + _STEP.pack(t, l)
        except struct.error:
            raise ValueError(f"t must be an integer in [0, 2^64) and l in [0, 2^32), got "
                             f"t={t!r}, l={l!r}") from None

    def seal(self, plaintext: bytes, t: int, l: int, kind: str) -> bytes:
        """nonce || AES-GCM(plaintext) with associated data (run, t, l, kind)."""
        return self.seal_many([plaintext], t, l, kind)[0]

    def seal_many(self, plaintexts, t: int, l: int, kind: str) -> list[bytes]:
        """`seal` of each plaintext, all for one (t, l, kind), each under its own nonce (zipped
        plaintexts first, so no nonce is drawn past the last plaintext)."""
        if set(map(type, plaintexts)) - {bytes}:
            raise TypeError(f"{kind} plaintext must be bytes, got "
                            f"{next(type(p).__name__ for p in plaintexts if type(p) is not bytes)}")
        if set(map(len, plaintexts)) - {self.width}:
            wrong = next(len(p) for p in plaintexts if len(p) != self.width)
            raise ValueError(f"{kind} plaintext must be exactly {self.width} bytes (fixed "
                             f"width), got {wrong}")
        self.encryptions += len(plaintexts)
        encrypt, associated = self._encrypt, self._associated_data(t, l, kind)
        return [nonce + encrypt(nonce, plaintext, associated)
                for plaintext, nonce in zip(plaintexts, self._nonces)]

    def open(self, message: bytes, t: int, l: int, kind: str) -> bytes:
        """The plaintext of ``message``; `MessageRejected` if it was not sealed on this channel
        for exactly (run, t, l, kind) or was altered."""
        return self.open_batch([message], t, l, kind, 1)[0]

    def open_batch(self, messages, t: int, l: int, kind: str, count: int) -> list[bytes]:
        """Open a list of exactly ``count`` messages of one (t, l, kind), none repeated."""
        self._check_messages(messages, t, l, kind, count)
        self.decryptions += count
        decrypt, associated = self._decrypt, self._associated_data(t, l, kind)
        try:
            return [decrypt(m[:NONCE_BYTES], m[NONCE_BYTES:], associated) for m in messages]
        except InvalidTag:
            raise MessageRejected(f"AES-GCM authentication failed for a {kind} message "
                                  f"{self._where(t, l, kind)}: it was tampered with, or replayed "
                                  "from another run, step or iteration") from None

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

    def _where(self, t: int, l: int, kind: str) -> str:
        return f"(run={self.run_id.hex()[:16]}, t={t}, l={l}, kind={kind})"


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
    """`Channel`'s interface without encryption: Samba with every Enc removed
    (A_no-enc in the proof of Theorem 2), to time the distributed protocol without cryptography.
    Never secure."""

    encryptions = decryptions = 0

    def __init__(self, width: int):
        self.width = width

    def seal_many(self, plaintexts, t: int, l: int, kind: str) -> list[bytes]:
        return list(plaintexts)

    def open_batch(self, messages, t: int, l: int, kind: str, count: int) -> list[bytes]:
        return list(messages)
