"""Private division of encrypted values by a public K = 2^k, exact (Sakuma et al., section 3.2,
"private division of encrypted values"; step 4(b) of Fig. 2 and 4(c) of Fig. 3).

The holder B has c = e_A(x) under the owner A's key, |x| < 2^b (``bound_bits``); afterwards B
has e_A(floor(x / K)) and neither learns x.  The paper runs the division of random shares by
SFE; here it is done in Z_N with one k-bit comparison on the secret-sharing engine:

1. B shifts and masks (`masking`): A gets c' = e(x + o), o = 2^b + r its offset, r uniform in
   [0, 2^(b+1+kappa)) from B's CSPRNG.
2. A decrypts y = x + o, an integer below 2^(b+2+kappa) < N, so nothing wraps.
3. A and B compare their low bits on the engine (`comparison`): beta = [y mod K < o mod K],
   which only the engine's parties see, as XOR shares beta_A, beta_B (`borrow_shares`).
4. A sends e(floor(y / K)) and e(beta_A).
5. B: with beta = beta_A (1 - 2 beta_B) + beta_B (the XOR),
   e(q) = e(floor(y / K)) e(beta_A)^-(1 - 2 beta_B) e(-beta_B - floor(o / K)).

Encryptions per value: B two (the mask, which can carry a plaintext addend of the holder's, and
the last factor), A two; A one decryption.

Correctness: x = y - o, so floor(x / K) = floor(y / K) - floor(o / K) - [y mod K < o mod K]
(the borrow of the low k bits).  The result is the floor of x / K for negative x too, which is
what the fixed-point reference computes (`learners.FixedPointQ`).

What each learns: A sees y, which hides x within statistical distance 2^-kappa (`masking`;
``statistical_bits`` = kappa, 40 by default), and its view of the comparison (masked
openings).  B sees ciphertexts under A's key and its view of the
comparison.  Neither sees beta: it stays XOR-shared until it is under A's key.
"""

from __future__ import annotations

import os
import time

import gmpy2
from gmpy2 import mpz

from ppml.checks import check_int
from ppml.crypto.paillier import ObfuscatorPool, ops
from ppml.crypto.paillier.packing import unpack
from ppml.protocols.pprl.comparison import less_than
from ppml.protocols.pprl.masking import STATISTICAL_BITS, check_room, mask


class Encryptor:
    """One agent's Paillier encryptions: a pool of obfuscators per public key it encrypts under
    (`ObfuscatorPool`, of kind ``obfuscator``: ``full`` r^n or ``djn``), its own secrets, filled
    ahead of use by `prepare` (the offline phase) or ``batch`` at a time when they run out;
    with ``workers`` > 1, by Ray tasks on this node that run while the steps do."""

    def __init__(self, obfuscator: str = "full", batch: int = 64, workers: int = 1):
        self.obfuscator, self.batch, self.workers = obfuscator, batch, workers
        self._pools: dict = {}
        self.encryptions = 0
        self.seconds = 0.0
        """Time spent encrypting online (taking pooled obfuscators and multiplying)."""

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
        began = time.perf_counter()
        self.encryptions += len(values)
        n = public_key.n
        out = public_key.encrypt_raw([mpz(v) % n for v in values],
                                     self._pool(public_key).take(len(values)))
        self.seconds += time.perf_counter() - began
        return out

    def rerandomize(self, public_key, ciphertexts: list) -> list:
        """The same plaintexts under fresh randomness: each times a fresh e(0)."""
        return ops.add(public_key, ciphertexts, self.encrypt(public_key, [0] * len(ciphertexts)))


class DivisionHolder:
    """B's side: the ciphertexts under A's key, the offsets o it masks them with, its borrow
    shares."""

    def __init__(self, public_key, bound_bits: int, division_bits: int, encryptor: Encryptor,
                 statistical_bits: int = STATISTICAL_BITS, random_bytes=os.urandom):
        self.public_key, self.encryptor = public_key, encryptor
        check_room(public_key, bound_bits, statistical_bits)
        self.bound_bits, self.statistical_bits = bound_bits, statistical_bits
        self.division_bits = check_int("division_bits", division_bits, 1, bound_bits)
        self._random_bytes = random_bytes
        self._offsets: list = []

    def mask(self, ciphertexts: list, addends: list | None = None) -> list:
        """Step 1: c e(a + o) for each c (`masking.mask`); ``addends`` a (default 0) are
        plaintexts the holder adds to x in the same encryption (PPRL: eq. 3's reward term), so
        that x = Dec(c) + a must meet the bound."""
        masked, self._offsets = mask(self.encryptor, self.public_key, ciphertexts,
                                     self.bound_bits, self.statistical_bits, addends,
                                     self._random_bytes)
        return masked

    def low_bits(self) -> list:
        """o mod K of each offset: B's input to the comparison."""
        low = (1 << self.division_bits) - 1
        return [o & low for o in self._offsets]

    def finish(self, quotients: list, owner_borrows: list, borrows) -> list:
        """Step 5: e(floor(x / K)) from A's e(floor(y / K)) and e(beta_A), and B's beta_B, with
        one encryption: beta = beta_A (1 - 2 beta_B) + beta_B, so
        e(q) = e(floor(y / K)) e(beta_A)^-(1 - 2 beta_B) e(-beta_B - floor(o / K))."""
        public_key, nsquare = self.public_key, self.public_key.nsquare
        k = self.division_bits
        mine = self.encryptor.encrypt(public_key, [-(int(beta) + (o >> k))
                                                   for beta, o in zip(borrows, self._offsets,
                                                                      strict=True)])
        out = []
        for quotient, owner_borrow, beta_b, plain in zip(quotients, owner_borrows, borrows, mine):
            flipped = owner_borrow if int(beta_b) else gmpy2.invert(owner_borrow, nsquare)
            out.append(quotient * flipped % nsquare * plain % nsquare)
        self._offsets = []
        return out


class DivisionOwner:
    """A's side: its decryption, the masked values y it decrypts (for divisions and for greedy
    selection's comparisons, `greedy`), its borrow shares.  ``decryptor`` has ``public_key``
    and ``decrypt_raw``: A's private key (partitioned by time), or its joint decryption with the
    other agents' decryption shares under a threshold key (`observation.JointDecryption`)."""

    def __init__(self, decryptor, division_bits: int, encryptor: Encryptor):
        self.decryptor, self.encryptor = decryptor, encryptor
        self.division_bits = check_int("division_bits", division_bits, 1)
        self._opened: list = []
        self.decryptions = 0
        self.decrypt_seconds = 0.0

    def open(self, masked: list, slot_bits: int | None = None, slots: int = 1,
             count: int | None = None) -> None:
        """Step 2: y = x + o of each masked ciphertext, or with ``slot_bits``, of the first
        ``count`` slots of packed ones (`packing.pack_ciphertexts`)."""
        began = time.perf_counter()
        self._opened = self.decryptor.decrypt_raw(masked)
        self.decrypt_seconds += time.perf_counter() - began
        self.decryptions += len(masked)
        if slot_bits is not None:
            self._opened = unpack(self._opened, slot_bits, slots, count)

    def opened(self) -> list:
        """The masked values y of its last division (its view)."""
        return list(self._opened)

    def low_bits(self) -> list:
        """y mod K of each opened value: A's input to the comparison."""
        low = (1 << self.division_bits) - 1
        return [y & low for y in self._opened]

    def quotients(self, borrows) -> tuple:
        """Step 4: e(floor(y / K)) and e(beta_A) of each value."""
        k = self.division_bits
        public_key = self.decryptor.public_key
        sealed = self.encryptor.encrypt(public_key, [y >> k for y in self._opened] +
                                        [int(v) for v in borrows])
        count = len(sealed) // 2
        return sealed[:count], sealed[count:]


OWNER, HOLDER = 0, 1
"""The engine ranks of A and B in a division or a greedy selection (`greedy`)."""


def borrow_program(ctx, inputs: dict) -> dict:
    """Step 3, the program of both engine parties (`ppml.runtime.seat`): ``inputs`` = {OWNER:
    (y mod K of each value, k), HOLDER: (o mod K of each, k)} for the parties held here;
    returns {party: its XOR shares of [y mod K < o mod K]} (beta_A, beta_B)."""
    bits = inputs[ctx.held[0]][1]
    mine = {p: inputs[p][0] for p in ctx.held}
    data = less_than(ctx, mine.get(OWNER), mine.get(HOLDER), bits, OWNER, HOLDER)
    return {p: data[i] for i, p in enumerate(ctx.held)}


def divide(owner: DivisionOwner, holder: DivisionHolder, ctx, ciphertexts: list,
           addends: list | None = None) -> list:
    """Steps 1-5 with both sides and a context holding both engine parties in this process
    (what the protocols run with each side in its own agent, `roles.EngineSeats.divide` and
    the holders': here for the tests): the holder's e(floor(x / K)) for each of its
    ``ciphertexts`` plus its plaintext ``addends`` (`DivisionHolder.mask`)."""
    owner.open(holder.mask(ciphertexts, addends))
    k = holder.division_bits
    borrows = borrow_program(ctx, {OWNER: (owner.low_bits(), k), HOLDER: (holder.low_bits(), k)})
    quotients, owner_borrows = owner.quotients(borrows[OWNER])
    return holder.finish(quotients, owner_borrows, borrows[HOLDER])
