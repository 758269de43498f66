"""e^x of a shared fixed-point x in one opening: the range-reduced exponential's protocol.

Range reduction x = n + f with an integer n, and e^x = e^n e^f, both parts from one opening.
For shares of v = x 2^F (scale ``frac_bits`` F) the dealer gives a uniform r and, over 2^b
positions, shares of the one-hot of s = (r >> F) mod 2^b scaled by e^-rho,
rho = (r mod 2^F) / 2^F in [0, 1), at scale 2^-L (`ppml.mpc.dealer.exp_pair`).  The parties
open w = v + r (uniform: it hides v) and split it like r, w = w_hi 2^F + w_lo, omega = w_lo / 2^F.
With k the wrap of v + r,

    v - (w_lo - r_lo) = (w_hi - r_hi) 2^F + k 2^64,

so x = n + omega - rho exactly, for the integer n = (v - w_lo + r_lo) / 2^F, which is
w_hi - s modulo 2^b (k 2^(64-F) vanishes there when b <= 64 - F), and |x - n| < 1
(n = floor(x) or floor(x) + 1).  Hence

    e^x = e^(n + omega) e^-rho:

a public factor for each position of the one-hot times the dealer's scaled one-hot.  For n in
a public window [lowest, lowest + 2^b), position s stands for
n = lowest + ((w_hi - lowest - s) mod 2^b); the sum over the positions of e^(n + omega) 2^L
times the shares is e^x at scale 2^-2L, with no polynomial and no approximation: only the
rounding of the two factors to L fractional bits.  A v whose n lies outside the window aliases
to a wrong position (the caller's domain is a precondition).
"""

from __future__ import annotations

import numpy as np

from ppml.mpc import dealer
from ppml.mpc.ring import ARITHMETIC


def exp(ctx, v: np.ndarray, frac_bits: int, lowest: int, bits: int,
        precision_bits: int) -> np.ndarray:
    """Arithmetic shares of e^x at scale 2^-2L (L = ``precision_bits``) for shares ``v`` of
    x 2^F (F = ``frac_bits``), in one round (module doc).  Each of the two factors is rounded
    to L fractional bits: the result is within 2^-(L+1) (e e^x + 1) of e^x.  Precondition: x's
    integer part n (floor(x) or floor(x) + 1) lies in [``lowest``, ``lowest`` + 2^bits),
    ``bits`` <= 64 - F, and e^(n + 1) 2^L < 2^63 in the window."""
    pair = ctx.store.take(dealer.exp_pair(v.shape[1:], frac_bits, bits, precision_bits))
    (w,) = ctx.open([v + pair["r"]], ARITHMETIC, tag="exp")
    size = 1 << bits
    mask = np.uint64(size - 1)
    omega = (w & np.uint64((1 << frac_bits) - 1)).astype(np.float64) / 2.0 ** frac_bits
    shift = ((w >> np.uint64(frac_bits)) & mask) + np.uint64(-lowest % size)  # w_hi - lowest
    n = lowest + ((shift[..., None] + np.arange(size, 0, -1, dtype=np.uint64)) & mask).astype(
        np.int64)                                                            # shift - s
    factors = np.rint(np.ldexp(np.exp(n + omega[..., None]), precision_bits)).astype(np.uint64)
    return np.sum(pair["scaled"] * factors[None], axis=-1, dtype=np.uint64)
