import numpy as np
import pytest
from hypothesis import given, strategies as st

from ppml.crypto.fixed import (MAX_PRECISION_BITS, MIN_PRECISION_BITS, check_precision_bits,
                               decode, encode, encode_integers, encode_words, max_abs_real)


@given(st.integers(MIN_PRECISION_BITS, MAX_PRECISION_BITS), st.floats(-1.0, 1.0), st.integers(0, 20))
def test_round_trip_error_is_half_an_ulp(bits, unit, scale):
    x = unit * min(2.0**scale, max_abs_real(bits) / 2)
    assert abs(decode(encode(x, bits), bits) - x) <= 2.0 ** -(bits + 1) * (1 + 1e-9)


@given(st.integers(MIN_PRECISION_BITS, MAX_PRECISION_BITS), st.lists(st.floats(-100, 100), min_size=1, max_size=20),
       st.lists(st.floats(-100, 100), min_size=1, max_size=20))
def test_ring_addition_is_real_addition(bits, xs, ys):
    n = min(len(xs), len(ys))
    x, y = np.array(xs[:n]), np.array(ys[:n])
    total = decode(encode(x, bits) + encode(y, bits), bits)
    assert np.allclose(total, x + y, atol=2.0 ** -bits)


@given(st.integers(-(2**62), 2**62), st.integers(-(2**62), 2**62))
def test_uint64_wraps_like_signed_ring(a, b):
    ring = encode_integers(np.array([a])) + encode_integers(np.array([b]))
    expected = (a + b + 2**63) % 2**64 - 2**63
    assert int(ring.view(np.int64)[0]) == expected


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused(bad):
    with pytest.raises(ValueError, match="NaN or inf"):
        encode(np.array([0.0, bad]), 20, name="features")


def test_out_of_range_names_the_bound():
    with pytest.raises(ValueError, match=r"features .*2\^42"):
        encode([2.0**42], 20, name="features")
    encode([2.0**42 - 1], 20)


@pytest.mark.parametrize("bits", [7, 31, 32, 2.5, True])
def test_precision_bits_bounds(bits):
    """30 is the largest L at which a product (scale 2L <= 61) fits the ring."""
    with pytest.raises(ValueError, match=r"precision_bits must be an integer in \[8, 30\]"):
        check_precision_bits(bits)
    assert check_precision_bits(30) == 30


def test_integers_must_be_integers():
    with pytest.raises(ValueError, match="integers"):
        encode_integers(np.array([0.5]))


def test_complex_values_are_refused_not_truncated():
    with pytest.raises(TypeError, match="features must be real, got complex"):
        encode(np.array([1 + 2j]), 20, name="features")
    with pytest.raises(TypeError, match="counts must be integers, got complex"):
        encode_integers(np.array([1 + 0j]), name="counts")


def test_unsigned_integers_at_or_above_2_63_are_refused():
    top = np.array([2**63 - 1, 2**63], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"counts is outside the signed 64-bit range: unsigned "
                                         r"values must be < 2\^63"):
        encode_integers(top, name="counts")
    assert encode_integers(top[:1]).view(np.int64).tolist() == [2**63 - 1]
    with pytest.raises(ValueError, match=r"counts is outside the signed 64-bit range"):
        encode_integers([2**64 + 1], name="counts")         # a Python int beyond 64 bits
    assert encode_integers(np.array([-5, 2**62], dtype=object)).view(np.int64).tolist() == \
        [-5, 2**62]


def test_words_take_every_uint64_and_signed_integers():
    assert encode_words(np.array([2**64 - 1], dtype=np.uint64)).tolist() == [2**64 - 1]
    assert encode_words([-1]).tolist() == [2**64 - 1]
    with pytest.raises(ValueError, match="integers"):
        encode_words([0.5])
