"""Secret-shared tensors with numpy-like operators; every operation delegates to a protocol.

An :class:`ArithmeticShared` holds this process's shares (held-party axis first) of a value in
Z/2^64 at a fixed-point scale of ``frac_bits`` fractional bits: the context's precision L for
reals, 0 for bits and integers.  Products add scales and are truncated back to L only when the
sum exceeds L, so a bit times a real costs one round and no truncation.

Public operands: Python ints and integer arrays act at scale 0 (exact); floats are encoded at
the context's precision.  Every public operand must lie in the product range (`ppml.mpc.ranges`):
|v| < 2^(31-L) for a real or on a real tensor, |v| < 2^31 for an integer on an integer tensor;
`ArithmeticShared.times` takes a wider factor when asked.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ppml.checks import check_int, check_real, check_shape
from ppml.crypto.fixed import (RING_BITS, decode, encode_words, real_array, signed_integers,
                               to_signed)
from ppml.mpc import dealer, functions, ranges
from ppml.mpc.products import check_product_scales, products, rescaled_together
from ppml.mpc.protocols import argmax as argmax_protocol
from ppml.mpc.protocols import compare, convert, multiply
from ppml.mpc.protocols.truncate import truncate
from ppml.mpc.ring import ARITHMETIC, BINARY, matmul, matmul_shape, pad
from ppml.mpc.ring import multiply as elementwise


def _is_integer(value) -> bool:
    if isinstance(value, (bool, int, np.integer, np.bool_)):   # the common scalars, cheaply
        return True
    if isinstance(value, float):
        return False
    try:
        arr = np.asarray(value)
    except ValueError:                # ragged: `real_array` refuses it, naming the operand
        return False
    return np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_


def _axes(axis, ndim: int, name: str = "axis") -> tuple:
    """``axis`` (an int or a sequence of ints, negative from the end) as logical axes of a
    tensor with ``ndim`` axes: numpy's AxisError (a ValueError) naming ``name`` when one is out
    of range or repeated, a TypeError naming it for anything but integers."""
    try:
        return normalize_axis_tuple(axis, ndim, name)
    except TypeError:
        raise TypeError(f"{name} must be an integer or a tuple of integers, got {axis!r}") from None


def _bits(bits, name: str = "bits") -> int:
    """A shift or truncation amount in [0, 63]: a ValueError naming ``name`` otherwise."""
    return check_int(name, bits, 0, RING_BITS - 1, what="an integer")


@functools.lru_cache(maxsize=256)
def _scaled_float(value: float, frac_bits: int, bound: ranges.Limit,
                  name: str = "public operand") -> np.uint64:
    """`ranges.encode_reals` of one public real, cached: the constants of an iteration recur
    every step."""
    return ranges.encode_reals(value, frac_bits, bound, name)[()]


class ArithmeticShared:
    """Arithmetic shares of a fixed-point (or integer) array."""

    __array_ufunc__ = None  # numpy operands defer to the reflected operators below

    def __init__(self, ctx, data: np.ndarray, frac_bits: int, public: np.ndarray | None = None):
        self.ctx = ctx
        self.data = data
        self.frac_bits = int(frac_bits)
        self.public = public
        """The value, when it is a public constant (`Context.constant`): functions check their
        domain on it.  None for every other tensor, whose domain is a precondition."""

    # -- shape -------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self.data.shape[1:]

    @property
    def ndim(self) -> int:
        return self.data.ndim - 1

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d shared tensor")
        return self.shape[0]

    def _like(self, data, frac_bits=None) -> "ArithmeticShared":
        return ArithmeticShared(self.ctx, data, self.frac_bits if frac_bits is None else frac_bits)

    def __getitem__(self, index) -> "ArithmeticShared":
        index = index if isinstance(index, tuple) else (index,)
        try:
            return self._like(self.data[(slice(None),) + index])
        except IndexError:            # numpy's own error, with the logical axes
            self._logical()[index]
            raise

    def _logical(self) -> np.ndarray:
        """An array of the logical shape that holds nothing (zero strides): what numpy does to
        it gives its own errors about the logical axes, not the held-party axis too."""
        return np.broadcast_to(np.empty((), dtype=bool), self.shape)

    def reshape(self, *shape) -> "ArithmeticShared":
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        try:
            return self._like(self.data.reshape(self.data.shape[:1] + tuple(shape)))
        except (TypeError, ValueError):
            self._logical().reshape(shape)
            raise

    def transpose(self, *axes) -> "ArithmeticShared":
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = _axes(axes, self.ndim, "axes") if axes else tuple(reversed(range(self.ndim)))
        if len(axes) != self.ndim:
            raise ValueError(f"axes must be a permutation of the {self.ndim} axes, got {axes}")
        return self._like(self.data.transpose((0,) + tuple(a + 1 for a in axes)))

    @property
    def T(self) -> "ArithmeticShared":
        return self.transpose()

    def broadcast_to(self, shape) -> "ArithmeticShared":
        """The value repeated to ``shape`` by numpy's broadcasting rules (local)."""
        shape = check_shape("shape", shape)
        if shape == self.shape:
            return self
        try:
            fits = np.broadcast_shapes(self.shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"cannot broadcast a tensor of shape {self.shape} to shape {shape}")
        data = np.broadcast_to(pad(self.data, len(shape)), self.data.shape[:1] + shape)
        return self._like(np.ascontiguousarray(data))

    def sum(self, axis=None) -> "ArithmeticShared":
        axes = tuple(range(self.ndim)) if axis is None else _axes(axis, self.ndim)
        return self._like(np.sum(self.data, axis=tuple(a + 1 for a in axes), dtype=np.uint64))

    # -- scales and public operands ------------------------------------------------------------
    def at_scale(self, frac_bits: int) -> "ArithmeticShared":
        """The same value at a finer scale (a local shift; the scale never decreases here):
        ``frac_bits`` from the tensor's own scale to 63."""
        if frac_bits == self.frac_bits:
            return self
        check_int("frac_bits", frac_bits, self.frac_bits, RING_BITS - 1,
                  "at_scale never lowers the scale: truncate for that", what="an integer")
        return self._like(self.data << np.uint64(frac_bits - self.frac_bits), frac_bits)

    def _aligned(self, other: "ArithmeticShared"):
        """Both operands' data at the larger of the two scales (a local shift), with unit axes
        after the held-party axis so that the logical axes broadcast by numpy's rules."""
        frac = max(self.frac_bits, other.frac_bits)
        ndim = max(self.ndim, other.ndim)
        return pad(self.at_scale(frac).data, ndim), pad(other.at_scale(frac).data, ndim), frac

    def _rescaled(self, data: np.ndarray, frac_bits: int) -> "ArithmeticShared":
        """Truncate a product back to the context precision when its scale exceeds it."""
        check_product_scales([frac_bits])
        return rescaled_together(self, [data], [frac_bits])[0]

    def at_precision(self) -> "ArithmeticShared":
        """The value at the context precision L: truncated (one round) when its scale is above
        L, as a state or product kept at 2L is; itself otherwise."""
        return self._rescaled(self.data, self.frac_bits)

    def _limit(self, real: bool, scale: int | None = None, wide: bool = False,
               widen: str = "") -> ranges.Limit:
        """The range of a public operand (`ranges.limit`): a real's, or an integer's on an
        integer tensor; added at ``scale``, it must also fit the ring there."""
        return ranges.limit(self.ctx.precision_bits, real or self.frac_bits > 0, scale, wide,
                            widen)

    # -- linear operations (local) -------------------------------------------------------------
    def __add__(self, other):
        if isinstance(other, ArithmeticShared):
            a, b, frac = self._aligned(other)
            return self._like(a + b, frac)
        frac = self.frac_bits
        if type(other) is int:                # the common scalar (1 + e, 1 - y), cheaply
            public = ranges.encode_integer(other, frac, self._limit(False, frac), "public operand")
            return self._like(self.ctx.add_public(self.data, public))
        if _is_integer(other):
            public = ranges.encode_integers(other, self._limit(False, frac), "public operand")
            return self._like(self.ctx.add_public(self.data, public << np.uint64(frac)))
        me = self.at_scale(max(frac, self.ctx.precision_bits))
        bound = self._limit(True, me.frac_bits)
        public = _scaled_float(float(other), me.frac_bits, bound) if isinstance(other, float) \
            else ranges.encode_reals(other, me.frac_bits, bound, "public operand")
        return me._like(self.ctx.add_public(me.data, public))

    __radd__ = __add__

    def __neg__(self):
        return self._like(np.uint64(0) - self.data)

    def __sub__(self, other):
        if isinstance(other, (ArithmeticShared, int, float)):
            return self + (-other)
        if _is_integer(other):                # negated after the check: -uint64 would wrap
            return self + -signed_integers(other, "public operand")
        return self + -real_array(other, "public operand")

    def __rsub__(self, other):
        return (-self) + other

    # -- products ------------------------------------------------------------------------------
    def __mul__(self, other):
        if isinstance(other, ArithmeticShared):
            return products([(self, other)])[0]
        return self.times(other)

    __rmul__ = __mul__

    def times(self, public, wide: bool = False, name: str = "public operand"):
        """self * ``public`` for a public number or array: local for an integer (scale 1), a
        local product and one truncation round for a real (encoded at L).

        ``public`` must lie in the product range (`ppml.mpc.ranges`), so that its product with
        an input cannot wrap.  ``wide=True`` takes it in the ring's range: |v| < 2^(62-L) for a
        real or on a real tensor, the signed 64-bit range for an integer on an integer tensor;
        the caller keeps the product in the ring (|self * public| 2^frac < 2^62 for a real
        factor, which is truncated, < 2^63 for an integer).
        """
        widen = "times(..., wide=True)"
        if _is_integer(public):
            factor = ranges.encode_integers(public, self._limit(False, wide=wide, widen=widen),
                                            name)
            return self._like(pad(self.data, factor.ndim) * factor)
        with self.ctx.comm.operation("mul"):
            precision = self.ctx.precision_bits
            bound = self._limit(True, wide=wide, widen=widen)
            factor = (_scaled_float(float(public), precision, bound, name)
                      if isinstance(public, float)
                      else ranges.encode_reals(public, precision, bound, name))
            return self._rescaled(pad(self.data, factor.ndim) * factor,
                                  self.frac_bits + precision)

    def __truediv__(self, other):
        """self / other: by a shared ``other`` its reciprocal (on its default domain [1, 10]),
        by a public one the product with 1 / other, which must lie in the product range."""
        if isinstance(other, ArithmeticShared):
            return other.reciprocal(numerator=self)
        divisor = real_array(other, "public divisor")
        if not np.all(divisor):
            raise ValueError("public divisor must be non-zero, got 0")
        return self.times(1.0 / divisor, name="1 / public divisor")

    def __matmul__(self, other):
        if isinstance(other, ArithmeticShared):
            return products([(self, other)], kind="matmul")[0]
        with self.ctx.comm.operation("matmul"):
            public, frac = self._public_factor(other, self.shape, None)
            return self._rescaled(matmul(self.data, public[None]), self.frac_bits + frac)

    def __rmatmul__(self, other):
        with self.ctx.comm.operation("matmul"):
            public, frac = self._public_factor(other, None, self.shape)
            return self._rescaled(matmul(public[None], self.data), self.frac_bits + frac)

    def _public_factor(self, value, left, right):
        """A public matrix factor's ring elements and scale, in the product range, after
        checking the shapes ``left @ right`` (None: the factor's own)."""
        if _is_integer(value):
            public, frac = ranges.encode_integers(value, self._limit(False), "public operand"), 0
        else:
            frac = self.ctx.precision_bits
            public = ranges.encode_reals(value, frac, self._limit(True), "public operand")
        matmul_shape(public.shape if left is None else left,
                     public.shape if right is None else right)
        return public, frac

    def square(self) -> "ArithmeticShared":
        """self^2 with a square pair, in the rounds of a product and under its precondition
        (`products`)."""
        check_product_scales([2 * self.frac_bits])
        with self.ctx.comm.operation("square"):
            return rescaled_together(self, [multiply.square(self.ctx, self.data)],
                                     [2 * self.frac_bits])[0]

    # -- comparisons (results are shared bits at scale 1) --------------------------------------
    def _difference(self, other) -> np.ndarray:
        diff = self - other
        return diff.data

    def _bit(self, data) -> "ArithmeticShared":
        return self._like(data, 0)

    def __lt__(self, other):
        with self.ctx.comm.operation("compare"):
            return self._bit(compare.is_negative(self.ctx, self._difference(other)))

    def __gt__(self, other):
        with self.ctx.comm.operation("compare"):
            return self._bit(compare.is_negative(self.ctx, np.uint64(0) - self._difference(other)))

    def __ge__(self, other):
        return 1 - (self < other)

    def __le__(self, other):
        return 1 - (self > other)

    def __eq__(self, other):
        with self.ctx.comm.operation("compare"):
            d = self._difference(other)
            both = compare.is_negative(self.ctx, np.stack([d, np.uint64(0) - d], axis=1))
            return 1 - self._bit(both[:, 0] + both[:, 1])

    __hash__ = None

    def sign(self) -> "ArithmeticShared":
        """-1 where the value is negative, +1 elsewhere (scale 1)."""
        return 1 - 2 * (self < 0)

    def relu(self) -> "ArithmeticShared":
        """max(x, 0) = x * [x >= 0]: a comparison and one multiplication, no truncation."""
        with self.ctx.comm.operation("relu"):
            return self * (self >= 0)

    # -- functions -----------------------------------------------------------------------------
    def reciprocal(self, iterations: int | None = None, start: str | None = None,
                   domain: tuple = (1.0, 10.0), numerator=None,
                   method: str = "auto") -> "ArithmeticShared":
        """1 / self, or numerator / self, for self in ``domain`` (`ppml.mpc.functions.reciprocal`):
        ``window`` (2 rounds, 4 with a numerator), the paper's ``newton`` with its ``iterations``
        and ``start``, or ``auto`` (default: window where it fits)."""
        with self.ctx.comm.operation("reciprocal"):
            return functions.reciprocal(self, iterations, start, domain, numerator, method)

    def exp(self, method: str = "range_reduced", squarings: int | None = None,
            domain: tuple | None = None) -> "ArithmeticShared":
        """e^self (`ppml.mpc.functions.exp`): ``range_reduced`` (default; 2 rounds, fixed-point
        rounding only) for self in ``domain`` (default [-64, (62 - 2L) ln 2 - 2^(1-L)]), or the
        paper's ``limit`` with k = ``squarings`` squarings (8 by default)."""
        with self.ctx.comm.operation("exp"):
            return functions.exp(self, method, squarings, domain)

    def divide_by_power_of_two(self, bits: int) -> "ArithmeticShared":
        """x / 2^bits by the truncation protocol (Algorithm 3), the scale kept; ``bits`` in
        [0, 63]."""
        bits = _bits(bits)
        with self.ctx.comm.operation("truncate"):
            return self._like(truncate(self.ctx, self.data, bits))

    def to_binary(self) -> "BinaryShared":
        with self.ctx.comm.operation("a2b"):
            return BinaryShared(self.ctx, convert.arithmetic_to_binary(self.ctx, self.data))

    # -- output --------------------------------------------------------------------------------
    def reveal(self, to: int | None = None):
        """The plain value for every party, or only for party ``to`` (None for the others).

        Reals come back as float64; bits and integers (scale 1) as int64.
        """
        frac = self.frac_bits
        return _reveal(self.ctx, self.data, ARITHMETIC,
                       lambda v: decode(v, frac) if frac else to_signed(v).copy(), to)

    def __repr__(self) -> str:
        return f"ArithmeticShared(shape={self.shape}, frac_bits={self.frac_bits})"


class BinaryShared:
    """XOR shares of bit-packed 64-bit words."""

    __array_ufunc__ = None

    def __init__(self, ctx, data: np.ndarray):
        self.ctx = ctx
        self.data = data

    @property
    def shape(self) -> tuple:
        return self.data.shape[1:]

    def _public(self, value) -> np.ndarray:
        return encode_words(value, "public operand")

    def __xor__(self, other):
        if isinstance(other, BinaryShared):
            return BinaryShared(self.ctx, elementwise(self.data, other.data, np.bitwise_xor))
        return BinaryShared(self.ctx, self.ctx.add_public(self.data, self._public(other), BINARY))

    __rxor__ = __xor__

    def __and__(self, other):
        if isinstance(other, BinaryShared):
            with self.ctx.comm.operation("and"):
                (z,) = multiply.beaver(self.ctx, [(self.data, other.data)], BINARY)
            return BinaryShared(self.ctx, z)
        return BinaryShared(self.ctx, elementwise(self.data, self._public(other)[None],
                                                  np.bitwise_and))

    __rand__ = __and__

    def __invert__(self):
        return self ^ np.uint64(0xFFFFFFFFFFFFFFFF)

    def __lshift__(self, bits: int):
        """The words shifted left by ``bits`` in [0, 63] (local)."""
        return BinaryShared(self.ctx, self.data << np.uint64(_bits(bits)))

    def __rshift__(self, bits: int):
        """The words shifted right (logically) by ``bits`` in [0, 63] (local)."""
        return BinaryShared(self.ctx, self.data >> np.uint64(_bits(bits)))

    def to_arithmetic(self) -> ArithmeticShared:
        """Arithmetic shares (scale 1) of the words, read as signed 64-bit integers."""
        with self.ctx.comm.operation("b2a"):
            return ArithmeticShared(self.ctx, convert.binary_to_arithmetic(self.ctx, self.data), 0)

    def reveal(self, to: int | None = None):
        """The plain words (uint64) for every party, or only for party ``to``."""
        return _reveal(self.ctx, self.data, BINARY, lambda v: v, to)

    def __repr__(self) -> str:
        return f"BinaryShared(shape={self.shape})"


def _check_tensor(x, name: str = "x") -> None:
    """A TypeError naming ``name`` unless ``x`` is an `ArithmeticShared`."""
    if not isinstance(x, ArithmeticShared):
        raise TypeError(f"{name} must be an ArithmeticShared, got {type(x).__name__}")


def _common_scale(tensors: list) -> tuple:
    """The tensors' data at their common (largest) scale; a ValueError or TypeError naming
    ``tensors`` unless they are one or more `ArithmeticShared`."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("tensors must hold at least one ArithmeticShared, got none")
    for tensor in tensors:
        _check_tensor(tensor, "each of tensors")
    frac = max(t.frac_bits for t in tensors)
    return [t.at_scale(frac).data for t in tensors], frac


def concatenate(tensors: list, axis: int = 0) -> ArithmeticShared:
    """Shared tensors joined along an existing logical axis (at their common scale); local."""
    datas, frac = _common_scale(tensors)
    (at,) = _axes(axis, tensors[0].ndim)
    return ArithmeticShared(tensors[0].ctx, np.concatenate(datas, axis=at + 1), frac)


def stack(tensors: list, axis: int = 0) -> ArithmeticShared:
    """Shared tensors stacked along a new logical axis (at their common scale); local."""
    datas, frac = _common_scale(tensors)
    at = _axes(axis, tensors[0].ndim + 1)[0] + 1       # a unit axis on each, then one join
    joined = np.concatenate([d.reshape(d.shape[:at] + (1,) + d.shape[at:]) for d in datas], at)
    return ArithmeticShared(tensors[0].ctx, joined, frac)


def bernoulli(ctx, p: float, shape=()) -> ArithmeticShared:
    """Private Bernoulli(p) bits from the dealer (Hannun et al., Algorithm 1, line 8); ``p`` in
    [0, 1], ``shape`` an integer or a tuple of them."""
    material = dealer.bernoulli(check_shape("shape", shape),
                                check_real("bernoulli probability p", p, 0.0, 1.0))
    return ArithmeticShared(ctx, ctx.store.take(material)["y"], 0)


def uniform(ctx, shape=()) -> ArithmeticShared:
    """Private Uniform[0, 1) reals from the dealer (Algorithm 1, line 12); ``shape`` an integer
    or a tuple of them."""
    material = dealer.uniform(check_shape("shape", shape), ctx.precision_bits)
    return ArithmeticShared(ctx, ctx.store.take(material)["u"], ctx.precision_bits)


def _reveal(ctx, data: np.ndarray, ring, decode_value, to):
    """Open ``data`` to all parties or to party ``to`` alone, in one round."""
    if to is not None:
        ctx.comm.check_party(to, "to")
    with ctx.comm.operation("reveal"):
        opened = ctx.open([data], ring, to=to, tag="reveal")
    value = None if opened is None else decode_value(opened[0])
    if to is None:
        return value
    return ctx.per_party([value if p == to else None for p in ctx.comm.held_ranks])


def argmax(x: ArithmeticShared, method: str = "auto", ties: str = "random") -> ArithmeticShared:
    """Secret one-hot (scale 1) of the maximum over the last axis.

    ``method``: "pairwise" (Algorithm 2: fewest rounds, A^2 memory and bytes), "tournament"
    (O(A) memory and bytes, more rounds) or "auto", the default (pairwise up to
    `ppml.mpc.protocols.argmax.AUTO_CROSSOVER` = 128 arms, tournament above).
    ``ties``: "random" (uniformly, by a dealer permutation) or "first" (the lowest position).
    Precondition (docs/mpc.md, "Ranges"): |x| 2^f < 2^62 / A for "random", whose keys are
    x A + gamma (f the scale, A the values on the last axis), |x| 2^f < 2^62 for "first";
    inputs in the product range meet both.  Beyond it the comparisons of the keys wrap and the
    one-hot is wrong, possibly all zero.
    """
    _check_tensor(x)
    with x.ctx.comm.operation("argmax"):
        return ArithmeticShared(x.ctx, argmax_protocol.argmax(x.ctx, x.data, method, ties), 0)


def reveal_argmax(x: ArithmeticShared, to: int | None = None, method: str = "auto",
                  ties: str = "random"):
    """``argmax(x, method).reveal(to)`` (int64 one-hot) in one round fewer (Hannun et al.,
    Algorithm 1, lines 15-16: the argmax is opened to p' only): ``pairwise`` opens its XOR-shared
    one-hot without the B2A conversion, ``tournament`` opens the winner's index, whose one-hot
    is then made in the clear.  The precondition of :func:`argmax` holds."""
    _check_tensor(x)
    argmax_protocol.check(x.data, method, ties)
    arms = x.shape[-1]
    if arms == 1:
        data = argmax(x, method, ties).data
    else:
        with x.ctx.comm.operation("argmax"):
            data = (argmax_protocol.tournament_index(x.ctx, x.data, ties)
                    if argmax_protocol.chosen(method, arms) == "tournament"
                    else argmax_protocol.pairwise_bits(x.ctx, x.data, ties))
    return _reveal(x.ctx, data, *_one_hot_opening(arms, method), to)


def receive_argmax(ctx, shape: tuple, to: int, method: str = "auto"):
    """Client ``to``'s side of :func:`reveal_argmax` over a shared array of ``shape``: the one
    round that opens the one-hot to it, for a client that holds no shares and follows only the
    rounds it takes part in (`ppml.runtime.link_comm`); returns the one-hot."""
    argmax_protocol.check(np.zeros((0,) + tuple(shape), dtype=np.uint64), method)
    if ctx.comm.held:
        raise ValueError(f"receive_argmax is for a client that holds no shares; this process "
                         f"holds parties {ctx.comm.held}")
    arms = shape[-1]
    tournament = arms > 1 and argmax_protocol.chosen(method, arms) == "tournament"
    piece = np.zeros((0,) + tuple(shape[:-1] if tournament else shape), dtype=np.uint64)
    return ctx.value_at(_reveal(ctx, piece, *_one_hot_opening(arms, method), to), to)


def _one_hot_opening(arms: int, method: str) -> tuple:
    """(ring, decode) of the value :func:`reveal_argmax` opens: an arithmetic one-hot for one
    arm, the winner's index for ``tournament``, XOR-shared one-hot bits for ``pairwise``."""
    if arms == 1:
        return ARITHMETIC, lambda v: to_signed(v).copy()
    if argmax_protocol.chosen(method, arms) == "tournament":
        return ARITHMETIC, lambda v: np.eye(arms, dtype=np.int64)[v]
    return BINARY, lambda v: v.astype(np.int64)
