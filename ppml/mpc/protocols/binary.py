"""Binary circuits on XOR shares of bit-packed uint64 words: AND, prefix carries and adders.

The adder is a Kogge-Stone parallel-prefix adder over whole 64-bit words, so an addition takes
1 + log2(64) = 7 AND rounds whatever the batch size.  Several operands are first reduced to two
by carry-save adders (one AND round per 3 -> 2 layer), the "tree over the parties" that the A2B
conversion of appendix A.1 needs for P > 2.
"""

from __future__ import annotations

import numpy as np

from ppml.mpc.protocols.multiply import beaver
from ppml.mpc.ring import BINARY

SHIFTS = tuple(np.uint64(1 << k) for k in range(6))  # 1, 2, 4, ..., 32


def and_(ctx, pairs: list) -> list:
    """AND of XOR-shared words for every (x, y) in ``pairs``, in one round."""
    return beaver(ctx, pairs, BINARY)


def prefix_carries(ctx, g: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Kogge-Stone prefix: bit i of the result is the carry out of bit i (6 rounds).

    ``g`` and ``p`` are the shared generate and propagate words; the (g, p) combination
    g' = g ^ (p & g<<s), p' = p & p<<s uses XOR for OR because the two terms never overlap.
    """
    for shift in SHIFTS:
        if shift == SHIFTS[-1]:
            (t,) = and_(ctx, [(p, g << shift)])
        else:  # p & (g<<s, p<<s) as one broadcast AND: p is masked and opened once
            pair = np.concatenate([g[:, None], p[:, None]], axis=1) << shift
            (both,) = and_(ctx, [(p[:, None], pair)])
            t, p = both[:, 0], both[:, 1]
        g = g ^ t
    return g


def add(ctx, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The XOR-shared sum a + b mod 2^64 of two XOR-shared words (7 rounds)."""
    (g,) = and_(ctx, [(a, b)])
    p = a ^ b
    return p ^ (prefix_carries(ctx, g, p) << np.uint64(1))


def add_many(ctx, words: list) -> np.ndarray:
    """Sum of several XOR-shared words: carry-save layers down to two, then one adder."""
    while len(words) > 2:
        groups, rest = words[: len(words) // 3 * 3], words[len(words) // 3 * 3:]
        triples = [groups[i:i + 3] for i in range(0, len(groups), 3)]
        ands = and_(ctx, [pair for a, b, c in triples for pair in ((a, b), (c, a ^ b))])
        words = rest
        for k, (a, b, c) in enumerate(triples):
            words = words + [a ^ b ^ c, (ands[2 * k] ^ ands[2 * k + 1]) << np.uint64(1)]
    return add(ctx, *words) if len(words) == 2 else words[0]
