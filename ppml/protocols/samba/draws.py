"""Samba's random draws read from CSPRNG streams in blocks (Ciucanu et al., Figs. 4-6).

Every draw of a run comes from a `ppml.crypto.rng.Stream` (AES-CTR).  Reading a stream one
draw at a time costs a numpy round trip per draw; these readers pull a block at once and hand out
Python values.  Each draw takes a fixed number of stream words, in stream order, so the values
do not depend on the block size: a participant and the plaintext reference that read the same
stream through the same reader get the same draws (Theorem 2's "same seeds").

* `Words`: 64-bit words, uniforms (53 bits), as the masks of seed_alpha and the draws x of
  seed_eps and u (Comp's probability matching);
* `Permutations`: sigma_t (the Controller), n words per permutation, each with its inverse;
* `BetaDraws`: Thompson's theta_i ~ Beta(a, b) from DO_i's own stream (Marsaglia-Tsang).

A reader is checkpointed as its `state` (its stream's key, and where in the stream its next
draw starts: the words it read ahead are not counted); `resumed` goes on with the very draws
the reader would have drawn next.
"""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np

from ppml.checks import check_int
from ppml.crypto.rng import Stream

BLOCK_WORDS = 4096
"""Words read from a stream at once (32 KiB)."""


class _Reader:
    """A reader of one stream that draws a fixed number of its bytes per draw, in order: a
    checkpoint keeps it as (key, position), whatever it has read ahead."""

    _stream: Stream

    def _unread(self) -> int:
        """Bytes read from the stream ahead of the next draw."""
        raise NotImplementedError

    def state(self) -> tuple:
        """(the stream's key, the position of the next draw's first byte)."""
        return self._stream.key, self._stream.position - self._unread()

    @classmethod
    def resumed(cls, state: tuple, *args):
        """The reader that goes on from ``state`` (as `state` gave it) with the same draws."""
        key, position = state
        return cls(Stream(key, position), *args)


class Words(_Reader):
    """Uniform elements of Z/2^64 from ``stream``, ``block_words`` at a time (a block costs
    about 44 bytes a word as Python ints: 176 KiB at `BLOCK_WORDS`).  ``word()`` is the next
    word (a C-level iterator step, no Python frame: hot loops call it per DO and step)."""

    def __init__(self, stream: Stream, block_words: int = BLOCK_WORDS):
        self._stream, self._block = stream, iter(())
        self._block_words = check_int("block_words", block_words, 1)
        self.word = itertools.chain.from_iterable(self._blocks()).__next__

    def _blocks(self):
        while True:
            self._block = iter(self._stream.uint64(self._block_words).tolist())
            yield self._block

    def _unread(self) -> int:
        return 8 * operator.length_hint(self._block)

    def uniform(self) -> float:
        """Uniform in [0, 1) with 53 random bits (one word)."""
        return uniform(self.word)


def uniform(word) -> float:
    """Uniform in [0, 1) with 53 random bits from one call of ``word`` (a `Words.word`)."""
    return (word() >> 11) * 2.0**-53


class Permutations(_Reader):
    """Uniform permutations of range(n) (`Stream.permutation`, n words each), drawn in blocks;
    `next` gives (sigma, inverse) as lists, inverse[sigma[j]] = j."""

    def __init__(self, stream: Stream, n: int):
        self._stream, self._n = stream, n
        self._batch = max(1, BLOCK_WORDS // n)
        self._sigmas: list = []
        self._inverses: list = []
        self._at = 0

    def _unread(self) -> int:
        return 8 * self._n * (len(self._sigmas) - self._at)

    def next(self) -> tuple[list, list]:
        if self._at == len(self._sigmas):
            sigmas = self._stream.permutation(self._n, batch=(self._batch,))
            self._sigmas = sigmas.tolist()
            self._inverses = np.argsort(sigmas, axis=1).tolist()
            self._at = 0
        self._at += 1
        return self._sigmas[self._at - 1], self._inverses[self._at - 1]


class BetaDraws(_Reader):
    """Beta(a, b) = X / (X + Y), X ~ Gamma(a), Y ~ Gamma(b), for a, b >= 1, from one stream.

    Gamma(shape) is Marsaglia & Tsang's rejection sampler (2000).  Each attempt takes three
    words: two for a Box-Muller normal, one for the acceptance uniform.  The normals and the
    logarithms of the uniforms of ``BLOCK_WORDS / 3`` attempts are computed at once with numpy;
    only the acceptance test runs per attempt.
    """

    def __init__(self, stream: Stream):
        self._stream = stream
        self._normals: list = []
        self._log_uniforms: list = []
        self._at = 0

    def _unread(self) -> int:
        return 24 * (len(self._normals) - self._at)          # three words per attempt

    def _refill(self) -> None:
        open_uniforms = self._stream.uniform((BLOCK_WORDS // 3, 3)) + 2.0**-54   # in (0, 1)
        self._normals = (np.sqrt(-2.0 * np.log(open_uniforms[:, 0]))
                         * np.cos(2.0 * np.pi * open_uniforms[:, 1])).tolist()
        self._log_uniforms = np.log(open_uniforms[:, 2]).tolist()
        self._at = 0

    def gamma(self, shape: float) -> float:
        """Gamma(shape, 1), shape >= 1."""
        d = shape - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * d)
        while True:
            if self._at == len(self._normals):
                self._refill()
            x, log_u = self._normals[self._at], self._log_uniforms[self._at]
            self._at += 1
            v = 1.0 + c * x
            if v > 0.0:
                v = v * v * v
                if log_u < 0.5 * x * x + d - d * v + d * math.log(v):
                    return d * v

    def beta(self, a: float, b: float) -> float:
        x = self.gamma(a)
        return x / (x + self.gamma(b))
