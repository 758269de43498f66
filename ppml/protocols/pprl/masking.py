"""Statistical masking of encrypted values (Sakuma et al., section 3.2: the random shares the
private division and comparison start from).

The holder B has e_A(x) under the owner A's key, |x| < 2^b.  It adds 2^b + r under encryption,
with r uniform in [0, 2^(b + 1 + kappa)) from its CSPRNG, and A decrypts y = x + 2^b + r.
Then y - (2^b + r) = x over the integers (y < 2^(b + 2 + kappa), far below N: nothing wraps), so
A's y and B's 2^b + r are shares of x, and y is within statistical distance 2^-kappa of
independent of x: x + 2^b lies in [0, 2^(b+1)), and r is kappa bits wider.
"""

from __future__ import annotations

import os

from gmpy2 import mpz

from ppml.checks import check_int
from ppml.crypto.paillier import ops

STATISTICAL_BITS = 40
"""kappa: the mask r is kappa bits wider than the shifted value (ppml's minimum; docs/pprl.md)."""


def random_below(bits: int, random_bytes=os.urandom) -> mpz:
    """A uniform integer in [0, 2^bits) from ``random_bytes`` (the OS CSPRNG by default)."""
    width = (bits + 7) // 8
    return mpz(int.from_bytes(random_bytes(width), "big") >> (8 * width - bits))


def check_room(public_key, bound_bits: int, statistical_bits: int) -> None:
    """Refuse a bound whose masked values could wrap modulo N."""
    check_int("bound_bits", bound_bits, 1)
    check_int("statistical_bits", statistical_bits, 40)
    if bound_bits + 2 + statistical_bits >= public_key.bits - 1:
        raise ValueError(f"bound_bits + statistical_bits + 2 must be at most the key's "
                         f"{public_key.bits} bits - 2 = {public_key.bits - 2}, got "
                         f"{bound_bits} + {statistical_bits} + 2")


def mask(encryptor, public_key, ciphertexts: list, bound_bits: int,
         statistical_bits: int = STATISTICAL_BITS, addends: list | None = None,
         random_bytes=os.urandom) -> tuple:
    """(c e(a + 2^b + r) for each c, the offsets 2^b + r): each value masked with a fresh r;
    ``addends`` a (default 0) are plaintexts the holder adds to x in the same encryption, so
    that x = Dec(c) + a must meet the bound 2^``bound_bits``."""
    bits = bound_bits + 1 + statistical_bits
    offsets = [(mpz(1) << bound_bits) + random_below(bits, random_bytes) for _ in ciphertexts]
    addends = addends or [0] * len(ciphertexts)
    shifted = encryptor.encrypt(public_key, [mpz(a) + o
                                             for a, o in zip(addends, offsets, strict=True)])
    return ops.add(public_key, [mpz(c) for c in ciphertexts], shifted), offsets


def signed(values: list, public_key) -> list:
    """Residues mod n as the signed integers in (-n/2, n/2] they encode."""
    n = int(public_key.n)
    return [int(v) - n if v > n // 2 else int(v) for v in values]
