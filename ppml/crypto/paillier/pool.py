"""The offline obfuscator pool: precomputed r^n mod n^2, each handed out once.

Encryption costs one exponentiation r^n mod n^2 (a full-size exponent; about 11 ms at 2048 bits)
and one multiplication.  The exponentiation does not depend on the message, so it is done
offline, in batches (as Ray tasks pinned to this node when ``workers > 1``); online,
Enc(m) = (1 + m n) r^n and re-randomisation c r^n are one multiplication each.  This is what makes
the encryptions of LinUCB-DS (Ciucanu et al., Fig. 5: d + 1 at initialisation, one per round, and
the encrypted exploration terms E(omega ||x_i||) of step (3).ii) cheap online.

r is uniform in Z_n^* from the OS CSPRNG (``secrets``), drawn in whichever process computes the
batch.  A value leaves the pool exactly once (`ObfuscatorPool.take`); a pool that runs dry refills
or raises (``on_empty``), and a pool cannot be pickled or copied, since a copy would hand out the
same r^n twice.  Obfuscators are secrets of the encrypting party: whoever knows the r^n of a
ciphertext can strip it and read the message.
"""

from __future__ import annotations

import secrets

import gmpy2

from ppml.crypto.paillier.bulk import check_workers, run_batches, split

ON_EMPTY = ("refill", "raise")


class PoolExhaustedError(RuntimeError):
    """An obfuscator pool with ``on_empty="raise"`` had fewer values than requested."""


def fresh_obfuscators(public_key, count: int) -> list:
    """``count`` values r^n mod n^2 for fresh uniform r in Z_n^* from the OS CSPRNG."""
    n, nsquare = public_key.n, public_key.nsquare
    out = []
    while len(out) < count:
        r = gmpy2.mpz(secrets.randbelow(int(n) - 1) + 1)
        if gmpy2.gcd(r, n) == 1:
            out.append(gmpy2.powmod(r, n, nsquare))
    return out


class ObfuscatorPool:
    """``size`` precomputed obfuscators for ``public_key``, computed when the pool is made.

    ``on_empty="refill"`` (default) computes the shortfall plus a fresh ``size`` when a request
    exceeds what is left (counted in ``refills``); ``"raise"`` raises `PoolExhaustedError`.
    """

    def __init__(self, public_key, size: int = 1024, *, on_empty: str = "refill",
                 workers: int = 1):
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"size must be an integer >= 0, got {size!r}")
        if on_empty not in ON_EMPTY:
            raise ValueError(f"on_empty must be one of {ON_EMPTY}, got {on_empty!r}")
        self.public_key = public_key
        self.size = size
        self.on_empty = on_empty
        self.workers = check_workers(workers)
        self.refills = 0
        self._values: list = []
        self.fill(size)

    def fill(self, count: int) -> None:
        """Precompute ``count`` more obfuscators (offline), in ``workers`` batches."""
        batches = [(self.public_key, len(chunk)) for chunk in split(range(count), self.workers)]
        for batch in run_batches(fresh_obfuscators, batches, self.workers):
            self._values.extend(batch)

    def take(self, count: int) -> list:
        """Remove and return ``count`` obfuscators, each never handed out again."""
        if count > len(self._values):
            if self.on_empty == "raise":
                raise PoolExhaustedError(
                    f"obfuscator pool has {len(self._values)} precomputed r^n left but {count} are "
                    f"needed (size={self.size}); fill() it offline or use on_empty='refill'")
            self.refills += 1
            self.fill(count - len(self._values) + self.size)
        start = len(self._values) - count
        out = self._values[start:]
        del self._values[start:]
        return out

    def __len__(self) -> int:
        return len(self._values)

    def __reduce__(self):
        raise TypeError("an ObfuscatorPool cannot be pickled or copied: a copy would hand out the "
                        "same r^n twice")
