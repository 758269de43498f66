"""The plaintexts of Samba's steps 2-5: every score, share and pull bit is `SCORE_BYTES` bytes,
an 8-byte big-endian word and zero padding (then 44 bytes sealed), so a ciphertext's length
never depends on a value (docs/samba.md, "Beyond the authors' code")."""

from __future__ import annotations

import numpy as np

from ppml.crypto.aead import MessageRejected

SCORE_BYTES = 16
"""Every score, share and pull bit travels as 16 plaintext bytes."""
BIT_ZERO, BIT_ONE = bytes(SCORE_BYTES), b"\x01" + bytes(SCORE_BYTES - 1)
_BIT_VALUES = {BIT_ZERO: 0, BIT_ONE: 1}
_ROWS: dict = {}
"""Per count K, the slices of a K x 16-byte buffer's rows."""


def _rows(count: int) -> list:
    rows = _ROWS.get(count)
    if rows is None:
        rows = _ROWS[count] = [slice(at, at + SCORE_BYTES)
                               for at in range(0, count * SCORE_BYTES, SCORE_BYTES)]
    return rows


def pack_words(words: np.ndarray) -> list[bytes]:
    """One plaintext per 64-bit word (uint64, any byte order): the word big-endian, then zero
    padding."""
    table = np.zeros((len(words), 2), dtype=">u8")
    table[:, 0] = words
    return list(map(table.tobytes().__getitem__, _rows(len(words))))


def unpack_words(plaintexts: list, what: str) -> np.ndarray:
    """The 64-bit words (big-endian uint64) of ``plaintexts``; `MessageRejected` unless each is
    `SCORE_BYTES` long with zero padding (``what`` names them)."""
    if set(map(len, plaintexts)) - {SCORE_BYTES}:
        raise MessageRejected(f"{what} must be {SCORE_BYTES} bytes")
    table = np.frombuffer(b"".join(plaintexts), dtype=">u8").reshape(-1, 2)
    if table[:, 1].any():
        raise MessageRejected(f"{what} has non-zero padding")
    return table[:, 0]


def unpack_bits(plaintexts: list) -> list:
    """The DOs' pull bits; anything but the two fixed plaintexts is refused."""
    try:
        return [_BIT_VALUES[p] for p in plaintexts]
    except KeyError:
        raise MessageRejected("a pull bit is neither 0 nor 1 with zero padding") from None


def bit_plaintexts(arms: int, position: int) -> list[bytes]:
    """Comp's K pull bits in permuted order: 1 at ``position`` only."""
    bits = [BIT_ZERO] * arms
    bits[position] = BIT_ONE
    return bits
