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
import numpy as np

from ppml.checks import check_int

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
        window = check_int("window", window, 1, MAX_WINDOW, what="an integer")
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
        bits = check_int("bits", bits, 1, what="an integer")
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


class FixedBaseProducts:
    """prod_j bases[j]^(e_j) mod ``modulus`` for exponents 0 <= e_j < 2^``bits``: a comb of
    ``depth`` rows over one `FixedBaseTable` (Lim and Lee 1994, "More flexible exponentiation with
    precomputation"; HAC Algorithm 14.117 for several bases).

    Write e_j = sum_q sum_{r < depth} bit(e_j, q depth + r) 2^(q depth + r).  The table's bases
    are the columns g_j^(2^(q depth)) for every j and q < ceil(bits / depth), in (q, j) order,
    and

        prod_j g_j^(e_j) = prod_{r from depth - 1 down to 0} (...)^2 table(row r),

    where row r holds bit r of every column's ``depth``-bit chunk.  One evaluation costs
    ``depth`` - 1 squarings and about len(bases) bits / window multiplications (zero digits are
    skipped); the table holds len(bases) bits / (depth window) groups of 2^window values.
    depth = 1 is the plain fixed-base windowed method, without squarings and with the largest
    table.  Bases, tables and exponents are values of the caller: nothing here is secret."""

    __slots__ = ("modulus", "bits", "depth", "count", "_chunks", "_table")

    def __init__(self, bases, bits: int, modulus, window: int = 8, depth: int = 8):
        bits, depth = (check_int(name, value, 1, what="an integer")
                       for name, value in (("bits", bits), ("depth", depth)))
        bases = [gmpy2.mpz(b) for b in bases]
        self.modulus, self.bits, self.depth, self.count = gmpy2.mpz(modulus), bits, depth, \
            len(bases)
        self._chunks = -(-bits // depth)
        columns = [squarings(base, (self._chunks - 1) * depth + 1, modulus)[::depth]
                   for base in bases]
        self._table = FixedBaseTable([columns[j][q] for q in range(self._chunks)
                                      for j in range(len(bases))], modulus, window)

    def __call__(self, exponents) -> gmpy2.mpz:
        """prod_j bases[j]^(exponents[j]) mod modulus."""
        exponents = [int(e) for e in exponents]
        if len(exponents) != self.count:
            raise ValueError(f"exponents must hold one exponent per base ({self.count}), got "
                             f"{len(exponents)}")
        if any(e < 0 or e >> self.bits for e in exponents):
            raise ValueError(f"exponents must lie in [0, 2^{self.bits}) for this table, got "
                             f"{[e.bit_length() if e >= 0 else 'negative' for e in exponents]}"
                             " bits")
        size = self._chunks * self.depth
        bits = np.unpackbits(np.frombuffer(b"".join(e.to_bytes(-(-size // 8), "little")
                                                    for e in exponents), np.uint8),
                             bitorder="little").reshape(self.count, -1)[:, :size]
        rows = bits.reshape(self.count, self._chunks, self.depth).transpose(2, 1, 0) \
            .reshape(self.depth, -1)                     # row r: bit r of every (q, j) chunk
        modulus, acc = self.modulus, gmpy2.mpz(1)
        for row in rows[::-1]:
            if acc != 1:
                acc = acc * acc % modulus
            digits = int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")
            if digits:
                acc = acc * self._table(digits) % modulus
        return acc
