"""The product range: inputs whose product cannot wrap are accepted, and nothing else without
``wide=True``; every refusal names the input and its bound."""

import re

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.mpc.ranges import PRODUCT_BITS


@pytest.mark.parametrize("truncation", ["bounded", "exact"])
@pytest.mark.parametrize("bits", [8, 20, 30])
def test_a_product_of_two_inputs_at_the_bound_is_right(bits, truncation):
    """The largest inputs (encodings of 2^31 - 1) multiply within the ring at every precision;
    the first value above is refused, naming the input and 2^(31-L)."""
    ctx = mpc.local_context(2, seed=1, precision_bits=bits, truncation=truncation)
    ulp = 2.0**-bits
    top = (2**PRODUCT_BITS - 1) * ulp
    values = np.array([top, -top, np.round(top / 3 / ulp) * ulp, 0.5])   # exactly encoded
    x, y = ctx.share(values, owner=0), ctx.constant(-values[::-1])
    within = dict(rtol=2.0**-50, atol=1.5 * ulp)         # P/2 + 1/2 ulps, in float64
    assert np.allclose((x * y).reveal(), values * -values[::-1], **within)
    assert np.allclose((x * x).reveal(), values**2, **within)
    bound = 2.0 ** (PRODUCT_BITS - bits)
    with pytest.raises(ValueError, match=re.escape(
            f"constant is outside the product range: |v| must be < 2^{PRODUCT_BITS - bits} = "
            f"{bound:.6g} at precision_bits={bits}, got max |v| = {bound:.6g}")):
        ctx.constant([bound])


def test_the_reported_product_is_refused_where_it_would_wrap():
    """3550^2 = 12602500 wraps at L = 20 (|xy| >= 2^23); 3550 is now refused unless wide."""
    ctx = mpc.local_context(2, seed=1, precision_bits=20)
    with pytest.raises(ValueError, match=r"constant is outside the product range.*2\^11 = 2048.*"
                                         r"got max \|v\| = 3550.*wide=True"):
        ctx.constant([3550.0])
    with pytest.raises(ValueError, match=r"input of party 1 is outside the product range"):
        ctx.share(np.array([3550.0]), owner=1)
    wide = ctx.constant([3550.0], wide=True)      # the caller's responsibility now
    assert np.allclose((wide * 0.5).reveal(), 1775.0)
    with pytest.raises(ValueError, match=r"constant is outside the fixed-point range: \|v\| must "
                                         r"be < 2\^42"):
        ctx.constant([2.0**42], wide=True)


def test_integers_multiply_exactly_below_2_31():
    ctx = mpc.local_context(3, seed=2)
    top = np.array([2**31 - 1, -(2**31 - 1), 5])
    k = ctx.share(top, owner=2, frac_bits=0)
    assert (k * k).reveal().tolist() == [(2**31 - 1) ** 2] * 2 + [25]
    assert (k * (2**31 - 1)).reveal().tolist() == [(2**31 - 1) ** 2, -(2**31 - 1) ** 2,
                                                   5 * (2**31 - 1)]
    with pytest.raises(ValueError, match=r"input of party 2 is outside the product range: \|v\| "
                                         r"must be < 2\^31 = 2\.14748e\+09 for integers"):
        ctx.share(np.array([-(2**31)]), owner=2, frac_bits=0)
    with pytest.raises(ValueError, match=r"public operand is outside the product range.*"
                                         r"for integers.*times\(\.\.\., wide=True\)"):
        k * 2**31
    wide = ctx.share(np.array([2**62]), owner=0, frac_bits=0, wide=True)
    assert (wide - 2**30).reveal().tolist() == [2**62 - 2**30]
    assert (k[2:].times(2**40, wide=True)).reveal().tolist() == [5 * 2**40]


def test_public_operands_of_a_real_tensor_take_the_real_bound():
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(np.array([1.5, -2.0]), owner=0)
    inside = 2047.5
    assert np.allclose((x * inside).reveal(), [1.5 * inside, -2 * inside], atol=2**-19)
    assert np.allclose((x @ np.array([inside, 1.0])).reveal(), 1.5 * inside - 2.0, atol=2**-19)
    assert np.allclose((x + np.array([inside, -inside])).reveal(), [inside + 1.5, -inside - 2])
    assert np.allclose((x / 0.001).reveal(), [1500.0, -2000.0], atol=1e-2)
    for operation in (lambda: x * 2048.0, lambda: x * 2048, lambda: x + 2048,
                      lambda: x - np.array([0, 2048]), lambda: x @ np.array([2048.0, 0]),
                      lambda: x < 2048.0, lambda: np.array([2048.5, 0]) * x):
        with pytest.raises(ValueError, match=r"public operand is outside the product range: "
                                             r"\|v\| must be < 2\^11 = 2048 at precision_bits=20"):
            operation()
    with pytest.raises(ValueError, match=r"1 / public divisor is outside the product range"):
        x / 1e-4
    with pytest.raises(ValueError, match="public divisor must be non-zero, got 0"):
        x / np.array([1.0, 0.0])
    assert np.allclose(x.times(3000.0, wide=True).reveal(), [4500.0, -6000.0])


@pytest.mark.parametrize("bad, error, match", [
    (np.array([1 + 2j]), TypeError, "must be real, got complex"),
    (np.array([2**63], dtype=np.uint64), ValueError, r"unsigned values must be < 2\^63"),
    (np.array([np.nan]), ValueError, "NaN or inf"),
    (np.array([np.inf]), ValueError, "NaN or inf"),
])
def test_complex_unsigned_and_non_finite_values_are_refused_everywhere(bad, error, match):
    """share, constant, and every public operand: nothing is dropped, wrapped or clipped."""
    ctx = mpc.local_context(2, seed=4)
    x = ctx.share(np.array([1.0]), owner=0)
    k = ctx.share(np.array([1]), owner=0, frac_bits=0)
    frac = 0 if bad.dtype == np.uint64 else None
    attempts = [lambda: ctx.share(bad, owner=0, frac_bits=frac),
                lambda: ctx.share(bad, owner=0, frac_bits=frac, wide=True),
                lambda: ctx.constant(bad, frac), lambda: ctx.constant(bad, frac, wide=True),
                lambda: x + bad, lambda: x - bad, lambda: x * bad, lambda: x @ bad,
                lambda: k + bad, lambda: k * bad, lambda: x.times(bad, wide=True),
                lambda: x >= bad]
    for attempt in attempts:
        with pytest.raises(error, match=match):
            attempt()


def test_raw_ring_elements_must_be_words():
    ctx = mpc.local_context(2, seed=5)
    data = ctx.constant(np.zeros(2)).data
    with pytest.raises(ValueError, match="public ring elements must be integers"):
        ctx.add_public(data, np.array([0.5, 1.0]))
    with pytest.raises(TypeError, match="public ring elements must be integers, got complex"):
        ctx.add_public(data, np.array([1j, 0]))
    assert ctx.add_public(data, -1)[0].tolist() == [2**64 - 1] * 2
