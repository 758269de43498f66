"""Binary circuits on XOR shares of bit-packed uint64 words: AND, prefix carries and adders.

The adder is a Kogge-Stone parallel-prefix adder over whole 64-bit words, so an addition takes
1 + log2(64) = 7 AND rounds whatever the batch size.  Several operands are first reduced to two
by carry-save adders (one AND round per 3 -> 2 layer), the "tree over the parties" that the A2B
conversion of appendix A.1 needs for P > 2.

A sign bit or a comparison needs one carry only, not every prefix: `top_carry` computes it by a
tree over bit planes (bit i of every element packed into words, `planes`), whose level l
combines 64 / 2^l ranges of bits, so the words it opens halve at every level: about 2 bits an
element over its 6 rounds, against 17 words an element for the prefix adder.
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
    words = reduce_to_two(ctx, words)
    return add(ctx, *words) if len(words) == 2 else words[0]


def reduce_to_two(ctx, words: list) -> list:
    """Carry-save layers (one AND round each) down to two XOR-shared words with the same sum
    (one word stays one)."""
    while len(words) > 2:
        groups, rest = words[: len(words) // 3 * 3], words[len(words) // 3 * 3:]
        triples = [groups[i:i + 3] for i in range(0, len(groups), 3)]
        ands = and_(ctx, [pair for a, b, c in triples for pair in ((a, b), (c, a ^ b))])
        words = rest
        for k, (a, b, c) in enumerate(triples):
            words = words + [a ^ b ^ c, (ands[2 * k] ^ ands[2 * k + 1]) << np.uint64(1)]
    return words


_TRANSPOSE_STEPS = tuple((j, np.uint64(m)) for j, m in (
    (32, 0x00000000FFFFFFFF), (16, 0x0000FFFF0000FFFF), (8, 0x00FF00FF00FF00FF),
    (4, 0x0F0F0F0F0F0F0F0F), (2, 0x3333333333333333), (1, 0x5555555555555555)))
"""The six swaps of the 64 x 64 bit-matrix transpose (Hacker's Delight, 7-3): at step j, row
k < k + j (k without bit j) trades its bits [j, 2j) of every 2j-bit field with the bits
[0, j) of row k + j."""


def transpose64(blocks: np.ndarray) -> np.ndarray:
    """The bit-matrix transpose of every block of 64 words (..., 64) uint64: bit c of word r
    becomes bit r of word c."""
    out = blocks.copy()
    lead = out.shape[:-1]
    for j, mask in _TRANSPOSE_STEPS:
        pairs = out.reshape(lead + (64 // (2 * j), 2, j))
        low, high = pairs[..., 0, :], pairs[..., 1, :]
        t = ((low >> np.uint64(j)) ^ high) & mask
        high ^= t
        low ^= t << np.uint64(j)
    return out


#: `planes` moves the bits of at most this many elements with unpackbits and packbits (a few
#: numpy calls), of more with `transpose64` (a sixty-fourth of the memory traffic): measured
#: here, 45 elements (a 10-arm argmax) 15 against 73 us, 1,000 about even, 100,000 25 against
#: 6.8 ms (docs/mpc.md, "Bit planes")
UNPACKED_PLANES_MAX = 1024


def planes(words: np.ndarray) -> np.ndarray:
    """Bit planes of shared words (held, *shape) uint64: (held, 64, ceil(n / 64)) uint64 whose
    plane i holds bit i of the n elements, element e at bit e % 64 of word e // 64 (zeros
    past n).  Local: XOR sharing commutes with moving bits."""
    held = words.shape[0]
    flat = np.ascontiguousarray(words.reshape(held, -1))
    n = flat.shape[1]
    width = -(-n // 64) * 64
    if n <= UNPACKED_PLANES_MAX:  # bit i of a word is bit i % 8 of its little-endian byte i // 8
        bits = np.zeros((held, 64, width), dtype=np.uint8)
        little = flat.astype("<u8", copy=False).view(np.uint8).reshape(held, n, 8)
        bits[:, :, :n] = np.unpackbits(little, axis=-1, bitorder="little").transpose(0, 2, 1)
        packed = np.packbits(bits, axis=-1, bitorder="little").view("<u8")
        return packed.astype(np.uint64, copy=False)
    padded = np.zeros((held, width), dtype=np.uint64)
    padded[:, :n] = flat
    blocks = transpose64(padded.reshape(held, -1, 64))
    return np.ascontiguousarray(blocks.transpose(0, 2, 1))


def plane_bits(plane: np.ndarray, shape: tuple) -> np.ndarray:
    """The elements' bits of one shared plane (held, words): (held, *shape) uint64 in {0, 1}."""
    bits = np.unpackbits(plane.view(np.uint8), axis=-1, bitorder="little")
    n = int(np.prod(shape, dtype=np.int64))
    return bits[:, :n].astype(np.uint64).reshape((plane.shape[0],) + tuple(shape))


def top_carry(ctx, g: np.ndarray, p: np.ndarray, bits: int = 64) -> np.ndarray:
    """XOR shares (bit 0) of the carry out of bit ``bits`` - 1 of the sum whose generate and
    propagate words are ``g`` and ``p`` (held, *shape): a tree over the bit planes of bits
    [0, bits), ceil(log2(bits)) AND rounds.  A range of bits generates a carry when its high
    half does, or propagates one its low half generates: G = G_hi ^ (P_hi & G_lo) (XOR for OR:
    the terms never overlap), P = P_hi & P_lo, which the last level does not need."""
    shape = g.shape[1:]
    gs, ps = planes(g)[:, :bits], planes(p)[:, :bits]
    while gs.shape[1] > 1:
        pairs = gs.shape[1] // 2
        lo, hi, top = slice(0, 2 * pairs, 2), slice(1, 2 * pairs, 2), slice(2 * pairs, None)
        if gs.shape[1] == 2:
            (t,) = and_(ctx, [(ps[:, hi], gs[:, lo])])
            gs = gs[:, hi] ^ t
            break
        (both,) = and_(ctx, [(ps[:, hi][:, None], np.stack([gs[:, lo], ps[:, lo]], axis=1))])
        gs = np.concatenate([gs[:, hi] ^ both[:, 0], gs[:, top]], axis=1)
        ps = np.concatenate([both[:, 1], ps[:, top]], axis=1)
    return plane_bits(gs[:, 0], shape)


def sign_of_sum(ctx, words: list) -> np.ndarray:
    """XOR shares (bit 0) of the most significant bit of the sum of XOR-shared ``words``:
    carry-save down to two, their top bits XOR the carry into bit 63 (`top_carry` over bits
    0-62)."""
    words = reduce_to_two(ctx, words)
    if len(words) == 1:
        return words[0] >> np.uint64(63)
    a, b = words
    (g,) = and_(ctx, [(a, b)])
    p = a ^ b
    return (p >> np.uint64(63)) ^ top_carry(ctx, g, p, 63)
