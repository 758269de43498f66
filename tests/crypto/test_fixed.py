import numpy as np
import pytest
from hypothesis import given, strategies as st

from ppml.crypto.fixed import decode, encode, encode_integers, max_abs_real, check_precision_bits


@given(st.integers(8, 32), st.floats(-1.0, 1.0), st.integers(0, 20))
def test_round_trip_error_is_half_an_ulp(bits, unit, scale):
    x = unit * min(2.0**scale, max_abs_real(bits) / 2)
    assert abs(decode(encode(x, bits), bits) - x) <= 2.0 ** -(bits + 1) * (1 + 1e-9)


@given(st.integers(8, 32), st.lists(st.floats(-100, 100), min_size=1, max_size=20),
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


@pytest.mark.parametrize("bits", [7, 33, 2.5, True])
def test_precision_bits_bounds(bits):
    with pytest.raises(ValueError, match=r"precision_bits"):
        check_precision_bits(bits)


def test_integers_must_be_integers():
    with pytest.raises(ValueError, match="integers"):
        encode_integers(np.array([0.5]))
