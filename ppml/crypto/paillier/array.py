"""`EncryptedArray`: Paillier ciphertexts of reals at one public scale, with scale and bound
bookkeeping, and the vectorised operations of LinUCB-DS step (3) (Ciucanu et al., Fig. 4(a)).

An array holds ciphertexts of integers m, read as the reals m / 2^(k s): s is the run's
`Encoding.scale_bits` and k the *scale exponent* (1 for fresh encryptions; a product with an
encoded plaintext adds the plaintext's exponent).  It also holds a public interval [lo, hi] that
contains every m, computed from declared bounds and shapes only, never from the data, so the
whole object may be sent to another party.  Every operation checks the interval of its result
against the plaintext space (`encoding.check_headroom`) and raises before anything could wrap.

Operations: ``+`` and ``-`` (ciphertexts or plaintexts at the same k), unary ``-``, ``*`` by a
plaintext (elementwise, broadcasting), ``@`` with a plaintext on either side (1-D or 2-D; the
``matmul`` / ``rmatmul`` methods take ``workers``), ``sum``, indexing (e.g. a permutation), and
``rerandomize``.  Plaintext operands are an `encoding.Encoded`, or reals encoded on the fly at
scale exponent 1 for products (the array's own k for sums) within +-``max_abs``.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ppml.crypto.paillier import bulk, ops
from ppml.crypto.paillier.encoding import (Encoded, Encoding, check_headroom, from_residues,
                                           objects, product_bounds, to_residues)


class EncryptedArray:
    """Ciphertexts (object array of gmpy2 mpz) of m / 2^(k s) with public bounds lo <= m <= hi."""

    __array_ufunc__ = None
    """numpy defers ``plain @ x``, ``plain * x``, ``plain + x`` to this class."""

    def __init__(self, public_key, encoding: Encoding, ciphertexts, k: int, lo: int, hi: int,
                 what: str = "the encrypted values"):
        cts = ciphertexts if isinstance(ciphertexts, np.ndarray) else \
            objects(list(ciphertexts), (len(ciphertexts),))
        if any(not 0 < c < public_key.nsquare for c in cts.ravel()):
            raise ValueError(f"ciphertexts must lie in (0, n^2) for this {public_key.bits}-bit key")
        check_headroom(lo, hi, public_key, what)
        self.public_key, self.encoding = public_key, encoding
        self.ciphertexts, self.k, self.lo, self.hi = cts, k, lo, hi

    @classmethod
    def encrypt(cls, values, pool, encoding: Encoding, *, k: int = 1,
                bounds: tuple | None = None) -> "EncryptedArray":
        """Encrypt reals (or integers, exactly) at scale exponent ``k`` with obfuscators from
        ``pool``; ``bounds`` = public (lo, hi), default +-``encoding.max_abs``.  ``values`` may
        also be an `Encoded`, whose own k and bounds are then used."""
        plain = values if isinstance(values, Encoded) else encoding.encode(values, k, bounds)
        public_key = pool.public_key
        check_headroom(plain.lo, plain.hi, public_key, "the encrypted values")  # before take()
        residues = to_residues(plain.ints, public_key.n)
        cts = public_key.encrypt_raw(residues, pool.take(len(residues)))
        return cls(public_key, encoding, objects(cts, plain.shape), plain.k, plain.lo, plain.hi)

    @property
    def shape(self) -> tuple:
        return self.ciphertexts.shape

    @property
    def ndim(self) -> int:
        return self.ciphertexts.ndim

    @property
    def size(self) -> int:
        return self.ciphertexts.size

    def __len__(self) -> int:
        return len(self.ciphertexts)

    def __repr__(self):
        return (f"EncryptedArray(shape={self.shape}, k={self.k}, |m| <= 2^"
                f"{max(-self.lo, self.hi).bit_length()}, {self.public_key.bits}-bit key)")

    def __getitem__(self, index) -> "EncryptedArray":
        return self._derived(np.asarray(self.ciphertexts[index], dtype=object), self.k,
                             self.lo, self.hi, "a selection")

    def _derived(self, cts, k, lo, hi, what) -> "EncryptedArray":
        return EncryptedArray(self.public_key, self.encoding, cts, k, lo, hi, what)

    def _plain(self, other, k: int) -> Encoded:
        return other if isinstance(other, Encoded) else self.encoding.encode(other, k)

    def _check_same_space(self, other: "EncryptedArray") -> None:
        if other.public_key != self.public_key or other.encoding != self.encoding:
            raise ValueError("encrypted arrays under different keys or encodings cannot be "
                             "combined")

    def _check_same_k(self, k: int) -> None:
        if k != self.k:
            raise ValueError(f"cannot add values at scale exponent {k} to values at scale "
                             f"exponent {self.k}: encode the plaintext with k={self.k}")

    # --- sums --------------------------------------------------------------------------------
    def __add__(self, other) -> "EncryptedArray":
        if isinstance(other, EncryptedArray):
            self._check_same_space(other)
            self._check_same_k(other.k)
            a, b = np.broadcast_arrays(self.ciphertexts, other.ciphertexts)
            cts = ops.add(self.public_key, a.ravel(), b.ravel())
        else:
            other = self._plain(other, self.k)
            self._check_same_k(other.k)
            a, b = np.broadcast_arrays(self.ciphertexts, other.ints)
            cts = ops.add_plain(self.public_key, a.ravel(), to_residues(b, self.public_key.n))
        return self._derived(objects(cts, a.shape), self.k, self.lo + other.lo,
                             self.hi + other.hi, "a sum")

    __radd__ = __add__

    def __neg__(self) -> "EncryptedArray":
        cts = ops.negate(self.public_key, self.ciphertexts.ravel())
        return self._derived(objects(cts, self.shape), self.k, -self.hi, -self.lo, "a negation")

    def __sub__(self, other) -> "EncryptedArray":
        if not isinstance(other, EncryptedArray):
            other = self._plain(other, self.k)
            other = Encoded(-other.ints, other.k, -other.hi, -other.lo)
            return self + other
        return self + -other

    def __rsub__(self, other) -> "EncryptedArray":
        return -self + other

    def sum(self, axis: int | None = None) -> "EncryptedArray":
        """Homomorphic sum over ``axis`` (all elements if None)."""
        cts = self.ciphertexts.reshape(-1, 1) if axis is None else \
            np.moveaxis(self.ciphertexts, normalize_axis_index(axis, self.ndim, "axis"), 0)
        count = cts.shape[0]
        rows = cts.reshape(count, -1).T
        out = objects([ops.total(self.public_key, row) for row in rows], cts.shape[1:])
        if axis is None:
            out = out.reshape(())
        return self._derived(out, self.k, count * self.lo, count * self.hi, "a sum")

    # --- products with plaintexts ------------------------------------------------------------
    def __mul__(self, other) -> "EncryptedArray":
        if isinstance(other, EncryptedArray):
            raise TypeError("Paillier cannot multiply two ciphertexts; one factor must be "
                            "plaintext")
        other = self._plain(other, 1)
        a, b = np.broadcast_arrays(self.ciphertexts, other.ints)
        cts = ops.mul_scalars(self.public_key, a.ravel(), b.ravel())
        lo, hi = product_bounds((self.lo, self.hi), (other.lo, other.hi))
        return self._derived(objects(cts, a.shape), self.k + other.k, lo, hi, "a product")

    __rmul__ = __mul__

    def matmul(self, other, workers: int = 1) -> "EncryptedArray":
        """``self @ other`` for a plaintext ``other``, split over ``workers`` Ray tasks."""
        other = self._plain(other, 1)
        enc = self.ciphertexts if self.ndim == 2 else self.ciphertexts[None]
        plain = other.ints.T if other.ints.ndim == 2 else other.ints[None]
        table = self._table(enc, plain, other, workers)
        shape = self.shape[:-1] + other.shape[1:]
        return self._contracted(table.reshape(shape), other, enc.shape[1])

    def rmatmul(self, other, workers: int = 1) -> "EncryptedArray":
        """``other @ self`` for a plaintext ``other``, split over ``workers`` Ray tasks."""
        other = self._plain(other, 1)
        enc = self.ciphertexts.T if self.ndim == 2 else self.ciphertexts[None]
        plain = other.ints if other.ints.ndim == 2 else other.ints[None]
        table = self._table(enc, plain, other, workers).T
        shape = other.shape[:-1] + self.shape[1:]
        return self._contracted(table.reshape(shape), other, enc.shape[1])

    def __matmul__(self, other) -> "EncryptedArray":
        return self.matmul(other)

    def __rmatmul__(self, other) -> "EncryptedArray":
        return self.rmatmul(other)

    def _table(self, enc, plain, other: Encoded, workers: int) -> np.ndarray:
        if not 1 <= self.ndim <= 2 or not 1 <= other.ints.ndim <= 2:
            raise ValueError(f"@ takes 1-D or 2-D operands, got shapes {self.shape} and "
                             f"{other.shape}")
        if enc.shape[1] != plain.shape[1]:
            raise ValueError(f"@: contracted dimensions differ, {enc.shape[1]} (encrypted) and "
                             f"{plain.shape[1]} (plaintext)")
        table = bulk.dot_table(self.public_key, list(enc), list(plain), workers)
        return objects([c for row in table for c in row], (len(enc), len(plain)))

    def _contracted(self, table, other: Encoded, length: int) -> "EncryptedArray":
        lo, hi = product_bounds((self.lo, self.hi), (other.lo, other.hi))
        return self._derived(table, self.k + other.k, length * lo, length * hi, "a dot product")

    # --- fresh randomness and decryption -----------------------------------------------------
    def rerandomize(self, pool) -> "EncryptedArray":
        """The same plaintexts under fresh obfuscators from ``pool`` (before sending results)."""
        cts = self.public_key.rerandomize_raw(self.ciphertexts.ravel(), pool.take(self.size))
        return self._derived(objects(cts, self.shape), self.k, self.lo, self.hi,
                             "the encrypted values")

    def decrypt_integers(self, key) -> np.ndarray:
        """The signed integers m (object array); ``key`` is a `keys.PrivateKey` or a
        `bulk.Decryptor` for this array's public key.  A key for another public key is refused
        (naming both): its decryptions would be unrelated residues, which nothing in a
        ciphertext reveals (`keys.PrivateKey.decrypt_raw`)."""
        theirs = getattr(key, "public_key", None)
        if theirs is None:
            raise TypeError(f"key must be a PrivateKey or a Decryptor, got {type(key).__name__}")
        if theirs != self.public_key:
            raise ValueError(f"this private key is for {theirs!r}, but the array is encrypted "
                             f"under {self.public_key!r}: decrypt with the key of that public "
                             "key")
        residues = key.decrypt_raw(self.ciphertexts.ravel())
        return objects(from_residues(residues, self.public_key.n), self.shape)

    def decrypt(self, key) -> np.ndarray:
        """The reals m / 2^(k s) as float64."""
        return self.encoding.decode(self.decrypt_integers(key), self.k)
