"""(m, m)-threshold Paillier decryption: a key that only all m agents together can use
(Sakuma et al., section 3.1: "decryption cannot be performed by fewer than t agents"; here
t = m, which is what section 4.2 needs for two agents and ppml's PPRL for m; docs/pprl.md).

Damgard & Jurik (2001) with s = 1, the secret exponent shared additively instead of by a
polynomial (with t = m no interpolation is needed, hence no safe primes and no Delta = m!
factors).  With lambda = lcm(p - 1, q - 1) and

    d = lambda (lambda^-1 mod n),   so d = 0 mod lambda and d = 1 mod n,

every ciphertext c = (1 + n)^x r^n mod n^2 has c^d = 1 + x n mod n^2 (r^(n d) = 1 since
lambda | d; (1 + n)^(x d) = 1 + x d n = 1 + x n).  The dealer shares d over the integers:
d_1 ... d_(m-1) uniform in [0, 2^(|d| + STATISTICAL_BITS)), d_m = d - (d_1 + ... + d_(m-1)).
Agent i's decryption share of c is c^(d_i) mod n^2 (`KeyShare.partial_decrypt`), and the
product of all m shares is c^d, from which x = (c^d - 1) / n (`combine`).

Who learns what: any m - 1 shares are within statistical distance (m - 1) 2^-STATISTICAL_BITS
of uniform and independent of d, so fewer than m agents learn nothing of d and cannot decrypt
(tested: their product is not of the form 1 + x n).  The dealer knows p, q and d: it is a party
of its own trust domain that must not collude with any agent, hands each agent its share over
its link and forgets p, q, d and the shares (`deal` keeps nothing).  A partial decryption costs
one exponentiation modulo n^2 with an exponent of about 2|n| + STATISTICAL_BITS bits, without
CRT (no agent knows the factors): several times a CRT decryption.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import gmpy2
from gmpy2 import mpz

from ppml.checks import check_int
from ppml.crypto.paillier.keys import PrivateKey, PublicKey
from ppml.crypto.rng import Stream, seeded_key, warn_insecure

STATISTICAL_BITS = 128
"""The shares of d hide it within statistical distance 2^-128 per share."""


class KeyShare:
    """Agent ``index``'s share of the decryption exponent of ``public_key`` (one of
    ``parties``).  Its repr never shows the exponent."""

    __slots__ = ("public_key", "index", "parties", "_exponent")

    def __init__(self, public_key: PublicKey, index: int, parties: int, exponent):
        self.public_key = public_key
        self.parties = check_int("parties", parties, 2)
        self.index = check_int("index", index, 0, parties - 1)
        self._exponent = mpz(exponent)

    def partial_decrypt(self, ciphertexts) -> "DecryptionShare":
        """This agent's decryption shares c^(d_i) mod n^2 of ``ciphertexts`` (raw ints); a
        ciphertext outside [1, n^2) or not coprime with n raises a ValueError naming it."""
        n, nsquare = self.public_key.n, self.public_key.nsquare
        values = []
        for at, c in enumerate(ciphertexts):
            c = mpz(c)
            if not 0 < c < nsquare or gmpy2.gcd(c, n) != 1:
                raise ValueError(f"ciphertext {at} is not a Paillier ciphertext of this "
                                 f"{self.public_key.bits}-bit key (outside [1, n^2) or not "
                                 "coprime with n)")
            values.append(gmpy2.powmod(c, self._exponent, nsquare))
        return DecryptionShare(self.index, self.parties, values)

    def exponent_bytes(self) -> bytes:
        """Its exponent d_i (signed: the last share may be negative), for the dealer's sealed
        hand-over to its agent alone (`from_bytes`)."""
        return int(self._exponent).to_bytes(self._exponent.bit_length() // 8 + 1, "big",
                                            signed=True)

    @classmethod
    def from_bytes(cls, public_key: PublicKey, index: int, parties: int,
                   data: bytes) -> "KeyShare":
        """The share whose `exponent_bytes` are ``data``."""
        return cls(public_key, index, parties, int.from_bytes(data, "big", signed=True))

    def __repr__(self):
        return f"KeyShare({self.index + 1} of {self.parties} for {self.public_key!r})"


@dataclass(frozen=True)
class DecryptionShare:
    """Agent ``index``'s decryption shares of a list of ciphertexts."""

    index: int
    parties: int
    values: list


def deal(private_key: PrivateKey, parties: int, seed: int | None = None) -> list[KeyShare]:
    """The ``parties`` shares of ``private_key``'s decryption exponent, one per agent, drawn
    from ``os.urandom`` (an integer ``seed``: from a public seed, INSECURE).  The caller (the
    dealer) must hand each share to its agent alone and drop the key and the shares."""
    parties = check_int("parties", parties, 2)
    public_key = private_key.public_key
    n, p, q = public_key.n, private_key.p, private_key.q
    lam = (p - 1) * (q - 1) // gmpy2.gcd(p - 1, q - 1)
    d = lam * gmpy2.invert(lam, n)
    if seed is None:
        random_bytes = os.urandom
    else:
        warn_insecure(seed)
        random_bytes = Stream(seeded_key(seed, "threshold-paillier", parties)).bytes
    bits = d.bit_length() + STATISTICAL_BITS
    shares = [mpz(int.from_bytes(random_bytes((bits + 7) // 8), "big") >> (-bits % 8))
              for _ in range(parties - 1)]
    shares.append(d - sum(shares))
    return [KeyShare(public_key, i, parties, share) for i, share in enumerate(shares)]


def combine(public_key: PublicKey, shares: list) -> list:
    """The residues x in [0, n) from every agent's `DecryptionShare` of the same ciphertexts;
    a ValueError when a share is missing, repeated or of another length, or when the product is
    not 1 + x n (a wrong or tampered share)."""
    if not shares:
        raise ValueError("no decryption shares to combine")
    parties = shares[0].parties
    if sorted(s.index for s in shares) != list(range(parties)) or \
            any(s.parties != parties for s in shares):
        raise ValueError(f"decryption needs the shares of all {parties} agents, exactly once "
                         f"each; got agents {sorted(s.index for s in shares)}")
    counts = {len(s.values) for s in shares}
    if len(counts) != 1:
        raise ValueError(f"the decryption shares cover different numbers of ciphertexts: "
                         f"{sorted(counts)}")
    n, nsquare = public_key.n, public_key.nsquare
    out = []
    for at in range(counts.pop()):
        product = mpz(1)
        for share in shares:
            product = product * share.values[at] % nsquare
        x, rest = divmod(product - 1, n)
        if rest:
            raise ValueError(f"the decryption shares of ciphertext {at} do not combine: one "
                             "is wrong or was tampered with")
        out.append(x)
    return out
