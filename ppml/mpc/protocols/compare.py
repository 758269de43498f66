"""Comparisons on arithmetic shares via the sign bit (Hannun et al., appendix A.2).

[x < y] is the most significant bit of x - y, taken from an A2B conversion and turned back into an
arithmetic share of a bit (scale 1) by B2A.  Everything else is derived from it locally.
"""

from __future__ import annotations

import numpy as np

from ppml.mpc.protocols.convert import bits_to_arithmetic, most_significant_bit
from ppml.mpc.ring import BINARY


def is_negative(ctx, x: np.ndarray) -> np.ndarray:
    """Arithmetic shares (scale 1) of [x < 0] for every element of ``x``."""
    return bits_to_arithmetic(ctx, most_significant_bit(ctx, x))


def is_non_negative_bits(ctx, x: np.ndarray) -> np.ndarray:
    """XOR shares of the bits [x >= 0]: the negated sign bit, still in the binary ring."""
    return ctx.add_public(most_significant_bit(ctx, x), np.uint64(1), BINARY)
