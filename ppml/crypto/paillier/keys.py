"""Paillier keys: generation from the CSPRNG, the key-size policy, encryption and CRT decryption.

Paillier's scheme as LinUCB-DS uses it (Ciucanu et al., section 2, "Paillier Asymmetric
Encryption"; Paillier 1999): n = p q, g = n + 1, so that g^m = 1 + m n (mod n^2) and

    Enc(m) = (1 + m n) r^n mod n^2        Dec(c) = L(c^lambda mod n^2) mu mod n.

Encryption takes the obfuscator r^n precomputed (`pool.ObfuscatorPool`): online it is one
multiplication.  Decryption is done modulo p^2 and q^2 and recombined by the Chinese remainder
theorem (Paillier 1999, section 7), which phe does too.

Keys below 2048 bits are refused unless ``insecure_key_bits_ok=True`` (benchmarks against the
paper's 1024-bit figures, fast tests).  Primes come from ``os.urandom``; an integer ``seed``
instead derives them from a public seed (**INSECURE**, reproducible experiments only).

Keys convert to and from phe's (python-paillier, same g = n + 1): `PublicKey.to_phe`,
`PublicKey.from_phe`, `PrivateKey.to_phe`, `PrivateKey.from_phe`.  phe is imported only there:
its import costs 15-100 ms (it loads click for its command line).
"""

from __future__ import annotations

import numbers
import os

import gmpy2
from gmpy2 import mpz

from ppml.checks import check_int
from ppml.crypto.rng import Stream, seeded_key, warn_insecure

DEFAULT_KEY_BITS = 2048
MIN_KEY_BITS = 2048
"""Smallest modulus accepted without ``insecure_key_bits_ok=True`` (NIST SP 800-57: 112 bits)."""
MIN_INSECURE_KEY_BITS = 256
"""Absolute floor, even with ``insecure_key_bits_ok=True``: primes must differ in their top
100 bits (see `generate_keypair`), and smaller keys hold too few packing slots to test."""
PRIME_GAP_BITS = 100
"""p and q must differ in their top bits: |p - q| >= 2^(bits/2 - 100) (Fermat factoring)."""


def check_key_bits(bits: int, insecure_key_bits_ok: bool = False) -> int:
    """Return ``bits`` if it is an acceptable modulus size, else raise a ValueError naming the
    bound."""
    bits = check_int("key_bits", bits, 0)
    if bits < MIN_INSECURE_KEY_BITS:
        raise ValueError(f"key_bits must be >= {MIN_INSECURE_KEY_BITS} even with "
                         f"insecure_key_bits_ok=True, got {bits}")
    if bits < MIN_KEY_BITS and not insecure_key_bits_ok:
        raise ValueError(f"key_bits must be >= {MIN_KEY_BITS} for a secure Paillier key, got "
                         f"{bits}; pass insecure_key_bits_ok=True only for tests or benchmarks "
                         "against 1024-bit figures")
    return bits


def check_residues(name: str, values, count: int, why: str, public_key) -> list:
    """``values`` as a list of at least ``count`` values in (0, n^2) (fresh n-th residues for a
    table of obfuscators); ``why`` says where ``count`` comes from."""
    values = list(values)
    if len(values) < count:
        raise ValueError(f"{name} must hold at least {count} fresh n-th residues ({why}), got "
                         f"{len(values)}")
    for index, value in enumerate(values):
        if not 0 < value < public_key.nsquare:
            raise ValueError(f"{name} value {index} must lie in (0, n^2) for this "
                             f"{public_key.bits}-bit key")
    return values


class PublicKey:
    """A Paillier public key (n; g = n + 1 is implied).  Equal keys have equal n.

    ``max_plaintext`` = (n - 1) / 2 is the largest magnitude a signed plaintext may have: residues
    above it decode as negative (`encoding.from_residues`).
    """

    __slots__ = ("n", "nsquare", "bits", "max_plaintext")

    def __init__(self, n, *, insecure_key_bits_ok: bool = False):
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise TypeError(f"n must be an integer, got {type(n).__name__}")
        n = mpz(n)
        if n < 3 or not n % 2:
            raise ValueError("n must be an odd integer > 1 (the product of two odd primes)")
        check_key_bits(n.bit_length(), insecure_key_bits_ok)
        self.n = n
        self.nsquare = n * n
        self.bits = n.bit_length()
        self.max_plaintext = (n - 1) // 2

    def encrypt_raw(self, residues, obfuscators) -> list:
        """Enc(m) = (1 + m n) r^n mod n^2 for residues m in [0, n), one fresh r^n each."""
        n, nsquare = self.n, self.nsquare
        return [(1 + m * n) * rn % nsquare for m, rn in zip(residues, obfuscators, strict=True)]

    def rerandomize_raw(self, ciphertexts, obfuscators) -> list:
        """c r^n mod n^2: the same plaintext under fresh randomness."""
        nsquare = self.nsquare
        return [c * rn % nsquare for c, rn in zip(ciphertexts, obfuscators, strict=True)]

    def to_phe(self):
        """This key as phe's.

        Returns:
          phe.PaillierPublicKey: the key with the same n (and g = n + 1).
        """
        import phe

        return phe.PaillierPublicKey(int(self.n))

    @classmethod
    def from_phe(cls, key, *, insecure_key_bits_ok: bool = False) -> "PublicKey":
        """A phe public key as ours, under the same key-size policy as any received key.

        Args:
          key (phe.PaillierPublicKey): the key to convert.
          insecure_key_bits_ok (bool): accept an n below `MIN_KEY_BITS` (tests, benchmarks).

        Returns:
          PublicKey: the key with the same n.

        Raises:
          TypeError: if *key* is not a phe.PaillierPublicKey.
          ValueError: if key.g is not key.n + 1, or n is too small (`check_key_bits`).
        """
        import phe

        if not isinstance(key, phe.PaillierPublicKey):
            raise TypeError(f"key must be a phe.PaillierPublicKey, got {type(key).__name__}")
        if key.g != key.n + 1:
            raise ValueError("key.g must be key.n + 1: ppml's Paillier fixes g = n + 1")
        return cls(key.n, insecure_key_bits_ok=insecure_key_bits_ok)

    def __eq__(self, other):
        return isinstance(other, PublicKey) and self.n == other.n

    def __hash__(self):
        return hash(self.n)

    def __reduce__(self):
        return _public_key, (int(self.n),)

    def __repr__(self):
        return f"PublicKey({self.bits} bits, n=0x{int(self.n) & 0xFFFFFFFF:08x}...)"


def _public_key(n: int) -> PublicKey:
    """Unpickle a key that was accepted when it was made (whatever its size)."""
    return PublicKey(n, insecure_key_bits_ok=True)


class PrivateKey:
    """The factors p < q of n and the CRT constants.  Its repr never shows them.

    It is pickled only to reach the key owner's own decryptor actors, once each
    (`bulk.Decryptor`); never pass it as a Ray task argument.
    """

    __slots__ = ("public_key", "p", "q", "psquare", "qsquare", "hp", "hq", "p_inverse")

    def __init__(self, public_key: PublicKey, p, q):
        p, q = sorted((mpz(p), mpz(q)))
        if p == q or p * q != public_key.n:
            raise ValueError("p and q must be distinct factors of the public key's n")
        self.public_key = public_key
        self.p, self.q = p, q
        self.psquare, self.qsquare = p * p, q * q
        self.p_inverse = gmpy2.invert(p, q)
        self.hp = _h(public_key.n, p, self.psquare)
        self.hq = _h(public_key.n, q, self.qsquare)

    def decrypt_raw(self, ciphertexts) -> list:
        """Residues m in [0, n) of ciphertexts, by CRT.  A ciphertext outside [0, n^2) or not
        coprime with n (tampered, or not a Paillier ciphertext) raises a ValueError.

        A ciphertext made under another key cannot be detected here: (m, r) -> (1 + m n) r^n
        mod n^2 maps Z_n x Z_n^* one-to-one onto the units of Z_(n^2), so every unit below n^2
        is the encryption of some m under this key, and another key's ciphertext decrypts to an
        unrelated residue without error (only one at or above this n^2, from a larger key, is
        refused).  The caller must know which key a ciphertext is for:
        `array.EncryptedArray.decrypt` checks its public key against this key's."""
        p, q, psquare, qsquare = self.p, self.q, self.psquare, self.qsquare
        hp, hq, p_inverse, nsquare = self.hp, self.hq, self.p_inverse, self.public_key.nsquare
        out = []
        for index, c in enumerate(ciphertexts):
            c = mpz(c)
            if not 0 <= c < nsquare:
                raise ValueError(f"ciphertext {index} is outside [0, n^2) for this "
                                 f"{self.public_key.bits}-bit key: not a valid Paillier ciphertext")
            if not (c % p and c % q):
                raise ValueError(f"ciphertext {index} is not coprime with n: "
                                 "not a valid Paillier ciphertext")
            mp = (gmpy2.powmod(c, p - 1, psquare) - 1) // p * hp % p
            mq = (gmpy2.powmod(c, q - 1, qsquare) - 1) // q * hq % q
            out.append(mp + (mq - mp) * p_inverse % q * p)
        return out

    def to_phe(self):
        """This key as a ``phe.PaillierPrivateKey`` (the same p, q and public key)."""
        import phe

        return phe.PaillierPrivateKey(self.public_key.to_phe(), int(self.p), int(self.q))

    @classmethod
    def from_phe(cls, key, *, insecure_key_bits_ok: bool = False) -> "PrivateKey":
        """A ``phe.PaillierPrivateKey`` as ours: `PublicKey.from_phe`'s checks and errors for
        its public key, and a ValueError if p and q are not distinct factors of its n."""
        import phe

        if not isinstance(key, phe.PaillierPrivateKey):
            raise TypeError(f"key must be a phe.PaillierPrivateKey, got {type(key).__name__}")
        public_key = PublicKey.from_phe(key.public_key, insecure_key_bits_ok=insecure_key_bits_ok)
        return cls(public_key, key.p, key.q)

    def __repr__(self):
        return f"PrivateKey(for {self.public_key!r})"

    def factors(self) -> tuple:
        """(p, q) as Python ints: what the key's owner keeps in its own sealed checkpoint, so
        that ciphertexts made under it before a resume still decrypt (`keypair_from_factors`)."""
        return int(self.p), int(self.q)


def keypair_from_factors(factors) -> tuple:
    """The key pair of `PrivateKey.factors` again (its size was checked when it was made)."""
    p, q = factors
    public_key = PublicKey(p * q, insecure_key_bits_ok=True)
    return public_key, PrivateKey(public_key, p, q)


def _h(n, prime, prime_square):
    """h_p = L_p(g^(p-1) mod p^2)^-1 mod p with g = n + 1 (Paillier 1999, section 7)."""
    return gmpy2.invert((gmpy2.powmod(n + 1, prime - 1, prime_square) - 1) // prime, prime)


def generate_keypair(bits: int = DEFAULT_KEY_BITS, *, insecure_key_bits_ok: bool = False,
                     seed: int | None = None) -> tuple[PublicKey, PrivateKey]:
    """A fresh key pair with an n of exactly ``bits`` bits.

    Primes are gmpy2.next_prime of candidates drawn from ``os.urandom`` with their two top bits
    set (so that p q has exactly ``bits`` bits); p and q must differ in their top
    ``PRIME_GAP_BITS`` bits.  ``seed`` (an int) draws the candidates from an AES-CTR stream keyed
    by the seed instead: the key is then public to anyone who knows the seed, so this mode is
    INSECURE, logs a warning and serves only to reproduce experiments and to make test keys.
    """
    check_key_bits(bits, insecure_key_bits_ok)
    if bits % 2:
        raise ValueError(f"key_bits must be even (two primes of key_bits / 2 bits), got {bits}")
    if seed is None:
        random_bytes = os.urandom
    else:
        random_bytes = Stream(seeded_key(seed, "paillier-keygen", bits)).bytes
        warn_insecure(seed)
    half = bits // 2
    while True:
        p, q = _prime(half, random_bytes), _prime(half, random_bytes)
        n = p * q
        if abs(p - q) >> (half - PRIME_GAP_BITS) and gmpy2.gcd(n, (p - 1) * (q - 1)) == 1:
            public_key = PublicKey(n, insecure_key_bits_ok=insecure_key_bits_ok)
            return public_key, PrivateKey(public_key, p, q)


def _prime(bits: int, random_bytes) -> mpz:
    """A prime of exactly ``bits`` bits whose two top bits are set."""
    top = mpz(3) << (bits - 2)
    while True:
        candidate = mpz(int.from_bytes(random_bytes((bits + 7) // 8), "big"))
        prime = gmpy2.next_prime(candidate >> (8 * ((bits + 7) // 8) - bits) | top | 1)
        if prime.bit_length() == bits:
            return prime
