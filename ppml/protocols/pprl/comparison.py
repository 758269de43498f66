"""Private comparison of two agents' integers on the secret-sharing engine (Sakuma et al.,
section 3.2, "private comparison of random shares").

The owner A holds u, the holder B holds v, both non-negative integers below 2^``bits``; the
engine's two parties (one per agent) end with XOR shares of [u < v] and neither learns it.
The masked shares of section 3.2 reduce to this: A's y and B's offset o = 2^b + r
(`masking`) give x < 0 exactly when y < o, and a borrow of the division is [y mod K < o mod K].

Any width: u and v are split into limbs of `LIMB_BITS` bits, each agent's limbs enter the
engine as its private inputs, and the engine compares them limb by limb
(`ppml.mpc.protocols.compare.less_than_limbs`).  A 177-bit comparison (Q-values at L = 2^128)
takes three limbs.
"""

from __future__ import annotations

import numpy as np

from ppml.checks import check_int
from ppml.mpc.protocols.compare import LIMB_BITS, less_than_limbs


def limb_count(bits: int) -> int:
    """How many `LIMB_BITS`-bit limbs hold ``bits`` bits."""
    return -(-bits // LIMB_BITS)


def limbs(values: list, bits: int) -> np.ndarray:
    """The non-negative integers ``values`` below 2^``bits`` as rows of `LIMB_BITS`-bit limbs,
    least significant first."""
    count = limb_count(bits)
    low = (1 << LIMB_BITS) - 1
    out = np.empty((len(values), count), dtype=np.uint64)
    for row, value in enumerate(values):
        value = int(value)
        if not 0 <= value < 1 << bits:
            raise ValueError(f"a compared value must lie in [0, 2^{bits}), got {value}")
        for limb in range(count):
            out[row, limb] = (value >> (LIMB_BITS * limb)) & low
    return out


def less_than(ctx, owner_values, holder_values, bits: int, owner: int = 0, holder: int = 1):
    """XOR shares (bit 0) of [u < v] for the owner's ``owner_values`` u and the holder's
    ``holder_values`` v, each a private input of its engine party (None where not held), all
    below 2^``bits``; returns the engine data (one row of words per held party)."""
    check_int("bits", bits, 1)
    held = owner_values if owner_values is not None else holder_values
    shape = (len(held), limb_count(bits))
    # The ring's range (limbs of up to 62 bits), safely: limbs are only compared, never
    # multiplied, and the difference of two stays within 2^62 (`LIMB_BITS`).
    a = ctx.share(None if owner_values is None else limbs(owner_values, bits), owner=owner,
                  shape=shape, frac_bits=0, wide=True)
    b = ctx.share(None if holder_values is None else limbs(holder_values, bits), owner=holder,
                  shape=shape, frac_bits=0, wide=True)
    with ctx.comm.operation("compare"):
        return less_than_limbs(ctx, a.data, b.data)
