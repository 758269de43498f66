"""Fixed-scale encoding of reals as Paillier plaintexts, and the plaintext-space bookkeeping.

LinUCB-DS computes on reals (arms, theta, A^-1, the B_i), so they are encoded as integers
(Ciucanu et al., section 3, "Correctness"): the paper multiplies by a power of 16 and notes that
"in order not to leak any information on the ciphertexts, we can use the same power for every
encryption".  phe's EncodedNumber instead picks an exponent per value, and that exponent travels
in plain beside the ciphertext (the authors' runs show -79 and -80 for different arms, visible
through the permutation sent to Comp).  Here:

* One public scale 2^-s per protocol run (`Encoding.scale_bits`, 32 by default).  A value at
  *scale exponent* k is the integer m = round(x 2^(k s)); fresh encodings have k = 1, and the
  product of an encrypted value with an encoded factor adds their exponents.  k depends on the
  computation, never on the data, so ciphertexts carry nothing data-dependent and additions never
  align exponents.
* A negative m is the residue m mod n; residues above (n - 1) / 2 decode as negative.
* Every encoded value carries a public interval [lo, hi] from declared bounds (by default
  +-`Encoding.max_abs`); operations propagate intervals (`product_bounds`), and
  `check_headroom` raises before a result could leave [-(n - 1) / 2, (n - 1) / 2]: a
  ValueError naming the bound, never a silent wrap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import gmpy2
import numpy as np

from ppml.checks import check_int, check_positive
from ppml.crypto.fixed import real_array

INTEGER_TYPES = (int, np.integer, type(gmpy2.mpz(0)))
DEFAULT_SCALE_BITS = 32
MIN_SCALE_BITS = 1
MAX_SCALE_BITS = 128
DEFAULT_MAX_ABS = 2.0**20
"""Default public bound on the magnitude of encoded reals (a protocol passes tighter ones)."""


def objects(values, shape) -> np.ndarray:
    """An object array of ``shape`` holding the flat sequence ``values`` as they are (fast: no
    per-element sequence checks, unlike ``np.array``)."""
    return np.fromiter(values, dtype=object, count=len(values)).reshape(shape)


def scaled(value, shift: int) -> int:
    """round(value * 2^shift) exactly (half to even, as numpy and `ppml.crypto.fixed`).

    Integers are shifted exactly, floats through their exact ratio: no float overflow or
    rounding beyond the final one.  NaN and inf raise a ValueError.
    """
    if isinstance(value, INTEGER_TYPES):
        return int(value) << shift
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"only finite reals can be encoded, got {value}")
    num, den = value.as_integer_ratio()
    quotient, remainder = divmod(num << shift, den)
    if 2 * remainder > den or (2 * remainder == den and quotient & 1):
        quotient += 1
    return quotient


def product_bounds(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The interval of x y for x in [a0, a1] and y in [b0, b1]."""
    corners = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(corners), max(corners)


def check_headroom(lo: int, hi: int, public_key, what: str) -> None:
    """Raise a ValueError naming the bound unless every m in [lo, hi] fits |m| <= (n - 1) / 2."""
    magnitude = max(-lo, hi)
    if magnitude > public_key.max_plaintext:
        raise ValueError(
            f"plaintext overflow: {what} may reach |m| = 2^{math.log2(magnitude):.1f}, beyond the "
            f"plaintext space |m| <= (n - 1)/2 ~ 2^{public_key.bits - 1} of this "
            f"{public_key.bits}-bit key; use tighter bounds, a smaller scale_bits or fewer "
            "chained products")


@dataclass(frozen=True)
class Encoded:
    """Plaintext integers ``ints`` (object array) at scale exponent ``k``, with public bounds:
    lo <= m <= hi for every m."""

    ints: np.ndarray
    k: int
    lo: int
    hi: int

    @property
    def shape(self) -> tuple:
        return self.ints.shape


@dataclass(frozen=True)
class Encoding:
    """One public scale 2^-``scale_bits`` for a protocol run, and the default public bound
    ``max_abs`` on the magnitude of the reals it encodes."""

    scale_bits: int = DEFAULT_SCALE_BITS
    max_abs: float = DEFAULT_MAX_ABS

    def __post_init__(self):
        object.__setattr__(self, "scale_bits", check_int("scale_bits", self.scale_bits,
                                                         MIN_SCALE_BITS, MAX_SCALE_BITS,
                                                         what="an integer"))
        check_positive("max_abs", self.max_abs)

    def encode(self, values, k: int = 1, bounds: tuple | None = None) -> Encoded:
        """round(x 2^(k s)) for every x in ``values``, with the public interval from ``bounds``.

        ``bounds`` = (lo, hi) in real units, default (-max_abs, max_abs); a value outside it
        (or NaN) raises a ValueError naming the bounds.  Integers (numpy integer arrays, Python
        ints of any size) are encoded exactly; k = 0 encodes integers as themselves.
        """
        k = check_int("scale exponent k", k, 0, what="an integer")
        lo, hi = (-self.max_abs, self.max_abs) if bounds is None else _bounds(bounds)
        array = np.asarray(values, dtype=object) if _holds_ints(values) else \
            real_array(values, "values")
        flat = array.ravel().tolist()
        outside = [x for x in flat if not lo <= x <= hi]
        if outside:
            raise ValueError(f"{len(outside)} value(s) outside the declared bounds [{lo}, {hi}] "
                             f"(first: {outside[0]}); widen bounds= or the Encoding's max_abs")
        shift = k * self.scale_bits
        ints = objects([scaled(x, shift) for x in flat], array.shape)
        return Encoded(ints, k, scaled(lo, shift), scaled(hi, shift))

    def decode(self, ints, k: int) -> np.ndarray:
        """Reals m / 2^(k s) (float64, correctly rounded) of signed plaintext integers."""
        k = check_int("scale exponent k", k, 0, what="an integer")
        array = np.asarray(ints, dtype=object)
        if not all(isinstance(m, INTEGER_TYPES) for m in array.flat):
            raise ValueError(f"ints must be plaintext integers, got "
                             f"{next(m for m in array.flat if not isinstance(m, INTEGER_TYPES))!r}")
        divisor = 1 << (k * self.scale_bits)
        return np.array([int(m) / divisor for m in array.ravel()],
                        dtype=np.float64).reshape(array.shape)


def _bounds(bounds) -> tuple:
    """``bounds`` = (lo, hi): integers of any size or finite reals with lo <= hi; a ValueError
    naming them otherwise."""
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        lo = hi = None
    exact = all(isinstance(b, INTEGER_TYPES) or isinstance(b, (float, np.floating))
                and math.isfinite(b) for b in (lo, hi))
    if not (exact and lo <= hi):
        raise ValueError(f"bounds must be a pair (lo, hi) of finite numbers with lo <= hi, got "
                         f"{bounds!r:.80}")
    return lo, hi


def _holds_ints(values) -> bool:
    """Whether ``values`` are integers: a numpy integer dtype (not timedelta64, which numpy
    counts as one), or Python / gmpy2 ints."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        return values.dtype.kind in "iu"
    flat = np.asarray(values, dtype=object).ravel()
    return flat.size > 0 and all(isinstance(x, INTEGER_TYPES) and not isinstance(x, bool)
                                 for x in flat)


def to_residues(ints, n) -> list:
    """Signed integers as residues m mod n in [0, n): a negative m becomes n - |m|."""
    return [m % n for m in np.asarray(ints, dtype=object).ravel()]


def from_residues(residues, n) -> list:
    """Residues in [0, n) as signed Python ints: those above (n - 1) / 2 are negative."""
    half = (n - 1) // 2
    return [int(m - n) if m > half else int(m) for m in residues]
