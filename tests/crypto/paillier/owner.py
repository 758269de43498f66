"""What the key owner can compute from an n-th residue: its n-th root and that root's characters
of small order modulo p and q (the attacks on structured obfuscators, docs/paillier.md)."""

import gmpy2


def nth_root(private_key, value):
    """R with R^n = value mod n^2, for an n-th residue ``value``: only the key owner can."""
    p, q, n = private_key.p, private_key.q, private_key.public_key.n
    lam = (p - 1) * (q - 1) // gmpy2.gcd(p - 1, q - 1)
    return gmpy2.powmod(value, gmpy2.invert(n, lam), n)


def characters(private_key, root) -> tuple:
    """The Legendre symbols of ``root`` modulo p and q (what the key owner can always read)."""
    return (gmpy2.legendre(root, private_key.p), gmpy2.legendre(root, private_key.q))


def cubic_character(prime, root) -> int:
    """The class of ``root`` in Z_prime^* / (Z_prime^*)^3 (0, 1 or 2), for prime = 1 mod 3: which
    of the three cube roots of unity root^((prime - 1) / 3) is."""
    unit = gmpy2.powmod(root, (prime - 1) // 3, prime)
    omega = next(gmpy2.powmod(g, (prime - 1) // 3, prime) for g in range(2, 100)
                 if gmpy2.powmod(g, (prime - 1) // 3, prime) != 1)
    return [gmpy2.powmod(omega, i, prime) for i in range(3)].index(unit)
