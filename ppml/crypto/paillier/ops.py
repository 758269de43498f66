"""Homomorphic arithmetic on raw ciphertexts (sequences of gmpy2 mpz), vectorised over lists.

The two identities LinUCB-DS builds on (Ciucanu et al., section 2):
E(m1) E(m2) = E(m1 + m2) and E(m)^k = E(k m) (mod n^2).  Step (3) of Fig. 4 is made of them:
theta_hat* = A^-1 b* (plaintext matrix x encrypted vector) and B_i* = EDP(theta_hat*, x_i)
(encrypted vector . plaintext vector, for every arm).

gmpy2 works on the ciphertext integers directly: no phe EncryptedNumber, exponent or
int <-> mpz conversion per operation.  A negative scalar k uses the modular-inverse trick,
E(m)^k = (E(m)^-1)^|k|: the exponent stays |k| bits long instead of the full-size residue
n - |k|.  In a dot product the negative terms are multiplied together and inverted once.

Results of these operations are not re-randomised (E(m)^0 is the constant 1): re-randomise
(`EncryptedArray.rerandomize`) before a ciphertext leaves the party that computed it.
"""

from __future__ import annotations

import gmpy2


def add(public_key, a, b) -> list:
    """E(a_i + b_i) for ciphertexts a_i, b_i."""
    nsquare = public_key.nsquare
    return [x * y % nsquare for x, y in zip(a, b, strict=True)]


def add_plain(public_key, ciphertexts, residues) -> list:
    """E(m_i + v_i) for ciphertexts E(m_i) and plaintext residues v_i: c (1 + v n) mod n^2."""
    n, nsquare = public_key.n, public_key.nsquare
    return [c * (1 + v * n) % nsquare for c, v in zip(ciphertexts, residues, strict=True)]


def negate(public_key, ciphertexts) -> list:
    """E(-m_i): the inverses mod n^2."""
    nsquare = public_key.nsquare
    return [gmpy2.invert(c, nsquare) for c in ciphertexts]


def total(public_key, ciphertexts):
    """E(sum m_i): the product of the ciphertexts mod n^2 (E(0) = 1 for no terms)."""
    nsquare = public_key.nsquare
    out = gmpy2.mpz(1)
    for c in ciphertexts:
        out = out * c % nsquare
    return out


def mul_scalars(public_key, ciphertexts, scalars) -> list:
    """E(k_i m_i) for plaintext integers k_i of either sign."""
    nsquare = public_key.nsquare
    return [gmpy2.powmod(c, k, nsquare) if k >= 0
            else gmpy2.powmod(gmpy2.invert(c, nsquare), -k, nsquare)
            for c, k in zip(ciphertexts, scalars, strict=True)]


def dot(public_key, ciphertexts, scalars):
    """E(sum k_i m_i): the encrypted dot product EDP of LinUCB-DS (section 3), one inversion."""
    nsquare = public_key.nsquare
    positive = negative = gmpy2.mpz(1)
    for c, k in zip(ciphertexts, scalars, strict=True):
        if k > 0:
            positive = positive * gmpy2.powmod(c, k, nsquare) % nsquare
        elif k < 0:
            negative = negative * gmpy2.powmod(c, -k, nsquare) % nsquare
    return positive if negative == 1 else positive * gmpy2.invert(negative, nsquare) % nsquare


def dot_table(public_key, encrypted_rows, plain_rows) -> list:
    """[[dot(e, w) for w in plain_rows] for e in encrypted_rows]: every matrix product with one
    encrypted and one plaintext operand reduces to this table (`array.EncryptedArray`)."""
    return [[dot(public_key, e, w) for w in plain_rows] for e in encrypted_rows]
