"""Comparisons on arithmetic shares via the sign bit (Hannun et al., appendix A.2).

[x < y] is the most significant bit of x - y, taken from an A2B conversion and turned back into an
arithmetic share of a bit (scale 1) by B2A.  Everything else is derived from it locally.

Integers wider than the ring compare limb by limb (`less_than_limbs`): each limb pair gives its
[<] and [>] from one batch of sign bits, and the limbs combine from the most significant down,
(L, E)_hi o (L, E)_lo = (L_hi ^ E_hi L_lo, E_hi E_lo), in ceil(log2 limbs) AND rounds.
"""

from __future__ import annotations

import numpy as np

from ppml.mpc.protocols.binary import and_
from ppml.mpc.protocols.convert import bits_to_arithmetic, most_significant_bit
from ppml.mpc.ring import BINARY


def is_negative(ctx, x: np.ndarray) -> np.ndarray:
    """Arithmetic shares (scale 1) of [x < 0] for every element of ``x``."""
    return bits_to_arithmetic(ctx, most_significant_bit(ctx, x))


def is_non_negative_bits(ctx, x: np.ndarray) -> np.ndarray:
    """XOR shares of the bits [x >= 0]: the negated sign bit, still in the binary ring."""
    return ctx.add_public(most_significant_bit(ctx, x), np.uint64(1), BINARY)


LIMB_BITS = 62
"""The widest limb `less_than_limbs` takes: the difference of two limbs stays inside
(-2^62, 2^62), so its sign bit in Z/2^64 is the comparison's."""


def less_than_limbs(ctx, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XOR shares (bit 0) of [a < b] for non-negative integers given as arithmetic shares of
    their limbs over the last axis, least significant first, each limb in [0, 2^`LIMB_BITS`).

    One sign-bit batch for all limbs' [a_l < b_l] and [a_l > b_l], then a tree over the limbs:
    a block's (less, equal) is the high block's less, or its equal and the low block's less
    (the two cannot both hold, so XOR is OR), and equal is both equal."""
    limbs = a.shape[-1]
    signs = most_significant_bit(ctx, np.concatenate([a - b, b - a], axis=-1))
    less, greater = signs[..., :limbs], signs[..., limbs:]
    equal = ctx.add_public(less ^ greater, np.uint64(1), BINARY)
    while less.shape[-1] > 1:
        pairs = less.shape[-1] // 2
        low = np.stack([less[..., 0:2 * pairs:2], equal[..., 0:2 * pairs:2]], axis=-2)
        (both,) = and_(ctx, [(equal[..., None, 1:2 * pairs:2], low)])
        top = slice(2 * pairs, None)                   # an odd most significant limb waits
        less = np.concatenate([less[..., 1:2 * pairs:2] ^ both[..., 0, :], less[..., top]], -1)
        equal = np.concatenate([both[..., 1, :], equal[..., top]], axis=-1)
    return less[..., 0]
