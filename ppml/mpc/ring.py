"""Arithmetic on arrays of Z/2^64 (uint64) and of packed bits, shared by protocols and the dealer.

Two rings carry shares: the arithmetic ring (addition mod 2^64) and the binary ring (XOR on
bit-packed uint64 words).  :class:`Ring` names the operations a protocol needs, so that one
Beaver routine serves both multiplication and AND.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

U64 = np.uint64
ONE = np.uint64(1)
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


def _fold(op):
    """Reduce stacked shares over axis 0 with ``op`` (a loop: P is small, arrays may be too)."""
    def reduce(stack: np.ndarray) -> np.ndarray:
        parties = len(stack)
        if stack.ndim == 1 or parties == 1:   # 0-d shares (numpy would return a scalar), P = 1
            return np.asarray(op.reduce(stack, axis=0))
        out = op(stack[0], stack[1])
        for p in range(2, parties):
            op(out, stack[p], out=out)
        return out
    return reduce


_xor_reduce = _fold(np.bitwise_xor)
_sum_reduce = _fold(np.add)


@dataclass(frozen=True)
class Ring:
    """The group operation of a sharing, its inverse and the reconstruction of stacked shares."""

    name: str
    add: Callable
    sub: Callable
    reconstruct: Callable
    product: Callable


ARITHMETIC = Ring("arithmetic", np.add, np.subtract, _sum_reduce, np.multiply)
BINARY = Ring("binary", np.bitwise_xor, np.bitwise_xor, _xor_reduce, np.bitwise_and)


def pad(x: np.ndarray, ndim: int, lead: int = 1) -> np.ndarray:
    """Insert unit axes after the ``lead`` leading axes so that ``x`` has ``ndim`` logical axes.

    Leading axes (the held-party axis, a dealer batch axis) then never broadcast against the
    logical axes of another operand.
    """
    missing = ndim - (x.ndim - lead)
    return x.reshape(x.shape[:lead] + (1,) * missing + x.shape[lead:]) if missing > 0 else x


def multiply(a: np.ndarray, b: np.ndarray, op=np.multiply) -> np.ndarray:
    """Elementwise ``op`` of two arrays that both carry one leading axis."""
    if a.ndim == b.ndim:   # the common case: nothing to pad
        return op(a, b)
    ndim = max(a.ndim, b.ndim) - 1
    return op(pad(a, ndim), pad(b, ndim))


def matmul(a: np.ndarray, b: np.ndarray, lead: int = 1) -> np.ndarray:
    """numpy ``matmul`` on the trailing (logical) axes of ``a`` and ``b``.

    Both operands carry ``lead`` leading axes (the held-party axis of shares, or a batch axis
    of dealer material) that broadcast against each other and are kept in front of the result.
    The logical axes follow numpy's rules, including 1-D promotion and batch broadcasting, so
    ``[A, D, D] @ [D]`` gives ``[A, D]`` for every leading index.
    """
    a_vec = a.ndim - lead == 1
    b_vec = b.ndim - lead == 1
    if a_vec:
        a = a[..., None, :]
    if b_vec:
        b = b[..., None]
    batch = max(a.ndim, b.ndim) - lead - 2
    a = a.reshape(a.shape[:lead] + (1,) * (batch - (a.ndim - lead - 2)) + a.shape[lead:])
    b = b.reshape(b.shape[:lead] + (1,) * (batch - (b.ndim - lead - 2)) + b.shape[lead:])
    out = _exact_matmul(a, b)
    if a_vec:
        out = out[..., 0, :]
    if b_vec:
        out = out[..., 0]
    return out


#: products with at least this many multiply-adds go through float64 BLAS in 16-bit limbs
LIMB_MATMUL_MIN_WORK = 1 << 22
_LIMB_BITS = 16
_LIMB_MASK = np.uint64((1 << _LIMB_BITS) - 1)


def _exact_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` modulo 2^64, through BLAS when the product is large enough to pay.

    numpy's integer matmul does not use BLAS.  Splitting each word into four 16-bit limbs, every
    limb product is below 2^32 and a dot product of n terms below n * 2^34 (four products per
    output limb), exact in float64 while n < 2^19.  The ten limb products that matter modulo
    2^64 then cost ten float64 matmuls.
    """
    inner = a.shape[-1]
    batch = math.prod(max(i, j) for i, j in zip(a.shape[:-2], b.shape[:-2]))  # same ndim here
    if inner * a.shape[-2] * b.shape[-1] * batch < LIMB_MATMUL_MIN_WORK or inner >= 1 << 19:
        return np.matmul(a, b)
    limbs_a = [((a >> np.uint64(_LIMB_BITS * i)) & _LIMB_MASK).astype(np.float64) for i in range(4)]
    limbs_b = [((b >> np.uint64(_LIMB_BITS * i)) & _LIMB_MASK).astype(np.float64) for i in range(4)]
    out = None
    for shift in range(4):
        part = sum(np.matmul(limbs_a[i], limbs_b[shift - i]) for i in range(shift + 1))
        term = part.astype(np.uint64) << np.uint64(_LIMB_BITS * shift)
        out = term if out is None else out + term
    return out


def matmul_shape(shape_a: tuple, shape_b: tuple) -> tuple:
    """The logical result shape of ``a @ b`` (raises ValueError on mismatched shapes)."""
    try:
        return np.matmul(np.empty(shape_a, dtype=np.int8), np.empty(shape_b, dtype=np.int8)).shape
    except ValueError as err:
        raise ValueError(f"matmul shapes do not match: {shape_a} @ {shape_b} ({err})") from None


def count_wraps(stack: np.ndarray, signed: bool) -> np.ndarray:
    """theta such that sum(stack) = x + theta * 2^64, per element (int64), over axis 0.

    Unsigned: shares and x are read in [0, 2^64); theta counts carries.  Signed: shares and x
    are read in [-2^63, 2^63); theta counts positive minus negative overflows.
    """
    total = np.array(stack[0])
    theta = np.zeros(total.shape, dtype=np.int64)
    for share in stack[1:]:
        theta += add_wraps(total, share, signed)
        total += share
    return theta


def add_wraps(a: np.ndarray, b: np.ndarray, signed: bool) -> np.ndarray:
    """Per-element wrap (int64 in {-1, 0, 1}) of the integer sum a + b reduced into the ring."""
    total = a + b
    if not signed:
        return (total < a).astype(np.int64)
    sa, sb, st = a.view(np.int64), b.view(np.int64), total.view(np.int64)
    positive = (sa >= 0) & (sb >= 0) & (st < 0)
    negative = (sa < 0) & (sb < 0) & (st >= 0)
    return positive.astype(np.int64) - negative.astype(np.int64)


def bits_of(words: np.ndarray) -> np.ndarray:
    """The 64 bits of each word as a trailing axis (uint64 in {0, 1}), least significant first."""
    return (words[..., None] >> np.arange(64, dtype=U64)) & ONE
