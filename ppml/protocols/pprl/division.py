"""Private division of encrypted values by a public K = 2^k, exact (Sakuma et al., section 3.2,
"private division of encrypted values"; step 4(b) of Fig. 2 and 4(c) of Fig. 3).

The holder B has c = e_A(x) under the owner A's key, |x| < 2^b (``bound_bits``); afterwards B
has e_A(floor(x / K)) and neither learns x.  The paper runs the division of random shares by
SFE; here it is done in Z_N with one k-bit comparison on the secret-sharing engine:

1. B shifts and masks: x' = x + 2^b (in [0, 2^(b+1))), r uniform in [0, 2^(b+1+kappa)) from
   its CSPRNG, and sends c' = c e(2^b + r) to A.
2. A decrypts y = x' + r, an integer below 2^(b+2+kappa) < N, so nothing wraps.
3. A and B compare their low bits on the engine: beta = [y mod K < r mod K], which only the
   engine's parties see, as XOR shares beta_A, beta_B (`borrow_shares`).
4. A sends e(floor(y / K)) and e(beta_A).
5. B: with beta = beta_A (1 - 2 beta_B) + beta_B (the XOR),
   e(q) = e(floor(y / K)) e(beta_A)^-(1 - 2 beta_B) e(-beta_B - floor(r / K) - 2^(b-k)).

Encryptions per value: B two (the mask, which can carry a plaintext addend of the holder's, and
the last factor), A two; A one decryption.

Correctness: x' = y - r, so floor(x' / K) = floor(y / K) - floor(r / K) - [y mod K < r mod K]
(the borrow of the low k bits), and floor(x' / K) - 2^(b-k) = floor(x / K) since K divides
2^b.  The result is the floor of x / K for negative x too, which is what the fixed-point
reference computes (`learners.FixedPointQ`).

What each learns: A sees y = x' + r with r 1 + kappa bits wider than x', which hides x' within
statistical distance 2^-kappa (``statistical_bits`` = kappa, 40 by default), and its view of the
comparison (masked openings).  B sees ciphertexts under A's key and its view of the
comparison.  Neither sees beta: it stays XOR-shared until it is under A's key.
"""

from __future__ import annotations

import os

import gmpy2
import numpy as np
from gmpy2 import mpz

from ppml.checks import check_int
from ppml.crypto.paillier import ObfuscatorPool, ops
from ppml.mpc.protocols.convert import most_significant_bit

STATISTICAL_BITS = 40
"""kappa: the mask r is kappa bits wider than the shifted value (the issue's minimum)."""


class Encryptor:
    """One agent's Paillier encryptions: a pool of obfuscators per public key it encrypts under
    (`ObfuscatorPool`, of kind ``obfuscator``: ``full`` r^n or ``djn``), its own secrets, filled
    ahead of use by `prepare` (the offline phase) or ``batch`` at a time when they run out;
    with ``workers`` > 1, by Ray tasks on this node that run while the steps do."""

    def __init__(self, obfuscator: str = "full", batch: int = 64, workers: int = 1):
        self.obfuscator, self.batch, self.workers = obfuscator, batch, workers
        self._pools: dict = {}
        self.encryptions = 0

    def _pool(self, public_key) -> ObfuscatorPool:
        pool = self._pools.get(public_key)
        if pool is None:                 # workers > 1: Ray tasks fill it while the steps run
            pool = self._pools[public_key] = ObfuscatorPool(
                public_key, 0, obfuscator=self.obfuscator, workers=self.workers,
                stream=self.workers > 1)
            pool.size = self.batch
        return pool

    def prepare(self, public_key, count: int) -> None:
        """Offline: ``count`` more obfuscators for ``public_key``."""
        self._pool(public_key).fill(count)

    def encrypt(self, public_key, values: list) -> list:
        """Enc(v mod n) of each integer (signed) value."""
        self.encryptions += len(values)
        n = public_key.n
        return public_key.encrypt_raw([mpz(v) % n for v in values],
                                      self._pool(public_key).take(len(values)))


class DivisionHolder:
    """B's side: the ciphertexts under A's key, the masks r it draws, its borrow shares."""

    def __init__(self, public_key, bound_bits: int, division_bits: int, encryptor: Encryptor,
                 statistical_bits: int = STATISTICAL_BITS, random_bytes=os.urandom):
        self.public_key, self.encryptor = public_key, encryptor
        self.bound_bits = check_int("bound_bits", bound_bits, 1)
        self.division_bits = check_int("division_bits", division_bits, 1, bound_bits)
        self.statistical_bits = check_int("statistical_bits", statistical_bits, 40)
        if bound_bits + 2 + statistical_bits >= public_key.bits - 1:
            raise ValueError(f"bound_bits + statistical_bits + 2 must stay below the key's "
                             f"{public_key.bits} bits, got {bound_bits} + {statistical_bits}")
        self._random_bytes = random_bytes
        self._masks: list = []

    def mask(self, ciphertexts: list, addends: list | None = None) -> list:
        """Step 1: c e(a + 2^b + r) for each c, each with a fresh r; ``addends`` a (default 0)
        are plaintexts the holder adds to x in the same encryption (PPRL: eq. 3's reward term),
        so that x = Dec(c) + a must meet the bound."""
        bits = self.bound_bits + 1 + self.statistical_bits
        width = (bits + 7) // 8
        self._masks = [mpz(int.from_bytes(self._random_bytes(width), "big") >> (8 * width - bits))
                       for _ in ciphertexts]
        addends = addends or [0] * len(ciphertexts)
        shifted = self.encryptor.encrypt(self.public_key, [
            mpz(a) + (mpz(1) << self.bound_bits) + r
            for a, r in zip(addends, self._masks, strict=True)])
        return ops.add(self.public_key, [mpz(c) for c in ciphertexts], shifted)

    def low_bits(self) -> np.ndarray:
        """r mod K of each mask: B's input to the comparison."""
        low = (1 << self.division_bits) - 1
        return np.array([int(r & low) for r in self._masks], dtype=np.uint64)

    def finish(self, quotients: list, owner_borrows: list, borrows: np.ndarray) -> list:
        """Step 5: e(floor(x / K)) from A's e(floor(y / K)) and e(beta_A), and B's beta_B, with
        one encryption: beta = beta_A (1 - 2 beta_B) + beta_B, so
        e(q) = e(floor(y / K)) e(beta_A)^-(1 - 2 beta_B) e(-beta_B - floor(r / K) - 2^(b-k))."""
        public_key, nsquare = self.public_key, self.public_key.nsquare
        k, b = self.division_bits, self.bound_bits
        mine = self.encryptor.encrypt(public_key, [-(int(beta) + (r >> k) + (mpz(1) << (b - k)))
                                                   for beta, r in zip(borrows, self._masks,
                                                                      strict=True)])
        out = []
        for quotient, owner_borrow, beta_b, plain in zip(quotients, owner_borrows, borrows, mine):
            flipped = owner_borrow if int(beta_b) else gmpy2.invert(owner_borrow, nsquare)
            out.append(quotient * flipped % nsquare * plain % nsquare)
        self._masks = []
        return out


class DivisionOwner:
    """A's side: the key, the masked values y it decrypts, its borrow shares."""

    def __init__(self, private_key, division_bits: int, encryptor: Encryptor):
        self.private_key, self.encryptor = private_key, encryptor
        self.division_bits = check_int("division_bits", division_bits, 1)
        self._opened: list = []
        self.decryptions = 0

    def open(self, masked: list) -> None:
        """Step 2: y = x' + r of each masked ciphertext."""
        self._opened = self.private_key.decrypt_raw(masked)
        self.decryptions += len(masked)

    def opened(self) -> list:
        """The masked values y of its last division (its view)."""
        return list(self._opened)

    def low_bits(self) -> np.ndarray:
        """y mod K of each opened value: A's input to the comparison."""
        low = (1 << self.division_bits) - 1
        return np.array([int(y & low) for y in self._opened], dtype=np.uint64)

    def quotients(self, borrows: np.ndarray) -> tuple:
        """Step 4: e(floor(y / K)) and e(beta_A) of each value."""
        k = self.division_bits
        public_key = self.private_key.public_key
        sealed = self.encryptor.encrypt(public_key, [y >> k for y in self._opened] +
                                        [int(v) for v in borrows])
        count = len(sealed) // 2
        return sealed[:count], sealed[count:]


def borrow_shares(ctx, owner_low, holder_low, owner: int = 0, holder: int = 1):
    """Step 3 on the engine: XOR shares of [owner_low < holder_low], the owner's k-bit values
    against the holder's, each a private input of its party (None where not held); returns
    this process's bits per held party (ctx.per_party: {owner: beta_A, holder: beta_B})."""
    count = len(owner_low if owner_low is not None else holder_low)
    a = ctx.share(owner_low, owner=owner, shape=(count,), frac_bits=0)
    b = ctx.share(holder_low, owner=holder, shape=(count,), frac_bits=0)
    with ctx.comm.operation("compare"):
        bits = most_significant_bit(ctx, (a - b).data) & np.uint64(1)
    return ctx.per_party(list(bits))


def divide(owner: DivisionOwner, holder: DivisionHolder, ctx, ciphertexts: list,
           addends: list | None = None) -> list:
    """Steps 1-5 with both roles and a context holding both engine parties in this process
    (the local runtime): the holder's e(floor(x / K)) for each of its ``ciphertexts`` plus its
    plaintext ``addends`` (`DivisionHolder.mask`)."""
    owner.open(holder.mask(ciphertexts, addends))
    beta_a, beta_b = borrow_shares(ctx, owner.low_bits(), holder.low_bits())
    quotients, owner_borrows = owner.quotients(beta_a)
    return holder.finish(quotients, owner_borrows, beta_b)
