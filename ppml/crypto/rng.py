"""Cryptographically secure random streams for shares, masks, permutations and keys.

A :class:`Stream` is AES-256 in counter mode (from ``cryptography``, AES-NI backed) keyed by a
32-byte key; its keystream is read as numpy arrays.  Keys come either from ``os.urandom``
(the default, secure) or, in the explicitly **insecure** seeded mode, are derived from a public
integer seed so that experiments are reproducible.  Sub-keys are derived with keyed BLAKE2b
over a label, so that every party, every pair of parties (pairwise-shared seeds, PRSS) and every
dealer batch gets its own independent stream.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ppml.checks import check_int, check_shape

KEY_BYTES = 32
_log = logging.getLogger(__name__)


def derive_key(key: bytes, *label) -> bytes:
    """Derive an independent 32-byte sub-key from ``key`` (bytes, at most 64: BLAKE2b's key) and
    a label (keyed BLAKE2b)."""
    if not isinstance(key, bytes) or len(key) > 64:
        raise ValueError(f"key must be at most 64 bytes, got "
                         f"{len(key) if isinstance(key, bytes) else type(key).__name__}")
    text = "/".join(str(part) for part in label).encode()
    return hashlib.blake2b(text, key=key, digest_size=KEY_BYTES).digest()


def fresh_key() -> bytes:
    """A new uniformly random key from the operating system's CSPRNG."""
    return os.urandom(KEY_BYTES)


def seeded_key(seed: int, *label) -> bytes:
    """An INSECURE key derived from a public integer seed, for reproducible experiments only."""
    seed = check_int("seed", seed, 0, why="or None for fresh keys", what="an integer")
    root = hashlib.sha256(f"ppml-insecure-seed:{seed}".encode()).digest()
    return derive_key(root, *label) if label else root


def warn_insecure(seed: int) -> None:
    """Log the plain warning that a seeded run is not secure."""
    _log.warning("INSECURE: seeded reproducible mode (seed=%d); shares, masks, permutations and "
                 "keys are predictable from the seed. Use seed=None for a secure run.", seed)


class Stream:
    """An AES-256-CTR keystream read as numpy arrays; same key, same sequence of draws.

    ``position`` counts the bytes read so far; ``Stream(key, position)`` starts there (counter
    mode seeks: the block counter starts at position // 16), so a checkpoint keeps a stream as
    its position alone.
    """

    def __init__(self, key: bytes, position: int = 0):
        if not isinstance(key, bytes) or len(key) != KEY_BYTES:
            raise ValueError(f"stream key must be {KEY_BYTES} bytes, got "
                             f"{len(key) if isinstance(key, bytes) else type(key).__name__}")
        self.key = key
        self.position = check_int("position", position, 0, what="a byte count")
        block, skip = divmod(self.position, 16)
        counter = block.to_bytes(16, "big")
        self._encryptor = Cipher(algorithms.AES(key), modes.CTR(counter)).encryptor()
        if skip:
            self._encryptor.update(bytes(skip))

    def child(self, *label) -> "Stream":
        """An independent stream keyed by this stream's key and ``label``."""
        return Stream(derive_key(self.key, *label))

    def bytes(self, n: int) -> bytes:
        """The next ``n`` >= 0 bytes of the keystream."""
        if type(n) is not int or n < 0:  # the common case costs one type test
            n = check_int("n", n, 0, what="a number of bytes")
        self.position += n
        return self._encryptor.update(bytes(n))

    def uint64(self, shape=()) -> np.ndarray:
        """Uniform elements of Z/2^64 in an array of ``shape`` (an integer or a tuple)."""
        shape = check_shape("shape", shape)
        words = np.frombuffer(self.bytes(8 * math.prod(shape)), dtype=np.uint64)
        return words.reshape(shape).copy()

    def bits(self, shape=()) -> np.ndarray:
        """Uniform bits in {0, 1} as uint64."""
        return self.uint64(shape) >> np.uint64(63)

    def below(self, bound_bits: int, shape=()) -> np.ndarray:
        """Uniform integers in [0, 2^bound_bits) as uint64, ``bound_bits`` in [0, 64]."""
        bound_bits = check_int("bound_bits", bound_bits, 0, 64, what="an integer")
        return self.uint64(shape) >> np.uint64(64 - bound_bits) if bound_bits else \
            np.zeros(shape, dtype=np.uint64)

    def uniform(self, shape=()) -> np.ndarray:
        """Uniform float64 reals in [0, 1) with 53 random bits each."""
        return (self.uint64(shape) >> np.uint64(11)).astype(np.float64) * 2.0**-53

    def permutation(self, n: int, batch=()) -> np.ndarray:
        """Uniform random permutations of range(n) (int64), one per leading ``batch`` index.

        Sorting n independent uniform 64-bit keys gives a uniform permutation up to key
        collisions, whose probability is below n^2 / 2^65.
        """
        keys = self.uint64(check_shape("batch", batch) + (check_int("n", n, 0),))
        return np.argsort(keys, axis=-1, kind="stable").astype(np.int64)


class UniformIntegers:
    """Uniform Python integers below any bound from a `Stream`, read as 64-bit words a few
    KiB at a time (the exact samplers of `ppml.privacy.discrete` ask for many small ones, so
    the cost per integer is what matters)."""

    WORDS = 1024

    def __init__(self, stream: Stream):
        self.stream, self._words = stream, []

    def _refill(self) -> list:
        self._words = np.frombuffer(self.stream.bytes(8 * self.WORDS), np.uint64).tolist() \
            + self._words
        return self._words

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), n >= 1: the next ceil(bits / 64) words masked to the
        bits of n - 1, tried again when not below n (each try succeeds with probability above
        1/2); n = 1 takes no randomness."""
        if type(n) is not int:           # the common case costs one type test
            n = check_int("n", n, 1)
        if n <= 1:
            if n < 1:
                raise ValueError(f"below needs n >= 1, got {n}")
            return 0
        bits = (n - 1).bit_length()
        mask, words = (1 << bits) - 1, self._words
        if bits <= 64:
            while True:
                if not words:
                    words = self._refill()
                value = words.pop() & mask
                if value < n:
                    return value
        count = (bits + 63) // 64
        while True:
            if len(words) < count:
                words = self._refill()
            value = 0
            for _ in range(count):
                value = (value << 64) | words.pop()
            value &= mask
            if value < n:
                return value
