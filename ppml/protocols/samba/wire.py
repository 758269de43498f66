"""The plaintexts of Samba's steps 2-5: every score, share and pull bit is `SCORE_BYTES` bytes,
an 8-byte big-endian word and zero padding (then 44 bytes sealed), so a ciphertext's length
never depends on a value (docs/samba.md, "Beyond the authors' code")."""

from __future__ import annotations

from ppml.crypto.aead import MessageRejected

SCORE_BYTES = 16
"""Every score, share and pull bit travels as 16 plaintext bytes."""
BIT_ZERO, BIT_ONE = bytes(SCORE_BYTES), b"\x01" + bytes(SCORE_BYTES - 1)
_BIT_VALUES = {BIT_ZERO: 0, BIT_ONE: 1}
PADDING = bytes(SCORE_BYTES - 8)


def check_padding(plaintexts: list, what: str) -> None:
    """`MessageRejected` unless every plaintext is an 8-byte word and zero `PADDING` (``what``
    names them)."""
    if {p[8:] for p in plaintexts} - {PADDING}:
        raise MessageRejected(f"{what} has non-zero padding")


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
