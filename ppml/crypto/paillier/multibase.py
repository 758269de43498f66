"""Multi-base obfuscators: products of short powers of many fresh n-th residues, statistically
as good as r^n, even against the key owner, for a fixed-base table's cost.

With G the group of n-th residues mod n^2 (isomorphic to Z_n^*, hence to Z_(p-1) x Z_(q-1):
rank 2, order phi(n) < n), the encrypting party draws k fresh uniform elements g_j = rho_j^n of
G once (`pool.fresh_obfuscators`), and each obfuscator is

    prod_(j < k) g_j^(s_j)  mod n^2,   s_j uniform in [0, 2^t), independent, from ``secrets``,

read from one `fixed_base.FixedBaseTable` over the k t bases g_j^(2^i): one multiplication mod
n^2 per window of the k t-bit exponent, against about 1.2 |n| for r^n.

**How close to r^n.**  r^n is uniform on G.  Averaged over the bases, the statistical distance
of one obfuscator from uniform is at most (Cauchy-Schwarz and Parseval over G's characters chi;
each chi(g_j) is a uniform root of unity of chi's order m, and s_j = s'_j mod m with probability
2^-t when m >= 2^t, and `collision` (m, t) <= 1/m + 2^-t, exactly 1/m when m divides 2^t, when
m < 2^t)

    1/2 sqrt( |G| 2^(-k t) + sum_(2 <= m < 2^t) m^2 collision(m, t)^k ),

since a rank-2 group has at most m^2 characters of order m.  With k t >= |n| + 2 lambda the
first term is at most 2^(-2 lambda); with k >= 2 lambda + 4 the second, led by the three
characters of order 2 (the Legendre symbols mod p and q, the key owner's attack on a single
base, docs/paillier.md), is below 2^(-2 lambda) too (`distance_bound` computes the whole
bound: at most 2^-lambda for keys of 1024 to 4096 bits, tested).  The
first term is the leftover hash lemma's (Impagliazzo, Levin and Luby 1989); the second is why
the bases must be many, not just the exponent long.  Draws from one set of bases are
independent given the bases, so M obfuscators are within M 2^-lambda of M values r^n.

lambda = ``statistical_bits`` (128 by default: k = 260 bases).  The bases are made by the
encrypting party from the public n and its own CSPRNG; none is secret (the bound above holds
for bases anyone knows), the exponents are.  Cost and measurements: docs/paillier.md,
"Multi-base obfuscators".
"""

from __future__ import annotations

import math
import secrets

from ppml.checks import check_int
from ppml.crypto.paillier.fixed_base import FixedBaseTable, squarings
from ppml.crypto.paillier.keys import check_residues

STATISTICAL_BITS = 128
"""lambda: an obfuscator is within 2^-lambda of r^n (the module's bound)."""
DEFAULT_WINDOW = 8
"""Table window: about (|n| + 2 lambda) / 8 multiplications mod n^2 per obfuscator, from a
table of (|n| + 2 lambda) / 8 x 256 values mod n^2 (38 MB at 2048 bits)."""


def base_count(statistical_bits: int) -> int:
    """k = 2 lambda + 4: enough bases for the characters of small order (the module's bound)."""
    return 2 * statistical_bits + 4


def exponent_bits(key_bits: int, statistical_bits: int) -> int:
    """t = ceil((|n| + 2 lambda) / k): enough exponent bits for the leftover-hash term."""
    return -(-(key_bits + 2 * statistical_bits) // base_count(statistical_bits))


def collision(m: int, t: int) -> float:
    """Pr[s = s' mod m] for s, s' independent and uniform in [0, 2^t)."""
    q, r = divmod(1 << t, m)
    return (r * (q + 1) ** 2 + (m - r) * q * q) / 4.0 ** t


def distance_bound(key_bits: int, statistical_bits: int) -> float:
    """log2 of the module's bound on one obfuscator's distance from r^n (averaged over bases),
    with the exact collision probabilities for the orders m < min(2^t, 2^16) and, above,
    m^2 (2 / m)^k <= 2^(2 t - 15 k) for each of the at most 2^t orders left."""
    k, t = base_count(statistical_bits), exponent_bits(key_bits, statistical_bits)
    small = sum(m * m * collision(m, t) ** k for m in range(2, 1 << min(t, 16)))
    tail = 2.0 ** (3 * t - 15 * k) if t > 16 else 0.0
    large = 2.0 ** (key_bits - k * t)
    return math.log2(0.5 * math.sqrt(large + small + tail))


class MultiBase:
    """The public part of the encrypting party's multi-base obfuscators for ``public_key``: the
    fresh n-th residues ``bases`` (at least `base_count`) and one table over their powers.

    `draw` returns obfuscators prod_j g_j^(s_j) with fresh t-bit exponents from ``secrets``.
    """

    def __init__(self, public_key, bases, statistical_bits: int = STATISTICAL_BITS,
                 window: int = DEFAULT_WINDOW):
        statistical_bits = check_int("statistical_bits", statistical_bits, 40, 256,
                                     what="an integer")
        need = base_count(statistical_bits)
        bases = check_residues("bases", bases, need,
                               f"2 lambda + 4 for statistical_bits={statistical_bits}", public_key)
        self.public_key = public_key
        self.statistical_bits = statistical_bits
        self.exponent_bits = exponent_bits(public_key.bits, statistical_bits)
        powers = [power for base in bases[:need]
                  for power in squarings(base, self.exponent_bits, public_key.nsquare)]
        self.table = FixedBaseTable(powers, public_key.nsquare, window)

    def draw(self, count: int) -> list:
        """``count`` obfuscators, each with k fresh t-bit exponents (one k t-bit draw)."""
        count = check_int("count", count, 0, what="an integer")
        bits = self.table.bits
        return [self.table(secrets.randbits(bits)) for _ in range(count)]


def multibase_obfuscators(base: MultiBase, count: int) -> list:
    """``base.draw(count)``, as a function `bulk.run_batches` can run as a Ray task."""
    return base.draw(count)

