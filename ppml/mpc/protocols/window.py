"""Functions of a shared fixed-point x in one opening: a dealer one-hot over a window of a public
table (the range-reduced exponential, the windowed reciprocal).

For shares of v = y 2^F (scale ``frac_bits`` F) the dealer gives a uniform r and, over 2^b
positions, shares of the one-hot of s = (r >> F) mod 2^b, scaled by B_k(rho) for each term k
of a series, rho = (r mod 2^F) / 2^F in [0, 1), at scale 2^-L (`ppml.mpc.dealer.window_pair`).
The parties open w = v + r (uniform: it hides v) and split it like r, w = w_hi 2^F + w_lo,
omega = w_lo / 2^F.  With k the wrap of v + r,

    v - (w_lo - r_lo) = (w_hi - r_hi) 2^F + k 2^64,

so y = n + omega - rho exactly, for the integer n = (v - w_lo + r_lo) / 2^F, which is
w_hi - s modulo 2^b (k 2^(64-F) vanishes there when b <= 64 - F), and |y - n| < 1
(n = floor(y) or floor(y) + 1).  For n in a public window [lowest, lowest + 2^b), position s
stands for n = lowest + ((w_hi - lowest - s) mod 2^b), so c = n + omega is public at every
position.  Any f with a separable expansion

    f(y) = f(c - rho) = sum_k A_k(c) B_k(rho)

is then one opening and a local sum: each party multiplies its shares of the scaled one-hots by
the public A_k(c) of every position, encoded at 2^-``factor_bits``, and adds them up.  Only the
hot position counts (the others are shares of 0, whatever A is there), so only its value has to
fit the ring.

* **exp** (`exp`, y = x): e^(c - rho) = e^c e^-rho, one term, no approximation: the rounding of
  the two factors only.
* **reciprocal** (`reciprocal`, y = x 2^g on a grid of g bits): 1/x = 2^g / (c - rho)
  = sum_k 2^g rho^k / c^(k+1), a geometric series since rho < 1 < c, cut after K terms:
  relative error (rho / c)^K < (a 2^g)^-K for x >= a.

A y whose n lies outside the window aliases to a wrong position: the caller's domain is a
precondition.  docs/mpc.md ("Functions") has the accuracy against rounds.
"""

from __future__ import annotations

import numpy as np

from ppml.mpc import dealer
from ppml.mpc.ring import ARITHMETIC


def evaluate(ctx, v: np.ndarray, frac_bits: int, lowest: int, bits: int, precision_bits: int,
             series: tuple, factors, factor_bits: int, tag: str) -> np.ndarray:
    """Arithmetic shares of sum_k A_k(n + omega) B_k(rho) at scale 2^-(L + ``factor_bits``)
    (L = ``precision_bits``) for shares ``v`` of y 2^F (F = ``frac_bits``), in one round
    (module doc).  ``series`` names the dealer's B_k (`dealer.window_pair`); ``factors(c)``
    maps the public c = n + omega of every position, shape (..., 2^bits), to the A_k,
    shape (..., K, 2^bits), finite reals whose encodings at 2^-factor_bits fit 64 bits.
    Precondition: y's integer part n (floor(y) or floor(y) + 1) lies in [``lowest``,
    ``lowest`` + 2^bits), ``bits`` <= 64 - F, and the hot position's sum fits the ring."""
    pair = ctx.store.take(dealer.window_pair(v.shape[1:], frac_bits, bits, precision_bits,
                                             series))
    (w,) = ctx.open([v + pair["r"]], ARITHMETIC, tag=tag)
    size = 1 << bits
    mask = np.uint64(size - 1)
    omega = (w & np.uint64((1 << frac_bits) - 1)).astype(np.float64) / 2.0 ** frac_bits
    shift = ((w >> np.uint64(frac_bits)) & mask) + np.uint64(-lowest % size)  # w_hi - lowest
    n = lowest + ((shift[..., None] + np.arange(size, 0, -1, dtype=np.uint64)) & mask).astype(
        np.int64)                                                            # shift - s
    encoded = np.rint(np.ldexp(factors(n + omega[..., None]), factor_bits)).astype(np.int64)
    return np.sum(pair["scaled"] * encoded.view(np.uint64)[None], axis=(-2, -1),
                  dtype=np.uint64)


def exp(ctx, v: np.ndarray, frac_bits: int, lowest: int, bits: int,
        precision_bits: int) -> np.ndarray:
    """Arithmetic shares of e^x at scale 2^-2L (L = ``precision_bits``) for shares ``v`` of
    x 2^F (F = ``frac_bits``), in one round: e^(n + omega) e^-rho.  Each of the two factors is
    rounded to L fractional bits: the result is within 2^-(L+1) (e e^x + 1) of e^x.
    Precondition: x's integer part n (floor(x) or floor(x) + 1) lies in [``lowest``,
    ``lowest`` + 2^bits), ``bits`` <= 64 - F, and e^(n + 1) 2^L < 2^63 in the window."""
    return evaluate(ctx, v, frac_bits, lowest, bits, precision_bits, ("exp",),
                    lambda c: np.exp(c)[..., None, :], precision_bits, "exp")


def reciprocal(ctx, v: np.ndarray, frac_bits: int, grid_bits: int, lowest: int, bits: int,
               terms: int, precision_bits: int, factor_bits: int) -> np.ndarray:
    """Arithmetic shares of 1/x at scale 2^-(L + ``factor_bits``) for shares ``v`` of x 2^F
    (F = ``frac_bits`` >= g = ``grid_bits``), in one round: y = x 2^g = c - rho and
    1/x = sum_{k < K} 2^g rho^k / c^(k+1), K = ``terms``.  The dealer's rho^k are rounded to L
    fractional bits and the public 2^g / c^(k+1) to ``factor_bits``.  Precondition: x 2^g's
    integer part lies in [``lowest``, ``lowest`` + 2^bits) with ``lowest`` >= 2 (so c > 2 at
    every position and the series' terms fall by half or more)."""
    powers = np.arange(1, terms + 1, dtype=np.float64)[:, None]
    return evaluate(ctx, v, frac_bits - grid_bits, lowest, bits, precision_bits,
                    ("powers", terms), lambda c: 2.0 ** grid_bits / c[..., None, :] ** powers,
                    factor_bits, "reciprocal")
