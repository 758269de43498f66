"""Step (3).ii of LinUCB-DS (Ciucanu et al., Fig. 4(a)) from the fixed theta*: the packed,
permuted scores B_i* as fixed-base products of theta*'s d ciphertexts.

In the paper P computes theta_hat* = A^-1 b* (step (3).i), then B_i* = EDP(theta_hat*, x_i) for
every arm.  Every ciphertext there is a product of powers of theta* = E(theta) and plaintexts:
pull* gives r* = EDP(theta*, x) E(eta) with E(eta) = 1 + eta n (P knows eta), so

    b*     = theta*^G  E(e)                    with G = sum x x^T,  e = sum eta x
    B_i*   = theta*^(C_i) E(w_i + plain_i)     with C_i = x_i^T A^-1 G, w_i = x_i^T A^-1 e,

C_i and w_i being P's plaintext integers, rounded to the scores' scale k = 2
(`reference.FixedPoint.score_terms`).  A packed ciphertext prod_i B_i*^(2^(i b)) is then
prod_j theta*_j^(E_j) E(P) with E_j = sum_i C_ij 2^(i b) and a plaintext P (exponent arithmetic
in Z).  theta* is fixed for the whole run, so a `FixedBaseProducts` table over theta* (built
once, at step 1) replaces the b squarings per arm of Horner's rule by about d b / window
multiplications per arm.

Signed coefficients: with |c_ij| < 2^(e - 1) = h (``coefficient_bound``), E_j + h W with
W = sum_i 2^(i b) has non-negative slots c_ij + h < 2^e <= 2^b, and the constant
prod_j theta*_j^(-h W) (one per group size, cached) takes h W off again.

What leaves P is unchanged: the packed ciphertext is the same group element as before, then
re-randomised with a fresh obfuscator by the caller.
"""

from __future__ import annotations

import gmpy2

from ppml.crypto.paillier import ops
from ppml.crypto.paillier.fixed_base import FixedBaseProducts

WINDOW = 10
"""Table window: about d b / 10 multiplications per arm, 2^10 values per table group."""
DEPTH = 8
"""Comb depth: 7 squarings per packed ciphertext buy tables 8x smaller than depth 1."""


class PackedScores:
    """E(sum_i (c_i . theta + plain_i) 2^(i b)) for up to ``slots`` slots of b = ``slot_bits``
    bits, from theta* = [E(theta_j)] (fixed), integer coefficient rows c_i with
    |c_ij| <= ``coefficient_bound``, and plaintexts plain_i.  The caller keeps every slot's
    total in [0, 2^b).  Pickles as its inputs: an unpickled copy rebuilds its tables."""

    def __init__(self, public_key, theta, slot_bits: int, slots: int, coefficient_bound: int,
                 window: int = WINDOW, depth: int = DEPTH):
        self._args = (public_key, list(theta), slot_bits, slots, coefficient_bound, window, depth)
        exponent_bits = int(coefficient_bound).bit_length() + 1
        if exponent_bits > slot_bits:
            raise ValueError(f"coefficient_bound={coefficient_bound} needs {exponent_bits}-bit "
                             f"slots, more than slot_bits={slot_bits}")
        self.public_key, self.slot_bits, self.slots = public_key, slot_bits, slots
        self.bound, self.half = int(coefficient_bound), 1 << (exponent_bits - 1)
        self.products = FixedBaseProducts(theta, slots * slot_bits, public_key.nsquare, window,
                                          depth)
        self._shifts: dict[int, tuple] = {}

    def __reduce__(self):
        return (PackedScores, self._args)

    def shift(self, size: int) -> tuple:
        """(h W, prod_j theta*_j^(-h W)) for ``size`` slots: h added to each slot, and the
        constant that takes it off again (made once per size)."""
        if size not in self._shifts:
            shift = sum(self.half << (i * self.slot_bits) for i in range(size))
            shifted = self.products([shift] * self.products.count)
            self._shifts[size] = (shift, gmpy2.invert(shifted, self.public_key.nsquare))
        return self._shifts[size]

    def __call__(self, coefficients, plain) -> gmpy2.mpz:
        """The packed ciphertext of rows ``coefficients`` (one per slot, d integers each) and
        ``plain`` (one integer per slot); not re-randomised."""
        size, b = len(coefficients), self.slot_bits
        if not 1 <= size <= self.slots or len(plain) != size:
            raise ValueError(f"need 1 to {self.slots} coefficient rows and as many plaintexts, "
                             f"got {size} and {len(plain)}")
        if any(abs(int(c)) > self.bound for row in coefficients for c in row):
            raise ValueError(f"a coefficient exceeds coefficient_bound={self.bound}")
        shift, unshift = self.shift(size)
        exponents = [shift + sum(int(row[j]) << (i * b) for i, row in enumerate(coefficients))
                     for j in range(self.products.count)]
        packed_plain = sum(int(p) << (i * b) for i, p in enumerate(plain))
        out = self.products(exponents) * unshift % self.public_key.nsquare
        return ops.add_plain(self.public_key, [out], [packed_plain % self.public_key.n])[0]
