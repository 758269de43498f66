"""Conversions between arithmetic and binary sharing (Hannun et al., appendix A.1).

A2B: party p's arithmetic share x_p is already an XOR sharing of the word x_p, with x_p at p and
0 at every other party (a local conversion: nothing is sent and no mask is needed, because p
knows x_p and the others learn nothing from a public 0).  The parties add the P words with the
adder tree of :mod:`ppml.mpc.protocols.binary`, whose Beaver ANDs open only values masked by
fresh triples, so the outputs are uniformly re-randomised XOR shares.  B2A uses daBits, random
bits shared both ways by the dealer: open c = bit XOR b, then [bit] = c + [b] - 2c[b], one round
for any number of bits.
"""

from __future__ import annotations

import numpy as np

from ppml.mpc import dealer
from ppml.mpc.protocols.binary import add_many, sign_of_sum
from ppml.mpc.ring import BINARY, bits_of

BIT_WEIGHTS = np.uint64(1) << np.arange(64, dtype=np.uint64)


def _share_words(ctx, x: np.ndarray) -> list:
    """Party p's arithmetic share as an XOR sharing of the word x_p, for every p."""
    words = []
    for party in range(ctx.parties):
        word = np.zeros_like(x)
        at = ctx.comm.index(party)
        if at is not None:
            word[at] = x[at]
        words.append(word)
    return words


def arithmetic_to_binary(ctx, x: np.ndarray) -> np.ndarray:
    """XOR shares of the ring element whose arithmetic shares are ``x``."""
    return add_many(ctx, _share_words(ctx, x))


def bits_to_arithmetic(ctx, bits: np.ndarray) -> np.ndarray:
    """Arithmetic shares (scale 1) of XOR-shared single bits in {0, 1}, one round."""
    pair = ctx.store.take(dealer.dabit(bits.shape[1:]))
    (c,) = ctx.open([bits ^ pair["b"]], BINARY, tag="b2a")
    c = c[None]
    return ctx.add_public(pair["a"] * (np.uint64(1) - np.uint64(2) * c), c[0])


def binary_to_arithmetic(ctx, words: np.ndarray) -> np.ndarray:
    """Arithmetic shares of XOR-shared 64-bit words: B2A of all 64 bits at once, one round."""
    bits = bits_to_arithmetic(ctx, bits_of(words))
    return np.sum(bits * BIT_WEIGHTS, axis=-1, dtype=np.uint64)


def most_significant_bit(ctx, x: np.ndarray) -> np.ndarray:
    """XOR shares of the sign bit of the arithmetically shared ``x`` (1 where x < 0): the
    shares' top bits and the carry into bit 63 alone (`binary.sign_of_sum`), not the whole
    sum."""
    return sign_of_sum(ctx, _share_words(ctx, x))

