"""Properties of every public entry point of `ppml.mpc` on random shapes, dtypes and values.

Each call either returns the plaintext answer within the error docs/mpc.md states ("Ranges:
where each operation is exact", "Truncation", "Functions") or raises a ValueError or TypeError
naming the parameter (`tests.strategies.assert_refused`).  Answers are compared on encodings:
an input v enters as V = round(v 2^L), and a result R (revealed R / 2^L) must be within the
stated ulps (units of 2^-L) of the exact result on V.  Local runtime only.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ppml.mpc as mpc
from ppml.mpc.functions import exp_domain, exp_top, iterations_for, linear_start
from tests.strategies import (FLOAT_DTYPES, INT_DTYPES, NOT_NUMBERS, NUMBER_DTYPES, arrays,
                              assert_refused, complex_values, fast, given_as, non_finite, shapes,
                              too_large)

MODES = ("bounded", "exact", "probabilistic")


def context(draw, parties=(2, 3, 5), bits=st.integers(8, 30), modes=("bounded", "exact")):
    """A local context with a drawn number of parties, precision L and truncation mode."""
    return mpc.local_context(draw(st.sampled_from(parties)), precision_bits=draw(bits),
                             truncation=draw(st.sampled_from(modes)),
                             seed=draw(st.integers(0, 2**16)))


def encodings(values, frac_bits: int) -> np.ndarray:
    """round(v 2^frac_bits) as exact Python integers (an object array)."""
    scaled = np.rint(np.asarray(values, dtype=np.float64) * 2.0**frac_bits)
    return np.vectorize(int, otypes=[object])(scaled) if scaled.size else scaled.astype(object)


def product_ulps(ctx) -> float:
    """The error of one truncated product, in ulps: 1 (bounded), P/2 + 1/2 (exact and
    probabilistic; docs/mpc.md, "Truncation")."""
    return 1.0 if ctx.truncation == "bounded" else ctx.parties / 2 + 0.5


def assert_within(revealed, exact_at_2l, ctx, ulps: float) -> None:
    """``revealed`` (at scale 2^-L) within ``ulps`` of ``exact_at_2l`` / 2^L (exact integers or
    fractions at scale 2^-2L), beside float64's rounding of the revealed value."""
    L = ctx.precision_bits
    exact = np.broadcast_to(np.asarray(exact_at_2l, dtype=object), np.shape(revealed))
    off = encodings(revealed, L) * 2**L - exact
    for got, want in zip(np.ravel(off), np.ravel(exact)):
        assert abs(got) <= ulps * 2**L + abs(want) * 2.0**-52, \
            f"off by {float(abs(got)) / 2**L:.3g} ulps > {ulps}"


# -- inputs ------------------------------------------------------------------------------------

@fast(30)
@given(st.data())
def test_an_input_in_the_product_range_reveals_its_encoding(data):
    """share and constant: any real dtype, shape and form with |v| < 2^(31-L) reveals
    round(v 2^L) / 2^L exactly; integers (frac_bits=0) with |v| < 2^31 themselves; wide=True
    takes |v| < 2^(62-L) (docs/mpc.md, "Ranges", first row)."""
    ctx = context(data.draw, modes=("bounded",))
    L, wide = ctx.precision_bits, data.draw(st.booleans())
    integer = data.draw(st.booleans())
    bits = (63 if wide else 31) if integer else (62 if wide else 31) - L
    values = data.draw(arrays(shapes(), 2.0**bits, INT_DTYPES if integer else NUMBER_DTYPES))
    given = data.draw(given_as(values))
    frac = 0 if integer else None
    owner = data.draw(st.integers(0, ctx.parties - 1))
    for x in (ctx.share(given, owner=owner, frac_bits=frac, wide=wide),
              ctx.constant(given, frac_bits=frac, wide=wide)):
        out = x.reveal()
        assert out.shape == np.shape(values)
        if integer:
            assert out.tolist() == values.astype(object).tolist()
        else:
            assert np.array_equal(out, encodings(values, L).astype(np.float64) / 2.0**L)


def bad_inputs(shape, bound: int, integer: bool):
    """(value, error, words the message must hold) for inputs that must be refused."""
    return st.one_of(
        non_finite(shape).map(lambda v: (v, ValueError, ["NaN or inf"]) if not integer
                              else (v, ValueError, ["must be integers"])),
        complex_values(shape).map(lambda v: (v, TypeError, ["must be", "complex"])),
        too_large(shape, bound, integer).map(lambda v: (v, ValueError, ["outside"])),
        st.sampled_from(NOT_NUMBERS).map(lambda v: (v, (ValueError, TypeError), [])),
    )


@fast(80)
@given(st.data())
def test_an_input_outside_the_product_range_is_refused(data):
    """NaN, inf, complex values, values at or beyond the bound, unsigned words >= 2^63 and
    non-numbers are refused by share and constant, naming the input (docs/mpc.md, "Ranges")."""
    ctx = context(data.draw, parties=(2, 3), modes=("bounded",))
    integer, wide = data.draw(st.booleans()), data.draw(st.booleans())
    L = ctx.precision_bits
    bound = 2**((63 if wide else 31) if integer else (62 if wide else 31) - L)
    value, error, words = data.draw(bad_inputs(shapes(min_side=1), bound, integer))
    frac = 0 if integer else None
    owner = data.draw(st.integers(0, ctx.parties - 1))
    assert_refused(lambda: ctx.share(value, owner=owner, frac_bits=frac, wide=wide),
                   f"party {owner}", *words, errors=error)
    assert_refused(lambda: ctx.constant(value, frac_bits=frac, wide=wide), "constant", *words,
                   errors=error)


@fast(30)
@given(st.data())
def test_bad_input_settings_are_refused(data):
    """owner, shape and frac_bits of an input, and to of a reveal, are checked and named."""
    ctx = context(data.draw, parties=(2, 3), modes=("bounded",))
    bad_rank = st.one_of(st.integers(ctx.parties, 99), st.integers(-99, -1),
                         st.sampled_from([1.0, True, "0"]))
    assert_refused(lambda: ctx.share([1.0], owner=data.draw(bad_rank)), "owner")
    assert_refused(lambda: ctx.share([1.0], owner=None), "owner")
    assert_refused(lambda: ctx.share([1.0], owner=0, shape=data.draw(st.sampled_from(
        [(-1,), "ab", (1.5,), (True,), (2,)]))), "shape")
    bad_scale = st.one_of(st.integers(62, 200), st.integers(-99, -1),
                          st.sampled_from([1.5, "20", True]))
    assert_refused(lambda: ctx.share([1.0], owner=0, frac_bits=data.draw(bad_scale)),
                   "frac_bits")
    assert_refused(lambda: ctx.constant([1.0], frac_bits=data.draw(bad_scale)), "frac_bits")
    assert_refused(lambda: ctx.share([1.0], owner=0).reveal(to=data.draw(bad_rank)), "to")


@fast(30)
@given(parties=st.one_of(st.integers(-5, 1), st.sampled_from([2.0, "3", None, True])),
       bits=st.one_of(st.integers(-5, 7), st.integers(31, 64), st.sampled_from([20.0, None])),
       truncation=st.sampled_from(["round", "", None, 3, "Bounded"]),
       seed=st.one_of(st.integers(-9, -1), st.sampled_from([1.5, "7", True])),
       clients=st.one_of(st.integers(-9, -1), st.sampled_from([0.5, "1"])),
       secret=st.sampled_from([b"", bytes(31), "x" * 32, 32, None]))
def test_every_engine_setting_is_checked(parties, bits, truncation, seed, clients, secret):
    """local_context (EngineConfig) refuses each bad setting naming it."""
    assert_refused(lambda: mpc.local_context(parties), "parties")
    assert_refused(lambda: mpc.local_context(2, precision_bits=bits), "precision_bits")
    assert_refused(lambda: mpc.local_context(2, truncation=truncation), "truncation")
    assert_refused(lambda: mpc.local_context(2, seed=seed), "seed")
    assert_refused(lambda: mpc.local_context(2, clients=clients), "clients")
    assert_refused(lambda: mpc.local_context(2, record_views="yes"), "record_views")
    if secret is not None:
        assert_refused(lambda: mpc.local_context(2, dealer_secret=secret), "dealer_secret")


# -- public operands ---------------------------------------------------------------------------

OPERATORS = {
    "+": lambda x, c: x + c, "r+": lambda x, c: c + x, "-": lambda x, c: x - c,
    "r-": lambda x, c: c - x, "*": lambda x, c: x * c, "r*": lambda x, c: c * x,
    "<": lambda x, c: x < c, ">": lambda x, c: x > c, "<=": lambda x, c: x <= c,
    ">=": lambda x, c: x >= c, "==": lambda x, c: x == c,
}


@fast(60)
@given(st.data())
def test_a_public_operand_gives_the_plaintext_answer(data):
    """x op c for every operator, a real or integer tensor x and a public c of any dtype, form
    and broadcastable shape (also with more axes than x) in the product range: + and - are exact
    on encodings, * by a real is one truncation on a real tensor (1 ulp bounded, P/2 + 1/2
    exact) and exact otherwise, and comparisons are exact on encodings (docs/mpc.md, "Ranges",
    public operands: an integer meeting a real tensor is a real)."""
    ctx = context(data.draw, parties=(2, 3))
    L = ctx.precision_bits
    x_shape, c_shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=3, max_side=3)).input_shapes
    real_tensor, real_public = data.draw(st.booleans()), data.draw(st.booleans())
    op = data.draw(st.sampled_from(sorted(OPERATORS)))
    x_values = data.draw(arrays(x_shape, 2.0**(31 - L) if real_tensor else 2.0**31,
                                NUMBER_DTYPES if real_tensor else INT_DTYPES))
    c_values = data.draw(arrays(c_shape, 2.0**(31 - L) if real_tensor or real_public else 2.0**31,
                                FLOAT_DTYPES if real_public else ("bool",) + INT_DTYPES))
    x = ctx.share(x_values, owner=0, frac_bits=None if real_tensor else 0)
    out = OPERATORS[op](x, data.draw(given_as(c_values))).reveal()
    shape = np.broadcast_shapes(x_shape, c_shape)
    assert out.shape == shape
    fx = L if real_tensor else 0
    X, C = encodings(x_values, fx), encodings(c_values, L if real_public else 0)
    at = L if real_tensor or real_public else 0           # the scale of a sum or a difference
    left, right = X * 2**(at - fx), C if real_public else C * 2**at
    if op in ("<", ">", "<=", ">=", "=="):
        truth = {"<": left < right, ">": left > right, "<=": left <= right,
                 ">=": left >= right, "==": left == right}[op]
        assert np.array_equal(out, np.broadcast_to(truth, shape).astype(np.int64))
        return
    if op in ("*", "r*"):
        exact = X * C * 2**(2 * L - fx - (L if real_public else 0))
    else:
        exact = {"+": left + right, "r+": left + right, "-": left - right,
                 "r-": right - left}[op] * 2**(2 * L - at)
    if out.dtype == np.int64:                              # an integer result (scale 1)
        assert np.array_equal(out.astype(object) * 2**(2 * L), np.broadcast_to(exact, shape))
    else:
        truncated = real_tensor and real_public and op in ("*", "r*")
        assert_within(out, exact, ctx, product_ulps(ctx) if truncated else 0)


@fast(30)
@given(st.data())
def test_division_and_matmul_by_a_public_operand(data):
    """x / c is x times round(2^L / c) within one truncation; x @ M and M @ x truncate the
    whole sum once, so they are within one truncation of the exact sum on encodings
    (docs/mpc.md, "Ranges": public operands of / and @)."""
    ctx = context(data.draw, parties=(2, 3))
    L = ctx.precision_bits
    half = 2.0**(30 - L)                                    # n max|x| max|m| < 2^(62-2L), n <= 3
    x_values = data.draw(arrays(shapes(1, 2, 1), half))
    x = ctx.share(x_values, owner=1)
    X = encodings(x_values, L)
    c = data.draw(arrays(x_values.shape[-1:], 64.0, ("int8", "float32", "float64")).filter(
        lambda v: np.all(np.abs(v) >= 2.0**(L - 30))))
    inverse = encodings(1.0 / c.astype(np.float64), L)
    assert_within((x / c).reveal(), X * inverse, ctx, product_ulps(ctx))
    m = data.draw(arrays((x_values.shape[-1], data.draw(st.integers(1, 3))), half))
    M = encodings(m, L if m.dtype.kind == "f" else 0) * (1 if m.dtype.kind == "f" else 2**L)
    assert_within((x @ m).reveal(), X @ M, ctx, product_ulps(ctx))
    left = data.draw(arrays((2,) + x_values.shape[:1], half))
    LEFT = encodings(left, L if left.dtype.kind == "f" else 0) * (
        1 if left.dtype.kind == "f" else 2**L)
    assert_within((left @ x).reveal(), LEFT @ X, ctx, product_ulps(ctx))


def bad_operands(shape, bits: int):
    """Public operands beyond 2^``bits`` or no finite reals, with the words their refusal
    holds."""
    return st.one_of(
        non_finite(shape).map(lambda v: (v, ["NaN or inf"])),
        complex_values(shape).map(lambda v: (v, ["complex"])),
        too_large(shape, 2**bits).map(lambda v: (v, ["outside"])),
        st.sampled_from(NOT_NUMBERS).map(lambda v: (v, [])),
    )


@fast(100)
@given(st.data())
def test_a_bad_public_operand_is_refused_by_every_operator(data):
    """NaN, inf, complex values, values beyond the product range (the ring's for
    times(..., wide=True)), unsigned words >= 2^63 and non-numbers are refused by + - * @ and
    the comparisons, naming the public operand (docs/mpc.md, "Ranges")."""
    ctx = context(data.draw, parties=(2,), modes=("bounded",))
    L = ctx.precision_bits
    x = ctx.share(np.ones(2, dtype=int), owner=0, frac_bits=data.draw(st.sampled_from([None, 0])))
    op = data.draw(st.sampled_from(sorted(OPERATORS) + ["@", "r@", "times"]))
    bits = (62 - L if x.frac_bits else 63) if op == "times" else 31 - L if x.frac_bits else 31
    value, words = data.draw(bad_operands(st.just((2,)), bits))
    call = {"@": lambda: x @ value, "r@": lambda: value @ x,
            "times": lambda: x.times(value, wide=True)}.get(op, lambda: OPERATORS[op](x, value))
    assert_refused(call, "public operand", *words)


@fast(40)
@given(st.data())
def test_a_bad_public_divisor_is_refused(data):
    """x / c refuses a divisor holding NaN or 0, complex values and non-numbers, naming the
    divisor, and one whose inverse leaves the product range (|1/c| < 2^(31-L)); dividing by
    inf or by a huge value gives 0."""
    ctx = context(data.draw, parties=(2,), modes=("bounded",))
    L = ctx.precision_bits
    x = ctx.share(np.ones(2), owner=0)
    bad = data.draw(st.one_of(
        non_finite((2,)).map(lambda v: np.where(np.isinf(v), np.nan, v)),
        complex_values((2,)), st.sampled_from(NOT_NUMBERS),
        st.sampled_from([0, 0.0, -0.0, [1.0, 0.0], np.zeros(2, dtype=np.uint8)])))
    assert_refused(lambda: x / bad, "public divisor")
    small = data.draw(st.floats(2.0**(L - 60), 2.0**(L - 31)))
    assert_refused(lambda: x / small, "1 / public divisor", "outside")
    huge = data.draw(st.sampled_from([np.inf, -np.inf, 1e300, 2**70, np.uint64(2**63)]))
    assert np.array_equal((x / huge).reveal(), [0.0, 0.0])


# -- shared operands ---------------------------------------------------------------------------

@fast(30)
@given(st.data())
def test_products_of_shared_inputs_are_within_one_truncation(data):
    """x * y, x.square(), x @ y and mpc.products of shared inputs in the product range: within
    1 ulp (bounded) or P/2 + 1/2 ulps (exact, probabilistic) of the exact product of encodings
    (docs/mpc.md, "Ranges", products; "Truncation").  The probabilistic mode fails with
    probability |xy| 2^(2L-64): its inputs here keep that below 2^-30."""
    ctx = context(data.draw, modes=MODES)
    L = ctx.precision_bits
    bound = 2.0**(31 - L) if ctx.truncation != "probabilistic" else 2.0**(16 - L)
    shape_a, shape_b = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=3)).input_shapes
    a, b = data.draw(arrays(shape_a, bound)), data.draw(arrays(shape_b, bound))
    x, y = ctx.share(a, owner=0), ctx.share(b, owner=ctx.parties - 1)
    A, B = encodings(a, L), encodings(b, L)
    ulps = product_ulps(ctx)
    assert_within((x * y).reveal(), A * B, ctx, ulps)
    assert_within(x.square().reveal(), A * A, ctx, ulps)
    n = data.draw(st.integers(1, 3))
    m = data.draw(arrays((2, n), bound / 2))
    v = data.draw(arrays((n,), bound / 2))
    mm, vv = ctx.share(m, owner=1), ctx.share(v, owner=0)
    products = mpc.products([(mm, vv), (x, y)], kind=["matmul", "mul"])
    assert_within(products[0].reveal(), encodings(m, L) @ encodings(v, L), ctx, ulps)
    assert_within(products[1].reveal(), A * B, ctx, ulps)
    wide = mpc.products([(x, y)], keep_scale=True)[0]
    assert wide.frac_bits == 2 * L
    exact = np.broadcast_to(A * B, wide.shape).astype(np.float64) / 2.0**(2 * L)
    assert np.all(np.abs(wide.reveal() - exact) <= np.abs(exact) * 2.0**-52)


@fast(20)
@given(st.data())
def test_comparisons_of_shared_inputs_are_exact(data):
    """<, >, <=, >=, ==, sign and relu of shared inputs are exact on encodings
    (docs/mpc.md, "Ranges": |x - y| 2^f < 2^63)."""
    ctx = context(data.draw, parties=(2, 3))
    L = ctx.precision_bits
    shape = data.draw(shapes(0, 2, 1))
    a = data.draw(arrays(shape, 2.0**(31 - L)))
    b = data.draw(st.one_of(arrays(shape, 2.0**(31 - L)), st.just(a)))
    x, y = ctx.share(a, owner=0), ctx.share(b, owner=1)
    A, B = encodings(a, L), encodings(b, L)
    for got, truth in [(x < y, A < B), (x > y, A > B), (x <= y, A <= B), (x >= y, A >= B),
                       (x == y, A == B), (x.sign(), np.where(A < 0, -1, 1))]:
        assert np.array_equal(got.reveal(), np.asarray(truth).astype(np.int64))
    assert np.array_equal(encodings(x.relu().reveal(), L), np.where(A > 0, A, 0))


@fast(30)
@given(st.data())
def test_argmax_is_a_one_hot_of_a_maximum(data):
    """argmax and reveal_argmax, every method and ties rule: a one-hot of a maximum of the
    encodings; ties="first" picks the first (docs/mpc.md, "Ranges": inputs meet the keys'
    bound)."""
    ctx = context(data.draw, parties=(2, 3))
    L = ctx.precision_bits
    shape = data.draw(shapes(1, 2, 1, 4))
    values = data.draw(arrays(shape, 2.0**(31 - L), ("float64", "int8", "bool")))
    method = data.draw(st.sampled_from(["pairwise", "tournament", "auto"]))
    ties = data.draw(st.sampled_from(["random", "first"]))
    x = ctx.share(values, owner=0)
    X = encodings(values, L).astype(np.float64)
    to = data.draw(st.integers(0, ctx.parties - 1))
    for onehot in (mpc.argmax(x, method, ties).reveal(),
                   ctx.value_at(mpc.reveal_argmax(x, to=to, method=method, ties=ties), to)):
        assert onehot.shape == shape and np.all(onehot.sum(axis=-1) == 1)
        assert np.all(np.where(onehot == 1, X, -np.inf).max(axis=-1) == X.max(axis=-1))
        if ties == "first":
            assert np.array_equal(onehot.argmax(axis=-1), X.argmax(axis=-1))


@fast(30)
@given(st.data())
def test_bad_arguments_of_argmax_and_products_are_refused(data):
    """argmax's method, ties and operand, and products' pairs, are checked and named."""
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(np.ones((2, 3)), owner=0)
    word = data.draw(st.sampled_from(["", "Pairwise", "max", None, 1]))
    assert_refused(lambda: mpc.argmax(x, method=word), "method")
    assert_refused(lambda: mpc.argmax(x, ties=word), "ties")
    assert_refused(lambda: mpc.reveal_argmax(x, method=word), "method")
    plain = data.draw(st.sampled_from([np.ones((2, 3)), [1.0, 2.0], 3.0, None]))
    assert_refused(lambda: mpc.argmax(plain), "x")
    assert_refused(lambda: mpc.reveal_argmax(plain), "x")
    assert_refused(lambda: mpc.argmax(ctx.share(np.ones((2, 0)), owner=0)), "last axis")
    pairs = data.draw(st.sampled_from([[], (), [(x,)], [(x, plain)], [(plain, x)], None]))
    assert_refused(lambda: mpc.products(pairs), "pairs")


# -- functions -----------------------------------------------------------------------------------

@fast(25)
@given(st.data())
def test_reciprocal_and_quotient_on_the_default_domain(data):
    """1/x for x in [1, 10] at L = 20: relative error below 3.5e-5; n/x with a shared n in the
    same rounds: within |n| / x times that error plus one truncation per iterate n y_k
    (docs/mpc.md, "Ranges", reciprocal)."""
    ctx = context(data.draw, bits=st.just(20))
    a = data.draw(arrays(shapes(0, 2), 10.0, ("float64",)).map(lambda v: 1 + np.abs(v) * 0.9))
    n = data.draw(arrays(a.shape, 2.0**10))
    x = ctx.share(a, owner=0)
    a = encodings(a, 20).astype(np.float64) / 2**20
    assert np.all(np.abs(x.reciprocal().reveal() * a - 1) < 3.5e-5)
    quotient = x.reciprocal(numerator=ctx.share(n, owner=1)).reveal()
    n = encodings(n, 20).astype(np.float64) / 2**20
    truncations = iterations_for(linear_start((1.0, 10.0))[2], 20) + 1
    assert np.all(np.abs(quotient - n / a) <= 3.5e-5 * np.abs(n) / a
                  + truncations * product_ulps(ctx) * 2.0**-20)


@fast(40)
@given(st.data())
def test_exp_within_its_stated_error(data):
    """e^x with k squarings for x in [-2^k, (62 - 2L) ln 2] and L >= k + 8: error at most
    max(1, e^x) (x^2 / 2^(k+1) + (P + 1) 2^(k-L)) (docs/mpc.md, "Ranges", exp)."""
    ctx = context(data.draw, bits=st.integers(8, 30))
    L, P = ctx.precision_bits, ctx.parties
    k = data.draw(st.integers(0, min(L - 8, 10)))
    low, high = exp_domain(k, L)
    inputs = 2.0**(31 - L) * (1 - 2.0**-20)                # the product range
    a = data.draw(hnp.arrays(np.float64, data.draw(shapes(0, 2)),
                             elements=st.floats(max(low, -inputs), min(high, inputs))))
    a = encodings(a, L).astype(np.float64) / 2**L
    out = ctx.share(a, owner=0).exp("limit", squarings=k).reveal()
    bound = np.maximum(1, np.exp(a)) * (a**2 / 2**(k + 1) + (P + 1) * 2.0**(k - L))
    assert np.all(np.abs(out - np.exp(a)) <= bound)


@fast(40)
@given(st.data())
def test_range_reduced_exp_within_its_stated_error(data):
    """The range-reduced e^x for x in its domain [low, high], any P, L and truncation mode:
    within 2^-L (1.4 e^x + P/2 + 1) (docs/mpc.md, "Ranges", exp), in 2 rounds (bounded)."""
    ctx = context(data.draw, bits=st.integers(8, 30))
    L, P = ctx.precision_bits, ctx.parties
    top = exp_top(L)
    low = data.draw(st.floats(-512, top - 1))
    high = data.draw(st.floats(low + 2**-6, top))
    a = data.draw(hnp.arrays(np.float64, data.draw(shapes(0, 2)), elements=st.floats(low, high)))
    a = np.clip(encodings(a, L).astype(np.float64),                      # on the lattice
                math.ceil(low * 2**L), math.floor(high * 2**L)) / 2**L
    x = ctx.share(a, owner=0, wide=True)
    before = ctx.comm.stats[0].rounds
    y = x.exp(domain=(low, high))
    assert ctx.truncation != "bounded" or ctx.comm.stats[0].rounds - before == 2
    bound = 2.0**-L * (1.4 * np.exp(a) + P / 2 + 1)
    assert np.all(np.abs(y.reveal() - np.exp(a)) <= bound)


@fast(40)
@given(st.data())
def test_bad_function_arguments_are_refused(data):
    """reciprocal's domain, method, start, iterations and numerator, exp's squarings, and a public
    constant outside a function's domain, are refused naming them (docs/mpc.md, "Ranges")."""
    ctx = context(data.draw, parties=(2,), bits=st.integers(8, 30), modes=("bounded",))
    L = ctx.precision_bits
    x = ctx.share(np.ones(2), owner=0)
    domain = data.draw(st.one_of(
        st.sampled_from([(1,), (1, 2, 3), None, "ab", (2, 1), (0, 1), (-1, 1), (1, math.inf),
                         (math.nan, 1), (1, math.nan), 5])))
    assert_refused(lambda: x.reciprocal(domain=domain), "domain")
    tiny = 2.0**(2 * L - 62) / 4
    assert_refused(lambda: x.reciprocal(domain=(tiny, 1.0)), "domain")
    assert_refused(lambda: x.reciprocal(domain=(tiny, 1.0), method="newton"), "domain")
    assert_refused(lambda: x.reciprocal(start=data.draw(st.sampled_from(["", "Linear", 1])),
                                        method="newton"), "start")
    bad_count = st.one_of(st.integers(-9, -1), st.sampled_from([1.5, "3", True]))
    assert_refused(lambda: x.reciprocal(iterations=data.draw(bad_count), method="newton"),
                   "iterations")
    assert_refused(lambda: x.reciprocal(method=data.draw(st.sampled_from(["", "Newton", 2]))),
                   "method")
    assert_refused(lambda: x.reciprocal(domain=(1.0, 2.0**20), method="window"), "domain",
                   "newton")
    assert_refused(lambda: x.exp("limit", squarings=data.draw(bad_count)), "squarings")
    assert_refused(lambda: x.exp("limit", squarings=L - 7), "squarings", "precision_bits")
    assert_refused(lambda: x.exp(squarings=8), "squarings", "limit")
    assert_refused(lambda: x.exp(method=data.draw(st.sampled_from(["", "Limit", 8]))), "method")
    assert_refused(lambda: x.exp(domain=data.draw(st.sampled_from(
        [(1,), 5, "ab", (2, 1), (-600, 0), (0, exp_top(L) + 1e-3), (math.nan, 1)]))),
        "domain")
    numerator = data.draw(st.sampled_from([np.ones(2), 2.0, [1, 2], ctx.share(np.ones(3),
                                                                               owner=1)]))
    assert_refused(lambda: x.reciprocal(numerator=numerator), "numerator")
    if L <= 27:                                            # 11 in the product range
        outside = data.draw(st.sampled_from([0.0, -1.0, 0.5, 11.0]))
        assert_refused(lambda: ctx.constant([outside, 1.0]).reciprocal(), "domain")
    if L >= 16:
        high = exp_domain(8, L)[1]
        if high + 1 < 2.0**(31 - L):
            assert_refused(lambda: ctx.constant([high + 1]).exp(), "exp", "domain")


# -- shapes, scales and the binary ring ------------------------------------------------------------

@fast(60)
@given(st.data())
def test_shape_operations_follow_numpy(data):
    """sum, transpose, reshape, indexing, broadcast_to, concatenate and stack give numpy's
    answer on the revealed values, and an axis out of range is refused naming it (it used to
    wrap around silently); bad shapes get numpy's errors about the logical shapes (they spoke
    of the held-party axis too)."""
    ctx = mpc.local_context(2, seed=data.draw(st.integers(0, 99)))
    values = data.draw(arrays(shapes(0, 3, 1), 2.0**10, ("int16",)))
    x = ctx.share(values, owner=0, frac_bits=0)
    ndim = values.ndim
    axis = data.draw(st.integers(-ndim - 2, ndim + 1))
    if -ndim <= axis < ndim:
        assert np.array_equal(x.sum(axis=axis).reveal(), values.sum(axis=axis))
        assert np.array_equal(mpc.concatenate([x, x], axis=axis).reveal(),
                              np.concatenate([values, values], axis=axis))
    else:
        assert_refused(lambda: x.sum(axis=axis), "axis")
        assert_refused(lambda: mpc.concatenate([x, x], axis=axis), "axis")
    if -ndim - 1 <= axis <= ndim:
        assert np.array_equal(mpc.stack([x, x], axis=axis).reveal(),
                              np.stack([values, values], axis=axis))
    else:
        assert_refused(lambda: mpc.stack([x, x], axis=axis), "axis")
    assert np.array_equal(x.sum().reveal(), values.sum())
    order = data.draw(st.permutations(range(ndim)))
    assert np.array_equal(x.transpose(*order).reveal(), values.transpose(order))
    assert np.array_equal(x.T.reveal(), values.T)
    assert_refused(lambda: x.transpose(*(list(order[:-1]) + [ndim + 1])), "axes")
    assert np.array_equal(x.reshape(-1).reveal(), values.reshape(-1))
    bad_shape = (values.size + 1,)                          # numpy's error, on logical sizes
    assert_refused(lambda: x.reshape(bad_shape), f"size {values.size}", f"{bad_shape}")
    if ndim and values.shape[-1] > 1:                       # a last axis that cannot grow
        wider = values.shape[:-1] + (values.shape[-1] + 1,)
        assert_refused(lambda: x.broadcast_to(wider), "broadcast", f"{wider}")
    index = data.draw(hnp.basic_indices(values.shape, allow_newaxis=True))
    assert np.array_equal(x[index].reveal(), values[index])
    target = data.draw(hnp.broadcastable_shapes(values.shape, max_dims=3).map(
        lambda s: np.broadcast_shapes(s, values.shape)))
    assert np.array_equal(x.broadcast_to(target).reveal(), np.broadcast_to(values, target))
    if ndim:
        assert len(x) == len(values)
    else:
        assert_refused(lambda: len(x), "len")
    assert_refused(lambda: mpc.concatenate([]), "tensors")
    assert_refused(lambda: mpc.stack([x, values]), "tensors")


@fast(30)
@given(st.data())
def test_scales_and_power_of_two_divisions(data):
    """at_scale keeps the value at any finer scale up to 63 and refuses a coarser one;
    divide_by_power_of_two(k), k in [0, 63], is within 1 ulp (bounded) or P/2 + 1/2 ulps of
    x / 2^k (docs/mpc.md, "Ranges", truncation)."""
    ctx = context(data.draw, parties=(2, 3))
    L = ctx.precision_bits
    values = data.draw(arrays(shapes(0, 2), 2.0**(31 - L)))
    x = ctx.share(values, owner=0)
    X = encodings(values, L)
    finer = data.draw(st.integers(L, 2 * L))
    assert np.array_equal(encodings(x.at_scale(finer).reveal(), finer), X * 2**(finer - L))
    bad_scale = st.one_of(st.integers(0, L - 1), st.integers(64, 99),
                          st.sampled_from([20.5, "40"]))
    assert_refused(lambda: x.at_scale(data.draw(bad_scale)), "frac_bits")
    k = data.draw(st.integers(0, 63))
    assert_within(x.divide_by_power_of_two(k).reveal(), X * Fraction(2**L, 2**k), ctx,
                  0 if k == 0 else product_ulps(ctx))
    bad_bits = st.one_of(st.integers(64, 99), st.integers(-9, -1), st.sampled_from([2.0, "2"]))
    assert_refused(lambda: x.divide_by_power_of_two(data.draw(bad_bits)), "bits")


@fast(40)
@given(st.data())
def test_the_binary_ring_follows_numpy_words(data):
    """share_binary, ^, &, ~, << and >> give numpy's uint64 words (also for a public operand
    with more axes), to_arithmetic reads them as signed integers and to_binary gives the words
    of a shared value; a shift outside [0, 63] is refused naming bits (it wrapped or rounded)."""
    ctx = context(data.draw, parties=(2, 3), bits=st.just(20))
    shape_a, shape_b = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=3)).input_shapes
    words = data.draw(hnp.arrays(np.uint64, shape_a))
    other = data.draw(hnp.arrays(np.uint64, shape_b))
    b = ctx.share_binary(words, owner=0)
    c = ctx.share_binary(other, owner=1)
    shift = data.draw(st.integers(0, 63))
    checks = [(b ^ c, words ^ other), (b & c, words & other), (b ^ other, words ^ other),
              (b & other, words & other), (~b, ~words), (b << shift, words << np.uint64(shift)),
              (b >> shift, words >> np.uint64(shift))]
    for got, want in checks:
        assert np.array_equal(got.reveal(), np.broadcast_to(want, got.shape))
    assert np.array_equal(b.to_arithmetic().reveal(), words.view(np.int64))
    values = data.draw(arrays(shape_a, 2.0**31, INT_DTYPES))
    ints = ctx.share(values, owner=1, frac_bits=0)
    assert np.array_equal(ints.to_binary().reveal(), values.astype(np.int64).view(np.uint64))
    bad = st.one_of(st.integers(64, 99), st.integers(-9, -1), st.sampled_from([1.5, "1"]))
    assert_refused(lambda: b << data.draw(bad), "bits")
    assert_refused(lambda: b >> data.draw(bad), "bits")
    assert_refused(lambda: ctx.share_binary(data.draw(st.sampled_from(
        [np.ones(2), [0.5], "1", None, np.array([1j])])), owner=0), "party 0")


@fast(30)
@given(st.data())
def test_dealer_draws(data):
    """bernoulli gives bits, all ones at p = 1 and zeros at p = 0; uniform gives reals in
    [0, 1); a bad p or shape is refused naming it."""
    ctx = context(data.draw, parties=(2, 3))
    shape = data.draw(shapes(0, 2).map(lambda s: s if data.draw(st.booleans()) or len(s) != 1
                                       else s[0]))
    p = data.draw(st.floats(0, 1))
    bits = mpc.bernoulli(ctx, p, shape).reveal()
    assert bits.shape == np.empty(shape).shape and set(np.unique(bits)) <= {0, 1}
    assert np.all(mpc.bernoulli(ctx, 1, shape).reveal() == 1)
    assert np.all(mpc.bernoulli(ctx, 0.0, shape).reveal() == 0)
    u = mpc.uniform(ctx, shape).reveal()
    assert u.shape == np.empty(shape).shape and np.all((0 <= u) & (u < 1))
    bad_p = st.one_of(st.floats(1, 9, exclude_min=True), st.floats(-9, 0, exclude_max=True),
                      st.sampled_from([math.nan, math.inf, "0.5", None, True]))
    assert_refused(lambda: mpc.bernoulli(ctx, data.draw(bad_p), (2,)), "p")
    bad_shape = st.sampled_from([-1, (-1,), (1.5,), "ab", None, (True, 2)])
    assert_refused(lambda: mpc.bernoulli(ctx, 0.5, data.draw(bad_shape)), "shape")
    assert_refused(lambda: mpc.uniform(ctx, data.draw(bad_shape)), "shape")


def test_the_properties_cover_every_public_name():
    """A new public name of ppml.mpc needs a property here."""
    covered = {"argmax", "reveal_argmax", "receive_argmax", "bernoulli", "uniform",
               "concatenate", "products", "stack", "local_context", "Context", "EngineConfig",
               "PerParty", "ArithmeticShared", "BinaryShared"}
    assert set(mpc.__all__) == covered


@pytest.mark.parametrize("shape, method", [((3,), "auto"), ((2, 200), "auto"),
                                           ((4,), "tournament")])
def test_receive_argmax_refuses_a_process_holding_shares(shape, method):
    """receive_argmax is a client's side alone; it names what it is for, and checks method."""
    ctx = mpc.local_context(2, seed=1)
    assert_refused(lambda: mpc.receive_argmax(ctx, shape, to=0, method=method), "client")
    assert_refused(lambda: mpc.receive_argmax(ctx, shape, to=0, method="x"), "method")
