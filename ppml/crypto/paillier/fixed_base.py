"""Fixed-base exponentiation: products of fixed bases selected by the bits of an exponent, from
precomputed tables (a comb over the bases; Brickell, Gordon, McCurley and Wilson 1992, "Fast
exponentiation with precomputation", the fixed-base windowed method; HAC Algorithm 14.109).

For bases g_0, ..., g_{L-1} mod M and an exponent e < 2^L with bits e_i,

    table(e) = prod_i g_i^(e_i)  mod M.

The bases are cut into groups of w consecutive bases, and each group keeps all 2^w products of
its subsets, so one evaluation costs one multiplication mod M per group with a non-zero digit:
about L / w, against about 1.2 L for a square-and-multiply exponentiation.

With g_i = g^(2^i) (`FixedBaseTable.powers`) table(e) = g^e: group j then holds
g^(v 2^(w j)) for every w-bit digit v.  With independent bases it is a subset product (the
complement of the short-exponent obfuscator, `djn`).  Building the tables costs about
(L / w) 2^w multiplications and (L / w) 2^w values mod M of memory.
"""

from __future__ import annotations

import gmpy2

MAX_WINDOW = 12
"""Largest group width w accepted: 2^12 values per group is already several MB at 2048 bits."""


def squarings(base, count: int, modulus) -> list:
    """[base^(2^i) mod modulus for i < count]: the bases of a table of powers of ``base``."""
    modulus = gmpy2.mpz(modulus)
    out = [gmpy2.mpz(base) % modulus]
    for _ in range(count - 1):
        out.append(out[-1] * out[-1] % modulus)
    return out


class FixedBaseTable:
    """prod_i bases[i]^(bit i of e) mod ``modulus`` for integers 0 <= e < 2^len(bases), in one
    multiplication per ``window`` bits of e.  Bases and tables are public values."""

    __slots__ = ("modulus", "window", "bits", "_groups")

    def __init__(self, bases, modulus, window: int = 8):
        modulus = gmpy2.mpz(modulus)
        if modulus < 2:
            raise ValueError(f"modulus must be >= 2, got {modulus}")
        if isinstance(window, bool) or not isinstance(window, int) or \
                not 1 <= window <= MAX_WINDOW:
            raise ValueError(f"window must be an integer in [1, {MAX_WINDOW}], got {window!r}")
        bases = [gmpy2.mpz(b) for b in bases]
        if not bases:
            raise ValueError("a fixed-base table needs at least one base")
        for index, base in enumerate(bases):
            if not 0 < base < modulus:
                raise ValueError(f"base {index} must lie in (0, modulus), got {base}")
        self.modulus, self.window, self.bits = modulus, window, len(bases)
        self._groups = [self._subset_products(bases[start:start + window])
                        for start in range(0, len(bases), window)]

    def _subset_products(self, group: list) -> list:
        """products[v] = prod of group[i] over the set bits i of v, for 0 <= v < 2^len(group)."""
        products = [gmpy2.mpz(1)]
        for base in group:   # the products with this base are those without it, times it
            products += [p * base % self.modulus for p in products]
        return products

    @classmethod
    def powers(cls, base, bits: int, modulus, window: int = 8) -> "FixedBaseTable":
        """A table of ``base``^e mod ``modulus`` for exponents 0 <= e < 2^``bits``."""
        if isinstance(bits, bool) or not isinstance(bits, int) or bits < 1:
            raise ValueError(f"bits must be an integer >= 1, got {bits!r}")
        return cls(squarings(base, bits, modulus), modulus, window)

    def __call__(self, exponent) -> gmpy2.mpz:
        """prod_i bases[i]^(bit i of ``exponent``) mod modulus."""
        exponent = gmpy2.mpz(exponent)
        if not 0 <= exponent < gmpy2.mpz(1) << self.bits:
            got = "a negative one" if exponent < 0 else f"one of {exponent.bit_length()} bits"
            raise ValueError(f"exponent must lie in [0, 2^{self.bits}) for this "
                             f"{self.bits}-base table, got {got}")
        modulus, mask = self.modulus, (1 << self.window) - 1
        out = gmpy2.mpz(1)
        for products in self._groups:
            digit = int(exponent & mask)
            if digit:
                out = out * products[digit] % modulus
            exponent >>= self.window
        return out
