"""Fixed-point codec between reals and the ring Z/2^64 (Hannun et al., appendix B).

A real x is encoded as round(x * 2^L), stored as a signed 64-bit integer in two's complement
inside a ``uint64`` array, so that numpy's wrapping uint64 arithmetic is arithmetic modulo
Q = 2^64.  L (``precision_bits``) is the number of fractional bits: 20 by default, 8 to 32
allowed.

Nothing is silently wrapped or clipped: a real whose encoding does not fit the signed 64-bit
range, NaN or inf raises a ``ValueError`` that names the bound.
"""

from __future__ import annotations

import numpy as np

from ppml.checks import check_int

RING_BITS = 64
DEFAULT_PRECISION_BITS = 20
MIN_PRECISION_BITS = 8
MAX_PRECISION_BITS = 32


def check_precision_bits(precision_bits: int) -> int:
    """Return ``precision_bits`` if it lies in [8, 32], else raise a ValueError naming the bound."""
    return check_int("precision_bits", precision_bits, MIN_PRECISION_BITS, MAX_PRECISION_BITS,
                     what="an integer")


def max_abs_real(precision_bits: int) -> float:
    """The largest magnitude a real may have to be encoded: encodings must stay below 2^62.

    One bit of headroom below the signed range keeps sums of two encodings and the offset used
    by exact truncation inside the ring.
    """
    return float(2.0 ** (RING_BITS - 2 - precision_bits))


def encode(values, precision_bits: int = DEFAULT_PRECISION_BITS, name: str = "value") -> np.ndarray:
    """Encode reals as fixed-point ring elements: ``round(x * 2^L)`` in two's complement uint64.

    Raises ValueError naming ``name`` when a value is NaN, inf, or outside
    ``(-2^(62-L), 2^(62-L))``.
    """
    return encode_at_scale(values, check_precision_bits(precision_bits), name)


def encode_at_scale(values, frac_bits: int, name: str = "value") -> np.ndarray:
    """`encode` at any scale a shared value may have: a context precision L (8 to 32 bits), or a
    product's or a state's scale above it, such as 2L; the range is |x| 2^frac_bits < 2^62."""
    x = np.asarray(values, dtype=np.float64)
    # NaN if any is NaN, inf if any is inf
    largest = abs(float(x)) if x.ndim == 0 else float(np.abs(x).max()) if x.size else 0.0
    bound = max_abs_real(frac_bits)
    if not np.isfinite(largest):
        raise ValueError(f"{name} contains NaN or inf; only finite reals can be encoded: "
                         f"|v| must be < 2^{62 - frac_bits} at scale 2^-{frac_bits}")
    if largest >= bound:
        raise ValueError(f"{name} is outside the fixed-point range: |v| must be < "
                         f"2^{62 - frac_bits} = {bound:.6g} at precision_bits={frac_bits}, got "
                         f"max |v| = {largest:.6g}")
    return np.rint(x * float(2**frac_bits)).astype(np.int64).view(np.uint64)


def encode_integers(values, name: str = "value") -> np.ndarray:
    """Encode integers (scale 2^0) as ring elements; they must fit in the signed 64-bit range."""
    x = np.asarray(values)
    if x.dtype == np.uint64:
        return x
    if not np.issubdtype(x.dtype, np.integer) and not np.issubdtype(x.dtype, np.bool_):
        raise ValueError(f"{name} must be integers to be encoded at scale 1, got dtype {x.dtype}")
    return x.astype(np.int64).view(np.uint64)


def to_signed(ring: np.ndarray) -> np.ndarray:
    """Interpret ring elements as signed 64-bit integers (a view, no copy)."""
    return np.asarray(ring, dtype=np.uint64).view(np.int64)


def decode(ring: np.ndarray, precision_bits: int) -> np.ndarray:
    """Decode ring elements with ``precision_bits`` fractional bits back to float64 reals."""
    return to_signed(ring).astype(np.float64) / float(2**precision_bits)
