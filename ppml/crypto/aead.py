"""AES-256-GCM channels for Samba's core (Ciucanu et al., Fig. 5(b), steps 2-5).

The paper's ``Enc`` is AES-GCM under one key shared by Comp and every DO_i and unknown to the
Controller (section 4).  A `Channel` wraps that key and adds what the authors' code leaves out:

* **Fixed width.**  A channel carries plaintexts of exactly ``width`` bytes (scores are
  fixed-width binary, pull bits one byte padded to the same width), so ciphertext length never
  depends on a value.
* **Associated data** binds each ciphertext to (run, t, l, kind): a message replayed from another
  run, step or iteration, or sent as the wrong kind (a score passed off as a pull bit), fails
  authentication.  It is an unambiguous fixed layout: run id and kind length-prefixed, t and l
  as 8- and 4-byte integers.
* **Replays and reordering within a step.**  `Channel.open_batch` refuses a list in which one
  ciphertext appears twice, and a receiver refuses a (t, l) that does not come after the last one
  it accepted (`ReplayGuard`).
* **Nonces** are 96 bits from a CSPRNG stream (os.urandom-keyed, or the seeded INSECURE stream)
  and a channel refuses to seal more than 2^32 messages (NIST SP 800-38D, random nonces).

Every refusal raises `MessageRejected`, which names the message's (run, t, l, kind).
"""

from __future__ import annotations

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


class MessageRejected(ValueError):
    """A ciphertext failed authentication or replay checks: tampered, replayed or reordered."""


class Channel:
    """AES-256-GCM under ``key`` for messages of exactly ``width`` plaintext bytes.

    ``nonces`` is the CSPRNG stream nonces are drawn from (default: a fresh os.urandom key),
    ``NONCE_BLOCK`` nonces at a time.  ``encryptions`` and ``decryptions`` count the AES-GCM
    operations (Theorem 4, item 1).
    """

    def __init__(self, key: bytes, run_id: bytes, width: int, nonces: Stream | None = None):
        if len(key) != KEY_BYTES:
            raise ValueError(f"AES-GCM key must be {KEY_BYTES} bytes (AES-256), got {len(key)}")
        if width < 1:
            raise ValueError(f"width must be >= 1 byte, got {width}")
        self._aead = AESGCM(key)
        self.run_id = bytes(run_id)
        self.width = width
        self.message_bytes = NONCE_BYTES + width + TAG_BYTES
        """Length of every sealed message: nonce, ciphertext and tag."""
        self._nonces = nonces if nonces is not None else Stream(fresh_key())
        self._nonce_block = b""
        self._nonce_at = 0
        self._prefixes: dict = {}
        self.encryptions = 0
        self.decryptions = 0

    def _associated_data(self, t: int, l: int, kind: str) -> bytes:
        """"samba", run id and kind (each length-prefixed), then t (8 bytes) and l (4 bytes)."""
        prefix = self._prefixes.get(kind)
        if prefix is None:
            name = kind.encode()
            prefix = self._prefixes[kind] = (b"samba" + len(self.run_id).to_bytes(2, "big") +
                                             self.run_id + bytes([len(name)]) + name)
        return prefix + _STEP.pack(t, l)

    def _check_width(self, plaintext: bytes, kind: str) -> None:
        if len(plaintext) != self.width:
            raise ValueError(f"{kind} plaintext must be exactly {self.width} bytes (fixed width), "
                             f"got {len(plaintext)}")

    def _take_nonces(self, count: int) -> bytes:
        """``count`` fresh nonces end to end, within the message limit."""
        if self.encryptions + count > MAX_MESSAGES:
            raise RuntimeError(f"this AES-GCM key has sealed {self.encryptions} messages, the "
                               f"limit for random nonces is {MAX_MESSAGES}; start a run with a "
                               "fresh key")
        self.encryptions += count
        need, at = NONCE_BYTES * count, self._nonce_at
        if len(self._nonce_block) - at < need:
            self._nonce_block = self._nonce_block[at:] + self._nonces.bytes(
                max(need, NONCE_BYTES * NONCE_BLOCK))
            at = 0
        self._nonce_at = at + need
        return self._nonce_block[at:at + need]

    def seal(self, plaintext: bytes, t: int, l: int, kind: str) -> bytes:
        """nonce || AES-GCM(plaintext) with associated data (run, t, l, kind)."""
        self._check_width(plaintext, kind)
        nonce = self._take_nonces(1)
        return nonce + self._aead.encrypt(nonce, plaintext, self._associated_data(t, l, kind))

    def seal_many(self, plaintexts, t: int, l: int, kind: str) -> list[bytes]:
        """`seal` of each plaintext, all for one (t, l, kind), each under its own nonce."""
        for plaintext in plaintexts:
            self._check_width(plaintext, kind)
        nonces = self._take_nonces(len(plaintexts))
        associated, encrypt = self._associated_data(t, l, kind), self._aead.encrypt
        sealed = []
        for at, plaintext in zip(range(0, len(nonces), NONCE_BYTES), plaintexts):
            nonce = nonces[at:at + NONCE_BYTES]
            sealed.append(nonce + encrypt(nonce, plaintext, associated))
        return sealed

    def _check_message(self, message, t: int, l: int, kind: str) -> None:
        if type(message) is not bytes or len(message) != self.message_bytes:
            raise MessageRejected(f"{kind} message {self._where(t, l, kind)} must be "
                                  f"{self.message_bytes} bytes, got "
                                  f"{len(message) if type(message) is bytes else message!r}")

    def _rejected(self, t: int, l: int, kind: str) -> MessageRejected:
        return MessageRejected(f"AES-GCM authentication failed for a {kind} message "
                               f"{self._where(t, l, kind)}: it was tampered with, or replayed "
                               "from another run, step or iteration")

    def _where(self, t: int, l: int, kind: str) -> str:
        return f"(run={self.run_id.hex()[:16]}, t={t}, l={l}, kind={kind})"

    def open(self, message: bytes, t: int, l: int, kind: str) -> bytes:
        """The plaintext of ``message``; `MessageRejected` if it was not sealed on this channel
        for exactly (run, t, l, kind) or was altered."""
        self._check_message(message, t, l, kind)
        self.decryptions += 1
        try:
            return self._aead.decrypt(message[:NONCE_BYTES], message[NONCE_BYTES:],
                                      self._associated_data(t, l, kind))
        except InvalidTag:
            raise self._rejected(t, l, kind) from None

    def open_batch(self, messages, t: int, l: int, kind: str, count: int) -> list[bytes]:
        """Open a list of exactly ``count`` messages of one (t, l, kind), none repeated."""
        if len(messages) != count:
            raise MessageRejected(f"expected {count} {kind} messages at t={t}, l={l}, got "
                                  f"{len(messages)}")
        if len({m[:NONCE_BYTES] for m in messages}) != count:
            raise MessageRejected(f"a {kind} message was replayed within the list at t={t}, "
                                  f"l={l}")
        for message in messages:
            self._check_message(message, t, l, kind)
        associated, decrypt = self._associated_data(t, l, kind), self._aead.decrypt
        self.decryptions += count
        try:
            return [decrypt(m[:NONCE_BYTES], m[NONCE_BYTES:], associated) for m in messages]
        except InvalidTag:
            raise self._rejected(t, l, kind) from None


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
    """`Channel`'s interface without encryption: Samba with every Enc removed (A_no-enc in the
    proof of Theorem 2), to time the distributed protocol without cryptography.  Never secure."""

    encryptions = decryptions = 0

    def __init__(self, width: int):
        self.width = width

    def seal(self, plaintext: bytes, t: int, l: int, kind: str) -> bytes:
        return plaintext

    def open(self, message: bytes, t: int, l: int, kind: str) -> bytes:
        return message

    def seal_many(self, plaintexts, t: int, l: int, kind: str) -> list[bytes]:
        return list(plaintexts)

    def open_batch(self, messages, t: int, l: int, kind: str, count: int) -> list[bytes]:
        return list(messages)
