"""Exact floor division of Z/2^64 shares by K = 2^k, for PPRL's shares backend
(eq. 4's floor, which `learners.FixedPointQ` computes; the engine's own truncation rounds and
is off by one unit now and then, which would break the equality with the reference)."""

from __future__ import annotations

import numpy as np

from ppml.checks import check_int
from ppml.mpc.protocols.truncate import wrap_count
from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ
from ppml.protocols.pprl.reference import learner

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


def fixed_point(options: PPRLOptions, reward_bound: float) -> FixedPointQ:
    """The shares backend's update rules in ``options``' fixed point, after `check_ring` (and
    `bounds`) found that the ring carries them for rewards up to ``reward_bound``; the run
    checks this before it starts anything (`ppml.experiments.pprl.check_inputs`)."""
    rules = learner(options, 1, 1, fixed=True)
    check_ring(bounds(rules, options, reward_bound)[1], options)
    return rules


def floor_divide(ctx, x: np.ndarray, bits: int) -> np.ndarray:
    """Shares of floor(x / 2^bits), exactly, for shares ``x`` of -2^62 <= x < 2^62 among any
    number of parties.

    With x' = x + 2^62 in [0, 2^63) and the parties' shares x_p read in [0, 2^64),
    sum_p x_p = x' + w 2^64, and with K = 2^k
        floor(x' / K) = sum_p floor(x_p / K) + c - w 2^(64 - k),  c = floor(sum_p (x_p mod K) / K),
    where w is the wrap count of the shares x_p and c that of the shares x_p 2^(64 - k) (the
    same low bits moved to the top, so that their sum wraps c times): both from Hannun et al.'s
    Algorithm 3 with its exact comparison (`ppml.mpc.protocols.truncate.wrap_count`), in one
    run.  Then floor(x / K) = floor(x' / K) - 2^(62 - k).  Each process computes its own
    parties' part (an engine holding every party, or one seat each)."""
    check_int("bits", bits, 1, RING_BITS)
    k = np.uint64(bits)
    shifted = ctx.add_public(x, np.uint64(1 << 62))
    count = shifted.shape[-1]
    both = wrap_count(ctx, np.concatenate([shifted, shifted << np.uint64(64 - bits)], axis=-1))
    wrap, carry = both[..., :count], both[..., count:]
    quotient = (shifted >> k) + carry - wrap * np.uint64(1 << (64 - bits))
    return ctx.add_public(quotient, np.uint64((1 << 64) - (1 << (62 - bits))))
