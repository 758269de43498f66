"""Where values enter the engine: the product range, and the ring's range for a caller that asks.

Every value a program gives the engine is checked where it enters: shared inputs
(`Context.share`, `Context.constant`) and public operands of a shared tensor's arithmetic and
comparisons (+, -, *, @, /, <, ...).  The rule (docs/decisions.md, "The product range"):

* a real (scale 2^-L) must have |v| < 2^(31-L), 2048 at L = 20;
* an integer of an integer computation (scale 1: bits, counts, indices) must have |v| < 2^31;
  an integer that meets a real tensor is a real.

Every encoding round(|v| 2^L) is then at most 2^31, so a product of two such values is at most
2^62 in the ring: it cannot wrap, and every truncation mode divides it correctly (the bounded
mode up to 2^62, `ppml.mpc.protocols.truncate`).  A public addend at a scale s above L (a
state kept at 2L) must also fit the ring there: |v| < 2^(62-s).

``wide=True`` (`Context.share`, `Context.constant`, `ArithmeticShared.times`) takes the ring's
range instead: reals |v| < 2^(62-L), integers in the signed 64-bit range.  The caller then keeps
every product in range (docs/mpc.md, "Ranges: where each operation is exact").  In both ranges
NaN, inf, complex values, non-numbers (strings, None, dates) and unsigned integers at or above
2^63 are refused.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ppml.crypto.fixed import (VALUE_BITS, encode_at_scale, largest_magnitude, magnitude_text,
                               real_array, signed_integers)

PRODUCT_BITS = 31
"""Inputs' encodings stay within 2^31, so that a product of two stays within 2^62."""

_MASK = (1 << 64) - 1


@dataclass(frozen=True)
class Limit:
    """The bound |v| < 2^``bits`` on values entering the engine (None: the signed 64-bit range,
    which the codec checks), named ``where`` and ``at`` in errors, with ``note`` on how to widen
    it."""

    bits: int | None
    where: str
    at: str = ""
    note: str = ""

    def check(self, name: str, largest) -> None:
        """A ValueError naming ``name`` and the bound when ``largest`` = max |v| reaches it or
        is NaN or inf."""
        if self.bits is None:
            return
        bound = f"|v| must be < 2^{self.bits} = {2.0 ** self.bits:.6g}{self.at}"
        if not isinstance(largest, int) and not np.isfinite(largest):   # ints: any size
            raise ValueError(f"{name} contains NaN or inf; only finite values enter the engine: "
                             f"{bound}")
        if largest >= 2.0 ** self.bits:
            raise ValueError(f"{name} is outside the {self.where}: {bound}, got max |v| = "
                             f"{magnitude_text(largest)}{self.note}")


@functools.lru_cache(maxsize=256)
def limit(precision_bits: int, real: bool, scale: int | None = None, wide: bool = False,
          widen: str = "") -> Limit:
    """The range of a value entering the engine: the product range of a real at precision L
    (``precision_bits``) or of an integer, or with ``wide`` the ring's.  Added at ``scale``, a
    value must also fit the ring there.  ``widen`` names the keyword that takes the ring's range
    (an input's or a factor's), for the error message."""
    at = f" at precision_bits={precision_bits}"
    if wide:
        if not real:
            return Limit(None, "signed 64-bit range")
        bits, where = VALUE_BITS - precision_bits, "fixed-point range"
    elif real:
        bits, where = PRODUCT_BITS - precision_bits, "product range"
    else:
        bits, where, at = PRODUCT_BITS, "product range", " for integers"
    if scale is not None and VALUE_BITS - scale < bits:
        bits, where, at = VALUE_BITS - scale, "ring", f" at scale 2^-{scale}"
    note = "" if wide or not widen else (
        f" (a product of two values in this range fits the ring; {widen} takes the ring's range "
        "and leaves every product's range to the caller)")
    return Limit(bits, where, at, note)


def encode_reals(values, scale: int, bound: Limit, name: str) -> np.ndarray:
    """Reals encoded at ``scale`` after checking them against ``bound``."""
    x = real_array(values, name)
    bound.check(name, largest_magnitude(x))
    return encode_at_scale(x, scale, name)


def encode_integers(values, bound: Limit, name: str) -> np.ndarray:
    """Integers as ring elements (scale 1) after checking them against ``bound``."""
    x = signed_integers(values, name)
    if x.size and bound.bits is not None:
        bound.check(name, max(-int(x.min()), int(x.max())))
    return x.view(np.uint64)


def encode_integer(value: int, scale: int, bound: Limit, name: str) -> np.uint64:
    """One Python integer as a ring element at ``scale`` (exact) after checking it against
    ``bound``."""
    bound.check(name, abs(value))
    return np.uint64((value << scale) & _MASK)


def encode_input(value, frac_bits: int, name: str, wide: bool = False) -> np.ndarray:
    """A shared input's ring elements: reals at scale ``frac_bits``, integers for 0, in the
    product range (or the ring's with ``wide``)."""
    if frac_bits:
        return encode_reals(value, frac_bits, limit(frac_bits, True, wide=wide, widen="wide=True"),
                            name)
    return encode_integers(value, limit(0, False, wide=wide, widen="wide=True"), name)
