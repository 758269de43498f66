"""Public division by 2^k that stays correct for any number of parties.

Hannun et al., appendix C, Algorithm 3.  Dividing each share by 2^k is wrong by theta_x * Q / 2^k
whenever the shares wrap; the parties therefore compute a sharing of the wrap count
    theta_x = theta_z + beta_xr - theta_r - eta_xr                       (Alg. 3, line 10)
from a dealer pair (r, theta_r) (line 1), the local carries beta of x_p + r_p (line 4) and the
opened z = x + r with its own wrap count theta_z (lines 7-8), and return
    x / 2^k = sum_p (x_p >> k) - theta_x * 2^(64-k).

Two modes:

* ``exact``: eta_xr = [z < r] (line 9) is computed with a binary comparison of the public z
  against the dealer-provided bits of r (a Kogge-Stone carry, 6 AND rounds, plus one B2A round).
  The value is offset by 2^63 so that everything is read unsigned; no catastrophic error can
  occur, for any P and any value in the ring.
* ``probabilistic``: eta_xr is taken as 0, as the paper does, with signed wrap counts.  This
  fails (an error of about 2^(64-k)) with probability |x| / 2^64 per element.

Rounding: dividing each share by 2^k floors P times, which biases the result by (P - 1) / 2
units in the last place on average (up to P - 1); adding P * 2^(k-1) before the division centres
the error, so the result is x / 2^k rounded, within P / 2 + 1/2 units in the last place.
"""

from __future__ import annotations

import numpy as np

from ppml.mpc import dealer
from ppml.mpc.protocols.binary import prefix_carries
from ppml.mpc.protocols.convert import bits_to_arithmetic
from ppml.mpc.ring import ALL_ONES, ARITHMETIC, BINARY, add_wraps, count_wraps

HALF = np.uint64(1 << 63)


def _z_less_than_r(ctx, z: np.ndarray, r_bits: np.ndarray) -> np.ndarray:
    """Arithmetic shares of [z < r] for public z and XOR-shared r: the carry out of r + ~z."""
    not_z = z ^ ALL_ONES
    generate = r_bits & not_z[None]
    propagate = ctx.add_public(r_bits, not_z, BINARY)
    carry_out = prefix_carries(ctx, generate, propagate) >> np.uint64(63)
    return bits_to_arithmetic(ctx, carry_out)


def truncate(ctx, x: np.ndarray, bits: int) -> np.ndarray:
    """Shares of floor(x / 2^bits) for arithmetic shares ``x`` (Algorithm 3 and eq. after it)."""
    if bits == 0:
        return x
    exact = ctx.truncation == "exact"
    signed = not exact
    offset = ctx.parties << (bits - 1)  # rounding and share-floor bias, see above
    x = ctx.add_public(x, np.uint64(offset + (1 << 63 if exact else 0)))
    pair = ctx.store.take(dealer.wrap_pair(x.shape[1:], signed, with_bits=exact))
    z_shares = x + pair["r"]
    beta = add_wraps(x, pair["r"], signed).view(np.uint64)           # line 4
    (stack,) = ctx.comm.exchange([z_shares], tag="truncate")          # line 7
    z = ARITHMETIC.reconstruct(stack)
    theta_z = count_wraps(stack, signed).view(np.uint64)              # line 8
    theta = beta - pair["theta"]
    if exact:
        theta = theta - _z_less_than_r(ctx, z, pair["bits"])          # line 9
    theta = ctx.add_public(theta, theta_z)                            # line 10
    k = np.uint64(bits)
    shifted = x >> k if exact else (x.view(np.int64) >> np.int64(bits)).view(np.uint64)
    out = shifted - theta * (np.uint64(1) << np.uint64(64 - bits))
    return ctx.add_public(out, np.uint64((1 << 64) - (1 << (63 - bits)))) if exact else out
