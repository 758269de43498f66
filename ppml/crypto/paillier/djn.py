"""Short-exponent obfuscators (Damgard, Jurik and Nielsen 2010, "A generalization of Paillier's
public-key system with applications to electronic voting", section 4.2), from fixed-base tables,
with a subset-product complement that hides the obfuscator's coset from the key owner.

For a k-bit n, an obfuscator is h_s^a times a random subset product of ``COMPLEMENT_BASES``
uniform n-th residues rho_j^n (the complement), with

    h = -x^2 mod n for x uniform in Z_n^*,   h_s = h^n mod n^2,   a uniform in [0, 2^ceil(k/2))

(secretflow HEU's DJN: ceil(k/2)-bit exponents).  By the leftover hash lemma (Impagliazzo, Levin
and Luby 1989) the complement's image in Z_n^* / <h> is close to uniform.  One
`fixed_base.FixedBaseTable` over the bases h_s^(2^i), i < ceil(k/2), then the rho_j^n, makes an
obfuscator one multiplication mod n^2 per window, against a full-size exponentiation for r^n
(`pool.fresh_obfuscators`).  The encrypting party (the pool's owner) makes the bases from the
public n and the OS CSPRNG, never the key owner; none is secret.  The exponents are, and are
drawn from ``secrets`` in the process that computes them.

Why the complement, why the encrypting party makes the bases, and the security (about 80 bits
against the key owner at a 2048-bit key): docs/paillier.md, "Short-exponent obfuscators", and
docs/decisions.md, "The DJN base is made by the encrypting party, with a complement".
"""

from __future__ import annotations

import math
import secrets

import gmpy2

from ppml.crypto.paillier.fixed_base import FixedBaseTable, squarings
from ppml.crypto.paillier.keys import check_residues

COMPLEMENT_BASES = 128
"""Uniform n-th residues in the subset-product complement: the leftover-hash bound above."""
DEFAULT_WINDOW = 8
"""Table window: ceil(k/2) / 8 + 16 multiplications per obfuscator, 2^8 values per window."""


def exponent_bits(key_bits: int) -> int:
    """The short exponent's length, ceil(k/2) bits for a k-bit modulus (DJN 2010, section 4.2)."""
    return math.ceil(key_bits / 2)


def random_unit(n) -> gmpy2.mpz:
    """x uniform in Z_n^* from the OS CSPRNG (``secrets``)."""
    while True:
        x = gmpy2.mpz(secrets.randbelow(int(n) - 1) + 1)
        if gmpy2.gcd(x, n) == 1:
            return x


def short_exponent_generator(public_key) -> gmpy2.mpz:
    """h_s = h^n mod n^2 with h = -x^2 mod n for x uniform in Z_n^* (`random_unit`)."""
    n = public_key.n
    x = random_unit(n)
    return gmpy2.powmod(-x * x % n, n, public_key.nsquare)


class ShortExponentBase:
    """The public part of the encrypting party's DJN obfuscators for ``public_key``: h_s
    (`short_exponent_generator`), the ``complement`` n-th residues rho_j^n (fresh ones, from
    `pool.fresh_obfuscators`), and one fixed-base table over both.

    `draw` returns obfuscators h_s^a prod_j (rho_j^n)^(c_j) for a uniform exponent a of
    `exponent_bits` bits and uniform bits c_j, each from ``secrets``.
    """

    def __init__(self, public_key, complement, window: int = DEFAULT_WINDOW):
        complement = check_residues("complement", complement, COMPLEMENT_BASES,
                                    "the leftover-hash bound", public_key)
        self.public_key = public_key
        self.h_s = short_exponent_generator(public_key)
        self.short_bits = exponent_bits(public_key.bits)
        powers = squarings(self.h_s, self.short_bits, public_key.nsquare)
        self.table = FixedBaseTable(powers + complement, public_key.nsquare, window)

    def obfuscator(self, exponent: int, subset: int) -> gmpy2.mpz:
        """h_s^exponent prod_j (rho_j^n)^(bit j of subset), for exponent < 2^`short_bits` and
        subset < 2^(number of complement values)."""
        if not 0 <= exponent < 1 << self.short_bits:
            raise ValueError(f"exponent must lie in [0, 2^{self.short_bits}), got "
                             f"{exponent.bit_length()} bits")
        return self.table(exponent | subset << self.short_bits)

    def draw(self, count: int) -> list:
        """``count`` obfuscators with fresh exponents and subsets from the OS CSPRNG."""
        subset_bits = self.table.bits - self.short_bits
        return [self.obfuscator(secrets.randbits(self.short_bits), secrets.randbits(subset_bits))
                for _ in range(count)]


def short_exponent_obfuscators(base: ShortExponentBase, count: int) -> list:
    """``base.draw(count)``, as a function `bulk.run_batches` can run as a Ray task."""
    return base.draw(count)
