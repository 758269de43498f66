"""Public division by 2^k that stays correct for any number of parties.

Hannun et al., appendix C, Algorithm 3.  Dividing each share by 2^k is wrong by theta_x * Q / 2^k
whenever the shares wrap.  Three modes:

* ``exact``: Algorithm 3 in full.  The parties compute a sharing of the wrap count
      theta_x = theta_z + beta_xr - theta_r - eta_xr                    (line 10)
  from a dealer pair (r, theta_r) (line 1), the local carries beta of x_p + r_p (line 4) and the
  opened z = x + r with its wrap count theta_z (lines 7-8), and eta_xr = [z < r] (line 9) by a
  binary comparison of the public z against the dealer-provided bits of r (a Kogge-Stone carry,
  6 AND rounds, plus one B2A round).  The value is offset by 2^63 so that everything is read
  unsigned; no catastrophic error can occur, for any P and any -2^63 <= x < 2^63 - P 2^(k-1)
  (above, the rounding offset P 2^(k-1) wraps x first).  Then
      x / 2^k = sum_p (x_p >> k) - theta_x * 2^(64-k).
* ``probabilistic``: Algorithm 3 with eta_xr = 0, as the paper runs it, read signed.  It fails
  (an error of about 2^(64-k)) with probability |x| / 2^64 per element.
* ``bounded`` (the default): exact whenever |x| <= 2^62, which every product that fits the ring
  with one bit of headroom satisfies (a product of two inputs in the product range,
  `ppml.mpc.ranges`, among them), at one round and no wrap counting; above 2^62 it misses a
  wrap with probability (|x| - 2^62) / 2^63.  From
  s(x) + s(r) = s(z) + eta Q (signed readings), x / 2^k = (z >> k) - (r >> k) + eta 2^(64-k)
  up to one unit in the last place, with the dealer sharing -(r >> k) and -m 2^(64-k) for the
  sign bit m of r; and for |x| <= 2^62 the signed wrap eta depends only on the public z and m:
      eta = [z < -2^62] (1 - m) - [z >= 2^62] m
  (the proof is in docs/mpc.md, "Truncation").

Rounding: with wrap counting, dividing each share floors P times, which biases the result by
(P - 1) / 2 units in the last place on average; adding P * 2^(k-1) first centres the error
within P / 2 + 1/2 units.  The bounded mode needs no offset: (z >> k) - (r >> k) is x / 2^k
rounded up or down at random with the right odds (unbiased), always within one unit.
"""

from __future__ import annotations

import math

import numpy as np

from ppml.mpc import dealer
from ppml.mpc.protocols.binary import top_carry
from ppml.mpc.protocols.convert import bits_to_arithmetic
from ppml.mpc.ring import ALL_ONES, ARITHMETIC, BINARY, add_wraps, count_wraps

_QUARTER = np.uint64(1 << 62)
_U64 = [np.uint64(k) for k in range(65)]   # shift amounts, made once (they are on the hot path)
_I64 = [np.int64(k) for k in range(65)]


def truncate(ctx, x: np.ndarray, bits: int) -> np.ndarray:
    """Shares of x / 2^bits, rounded, for arithmetic shares ``x``, in the context's mode."""
    return truncate_each(ctx, [(x, bits)])[0]


def truncate_each(ctx, items: list) -> list:
    """``truncate`` for every (x, bits) in ``items``, each by its own number of bits.

    The bounded mode opens every masked value in one round.  The wrap-count modes truncate the
    concatenation of the items that share a number of bits, one protocol run per distinct
    number of bits.
    """
    out = [x for x, _ in items]
    todo = [k for k, (_, bits) in enumerate(items) if bits]
    if not todo:
        return out
    if ctx.truncation == "bounded":
        pairs, masked = [], []
        for k in todo:                                   # one loop: on the hot path
            x, bits = items[k]
            pair = ctx.store.take(dealer.truncation_pair(x.shape[1:], bits))
            pairs.append(pair)
            masked.append(x + pair["r"])
        opened = ctx.open(masked, ARITHMETIC, tag="truncate")
        for k, z, pair in zip(todo, opened, pairs):
            out[k] = _pair_corrected(ctx, z, pair, items[k][1])
        return out
    for bits in dict.fromkeys(items[k][1] for k in todo):
        group = [k for k in todo if items[k][1] == bits]
        flat = [items[k][0].reshape(len(items[k][0]), math.prod(items[k][0].shape[1:]))
                for k in group]
        joined = _wrap_count_truncate(ctx, np.concatenate(flat, axis=1), bits,
                                      exact=ctx.truncation == "exact")
        start = 0
        for k, part in zip(group, flat):
            out[k] = joined[:, start:start + part.shape[1]].reshape(items[k][0].shape)
            start += part.shape[1]
    return out


def _pair_corrected(ctx, z: np.ndarray, pair: dict, bits: int) -> np.ndarray:
    """The bounded mode's local step from the opened z = x + r (see module doc):
    x / 2^k = (z >> k) - [r >> k] + eta 2^(64-k) with eta = low (1 - m) - (outside - low) m
    = low - outside m, the dealer sharing -(r >> k) and -m 2^(64-k)."""
    outside = (z + _QUARTER) >> _U64[63]                      # [z < -2^62 or z >= 2^62]
    out = outside[None] * pair["minus_wrap"]
    out += pair["minus_shifted"]
    low = outside & (z >> _U64[63])                           # [z < -2^62]
    public = (z.view(np.int64) >> _I64[bits]).view(np.uint64) + (low << _U64[64 - bits])
    return ctx.add_public(out, public, inplace=True)


def _z_less_than_r(ctx, z: np.ndarray, r_bits: np.ndarray) -> np.ndarray:
    """Arithmetic shares of [z < r] for public z and XOR-shared r: the carry out of r + ~z."""
    not_z = z ^ ALL_ONES
    generate = r_bits & not_z[None]
    propagate = ctx.add_public(r_bits, not_z, BINARY)
    carry_out = top_carry(ctx, generate, propagate)
    return bits_to_arithmetic(ctx, carry_out)


def wrap_count(ctx, x: np.ndarray, signed: bool = False, exact: bool = True) -> np.ndarray:
    """Arithmetic shares of theta_x, the number of times the shares of ``x`` wrap: sum_p x_p =
    x + theta_x 2^64, with every share and x read unsigned (or signed), lines 1-10 of
    Algorithm 3; ``exact`` with line 9's comparison (every x), else with eta = 0."""
    pair = ctx.store.take(dealer.wrap_pair(x.shape[1:], signed, with_bits=exact))
    z_shares = x + pair["r"]
    beta = add_wraps(x, pair["r"], signed).view(np.uint64)           # line 4
    (stack,) = ctx.comm.exchange([z_shares], tag="truncate")          # line 7
    z = ARITHMETIC.reconstruct(stack)
    theta_z = count_wraps(stack, signed).view(np.uint64)              # line 8
    theta = beta - pair["theta"]
    if exact:
        theta = theta - _z_less_than_r(ctx, z, pair["bits"])          # line 9
    return ctx.add_public(theta, theta_z)                             # line 10


def _wrap_count_truncate(ctx, x: np.ndarray, bits: int, exact: bool) -> np.ndarray:
    """Algorithm 3: exact (with line 9) or probabilistic (eta = 0, signed)."""
    signed = not exact
    offset = ctx.parties << (bits - 1)  # rounding and share-floor bias, see module doc
    x = ctx.add_public(x, np.uint64(offset + (0 if signed else 1 << 63)))
    theta = wrap_count(ctx, x, signed, exact)
    if signed:
        shifted = (x.view(np.int64) >> np.int64(bits)).view(np.uint64)
    else:
        shifted = x >> np.uint64(bits)
    out = shifted - theta * (np.uint64(1) << np.uint64(64 - bits))
    return out if signed else ctx.add_public(out, np.uint64((1 << 64) - (1 << (63 - bits))))
