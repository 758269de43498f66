"""Fixed-point codec between reals and the ring Z/2^64 (Hannun et al., appendix B).

A real x is encoded as round(x * 2^L), stored as a signed 64-bit integer in two's complement
inside a ``uint64`` array, so that numpy's wrapping uint64 arithmetic is arithmetic modulo
Q = 2^64.  L (``precision_bits``) is the number of fractional bits: 20 by default, 8 to 30
allowed (`MAX_PRECISION_BITS`).

Nothing is silently wrapped or clipped: a real whose encoding does not fit the signed 64-bit
range with one bit of headroom, NaN or inf raises a ``ValueError`` that names the bound; a
complex value raises a ``TypeError`` (its imaginary part would be dropped), and so does anything
that is not a number (strings, None, dates, time spans); an unsigned integer at or above 2^63
raises a ``ValueError`` (it would read as negative).  The engine narrows these
ranges where values enter it (`ppml.mpc.ranges`).
"""

from __future__ import annotations

import numbers

import numpy as np

from ppml.checks import check_int

RING_BITS = 64
VALUE_BITS = 62
"""Encodings stay below 2^62 in magnitude: one bit of headroom below the signed range keeps sums
of two encodings and the offsets of the truncations inside the ring."""
MAX_PRODUCT_SCALE = 61
"""The largest scale a product may have: a value of magnitude 1 at 2^-62 already reaches the
bound 2^62 of the bounded truncation, and at 2^-64 it wraps the ring."""
DEFAULT_PRECISION_BITS = 20
MIN_PRECISION_BITS = 8
MAX_PRECISION_BITS = MAX_PRODUCT_SCALE // 2
"""30: the largest L at which a product of two reals (at scale 2^-2L) fits the ring.  At 31 and
32 every product was refused; the engine and the experiments' `RunConfig` both check L here."""


def check_precision_bits(precision_bits: int) -> int:
    """Return ``precision_bits`` if it lies in [`MIN_PRECISION_BITS`, `MAX_PRECISION_BITS`] =
    [8, 30], else raise a ValueError naming the bound."""
    return check_int("precision_bits", precision_bits, MIN_PRECISION_BITS, MAX_PRECISION_BITS,
                     what="an integer")


def max_abs_real(precision_bits: int) -> float:
    """The largest magnitude a real may have to be encoded: encodings must stay below 2^62
    (`VALUE_BITS`)."""
    return float(2.0 ** (VALUE_BITS - precision_bits))


def magnitude_text(value) -> str:
    """A magnitude as errors print it: 6 significant digits, or a power of two for an integer
    beyond float64's range."""
    try:
        return f"{float(value):.6g}"
    except OverflowError:
        return f"2^{int(value).bit_length() - 1} or more"


def _array(values, name: str) -> np.ndarray:
    """``np.asarray(values)``; a ValueError naming ``name`` for ragged nested sequences."""
    try:
        return np.asarray(values)
    except ValueError as exc:
        raise ValueError(f"{name} must be an array of numbers: {exc}") from None


def real_array(values, name: str = "value") -> np.ndarray:
    """``values`` as a float64 array: booleans, integers and reals of any numpy type, or Python
    numbers.  A TypeError naming ``name`` for complex values, whose imaginary part numpy would
    drop with only a warning, and for anything else that is not a number (strings, None, dates);
    a ValueError for a Python integer beyond float64's range."""
    x = _array(values, name)
    if x.dtype.kind in "biuf":
        return x if x.dtype == np.float64 else x.astype(np.float64)
    numbers_only = x.dtype == object and all(isinstance(v, numbers.Real) for v in x.flat)
    if numbers_only:                 # Python (or numpy) numbers in an object array
        try:
            return x.astype(np.float64)
        except OverflowError:        # an integer that no float64 holds
            raise ValueError(f"{name} is outside the fixed-point range: got a value of "
                             f"magnitude {magnitude_text(max(abs(int(v)) for v in x.flat))}"
                             ) from None
    odd = [v for v in x.flat if not isinstance(v, numbers.Real)][:1] if x.dtype == object else []
    if np.iscomplexobj(x) or any(isinstance(v, numbers.Complex) for v in odd):
        raise TypeError(f"{name} must be real, got complex values (dtype {x.dtype}); encode the "
                        "real and imaginary parts as two arrays")
    raise TypeError(f"{name} must be real numbers, got "
                    + (f"{odd[0]!r:.40}" if odd else f"dtype {x.dtype}"))


def largest_magnitude(x: np.ndarray) -> float:
    """max |x| of a float64 array (0 if empty): NaN if any element is NaN, inf if any is inf."""
    return abs(float(x)) if x.ndim == 0 else float(np.abs(x).max()) if x.size else 0.0


def encode(values, precision_bits: int = DEFAULT_PRECISION_BITS, name: str = "value") -> np.ndarray:
    """Encode reals as fixed-point ring elements: ``round(x * 2^L)`` in two's complement uint64.

    Raises ValueError naming ``name`` when a value is NaN, inf, or outside
    ``(-2^(62-L), 2^(62-L))``, and TypeError when values are complex.
    """
    return encode_at_scale(values, check_precision_bits(precision_bits), name)


def encode_at_scale(values, frac_bits: int, name: str = "value") -> np.ndarray:
    """`encode` at any scale a shared value may have: a context precision L (8 to 30 bits), or a
    product's or a state's scale above it, such as 2L; the range is |x| 2^frac_bits < 2^62."""
    frac_bits = check_int("frac_bits", frac_bits, 0, MAX_PRODUCT_SCALE, what="an integer")
    x = real_array(values, name)
    largest = largest_magnitude(x)
    bound = max_abs_real(frac_bits)
    if not np.isfinite(largest):
        raise ValueError(f"{name} contains NaN or inf; only finite reals can be encoded: "
                         f"|v| must be < 2^{VALUE_BITS - frac_bits} at scale 2^-{frac_bits}")
    if largest >= bound:
        raise ValueError(f"{name} is outside the fixed-point range: |v| must be < "
                         f"2^{VALUE_BITS - frac_bits} = {bound:.6g} at precision_bits={frac_bits}, "
                         f"got max |v| = {largest:.6g}")
    return np.rint(x * float(2**frac_bits)).astype(np.int64).view(np.uint64)


def signed_integers(values, name: str = "value") -> np.ndarray:
    """``values`` as an int64 array: integers (or bools) in the signed 64-bit range.

    A ValueError naming ``name`` for non-integers, for unsigned values at or above 2^63 (they
    would read as negative) and for Python integers beyond 64 bits; a TypeError for complex
    values.
    """
    x = _array(values, name)
    if np.iscomplexobj(x):
        raise TypeError(f"{name} must be integers, got complex values (dtype {x.dtype})")
    if x.dtype == object and x.size and all(isinstance(v, numbers.Integral) for v in x.flat):
        if not all(-(1 << 63) <= v < 1 << 63 for v in x.flat):   # Python ints beyond 64 bits
            raise ValueError(f"{name} is outside the signed 64-bit range: integers must lie in "
                             f"[-2^63, 2^63), got max |v| = "
                             f"{magnitude_text(max(abs(int(v)) for v in x.flat))}")
        x = x.astype(np.int64)
    if x.dtype.kind not in "biu":    # not timedelta64 either, which numpy counts as an integer
        raise ValueError(f"{name} must be integers to be encoded at scale 1, got dtype {x.dtype}")
    if x.dtype == np.uint64 and x.size and x.max() >= 1 << 63:
        raise ValueError(f"{name} is outside the signed 64-bit range: unsigned values must be "
                         f"< 2^63 (the ring reads them in two's complement), got "
                         f"{int(x.max())}")
    return x.astype(np.int64, copy=False)


def encode_integers(values, name: str = "value") -> np.ndarray:
    """Encode signed integers (scale 2^0) as ring elements (`signed_integers`' checks)."""
    return signed_integers(values, name).view(np.uint64)


def encode_words(values, name: str = "value") -> np.ndarray:
    """64-bit words as ring elements, for XOR sharing and ring-level offsets: any uint64, or
    signed integers in two's complement; non-integers (a ValueError naming ``name``) and
    complex values (a TypeError) are refused."""
    x = _array(values, name)
    if x.dtype.kind == "u":
        return x.astype(np.uint64, copy=False)
    return signed_integers(x, name).view(np.uint64)


def to_signed(ring: np.ndarray) -> np.ndarray:
    """Interpret ring elements (`encode_words`: uint64, or signed integers) as signed 64-bit
    integers (a view of a uint64 array, no copy)."""
    if not (isinstance(ring, np.ndarray) and ring.dtype == np.uint64):
        ring = encode_words(ring, "ring elements")
    return ring.view(np.int64)


def decode(ring: np.ndarray, precision_bits: int) -> np.ndarray:
    """Decode ring elements with ``precision_bits`` fractional bits (a scale in [0, 63]) back to
    float64 reals."""
    bits = check_int("precision_bits", precision_bits, 0, RING_BITS - 1, what="an integer")
    return to_signed(ring).astype(np.float64) / float(2**bits)
