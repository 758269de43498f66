"""Exact floor division of two parties' Z/2^64 shares by K = 2^k, for PPRL's shares backend
(eq. 4's floor, which `learners.FixedPointQ` computes; the engine's own truncation rounds and
is off by one unit now and then, which would break the equality with the reference)."""

from __future__ import annotations

import numpy as np

from ppml.checks import check_int
from ppml.mpc.protocols.convert import bits_to_arithmetic
from ppml.protocols.pprl.comparison import less_than
from ppml.protocols.pprl.config import PPRLOptions

RING_BITS = 62
"""|x| must stay below 2^62: the division shifts x by 2^62 into [0, 2^63)."""


def check_ring(k_delta_bits: int, options: PPRLOptions) -> None:
    """Refuse a fixed point whose K dQ (``k_delta_bits`` with its sign, `bounds.bounds`) the
    ring cannot carry, naming ``pprl.scale_bits`` and ``pprl.division_bits``."""
    if k_delta_bits - 1 > RING_BITS:
        raise ValueError(f"pprl.backend=shares keeps K dQ in Z/2^64 and needs |K dQ| < 2^"
                         f"{RING_BITS}; at pprl.scale_bits={options.scale_bits} and "
                         f"pprl.division_bits={options.division_bits} it takes "
                         f"{k_delta_bits - 1} bits: lower pprl.scale_bits by at least "
                         f"{k_delta_bits - 1 - RING_BITS}")


def floor_divide(ctx, x: np.ndarray, bits: int) -> np.ndarray:
    """Shares of floor(x / 2^bits), exactly, for two parties' shares ``x`` of -2^62 <= x < 2^62.

    With x' = x + 2^62 in [0, 2^63) and party shares u + v = x' + w 2^64 (u, v in [0, 2^64)):
    floor(x' / K) = floor(u / K) + floor(v / K) + c - w 2^(64 - k), where the wrap
    w = [u >= 2^64 - v] and the carry c = [u mod K >= K - v mod K] are private comparisons of
    party 0's integers against party 1's (`comparison.less_than`, 65 bits: each party's input
    is derived from its own share alone, and the results stay XOR-shared); then
    floor(x / K) = floor(x' / K) - 2^(62 - k).  Each process computes its own parties' part
    (an engine holding both, or one seat each)."""
    check_int("bits", bits, 1, RING_BITS)
    k = np.uint64(bits)
    shifted = ctx.add_public(x, np.uint64(1 << 62))
    own = dict(zip(ctx.held, shifted))                     # this process's parties' shares
    low = np.uint64((1 << bits) - 1)
    u, v = own.get(0), own.get(1)
    mine = None if u is None else [int(a) for a in u] + [int(a & low) for a in u]
    theirs = None if v is None else [(1 << 64) - int(b) for b in v] + \
        [(1 << bits) - int(b & low) for b in v]
    less = less_than(ctx, mine, theirs, 65)                # [u < 2^64 - v], [u mod K < ...]
    both = bits_to_arithmetic(ctx, less & np.uint64(1))
    count = x.shape[-1]
    wrap, carry = np.uint64(1) - both[:, :count], np.uint64(1) - both[:, count:]
    others = [i for i, party in enumerate(ctx.held) if party != 0]
    wrap[others] -= np.uint64(1)                           # 1 - bit: the public 1 at party 0
    carry[others] -= np.uint64(1)
    quotient = (shifted >> k) + carry - wrap * np.uint64(1 << (64 - bits))
    return ctx.add_public(quotient, np.uint64((1 << 64) - (1 << (62 - bits))))
