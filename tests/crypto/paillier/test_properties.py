"""Properties of `ppml.crypto.paillier` on random shapes, dtypes, values and bad inputs, under the
small seeded INSECURE key of conftest.py (512 bits, opted in with insecure_key_bits_ok).

Encodings are exact integers, so every homomorphic result must decrypt to exactly what numpy
computes on the encoded integers (docs/paillier.md); a refusal is a ValueError or TypeError
naming the parameter (`tests.strategies.assert_refused`).
"""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from ppml.crypto.paillier import (Encoding, EncryptedArray, ObfuscatorPool, PublicKey,
                                  SlotLayout, generate_keypair, pack, phe_exponent,
                                  to_phe_number)
from tests.strategies import (INT_DTYPES, NOT_NUMBERS, NUMBER_DTYPES, arrays, assert_refused,
                              complex_values, fast, given_as, non_finite, shapes)

BOUND = 2.0**20
"""Encoding's default max_abs: values |v| <= 2^20."""


@pytest.fixture(scope="module")
def shared_pool(small_key):
    """One refilling pool for every example of this module (each r^n still leaves it once)."""
    return ObfuscatorPool(small_key[0], 32)


def exact_encoding(values, shift: int) -> np.ndarray:
    """round(v 2^shift), half to even, as exact Python integers."""
    flat = [int(v) << shift if isinstance(v, (int, np.integer, np.bool_)) else
            round(float(v) * 2**shift) for v in np.asarray(values, dtype=object).ravel()]
    return np.array(flat, dtype=object).reshape(np.shape(values))


@fast(60)
@given(st.data())
def test_encode_is_exact_and_decode_correctly_rounded(data):
    """Encoding(s).encode at scale exponent k gives round(v 2^(k s)) exactly for every dtype,
    shape and form with |v| <= max_abs (integers shifted exactly), with the public bounds
    scaled the same way; decode gives m / 2^(k s) correctly rounded."""
    encoding = Encoding(data.draw(st.integers(1, 40)))
    k = data.draw(st.integers(0, 3))
    values = data.draw(arrays(shapes(), BOUND))
    encoded = encoding.encode(data.draw(given_as(values)), k)
    shift = k * encoding.scale_bits
    assert encoded.shape == values.shape and encoded.k == k
    assert encoded.ints.tolist() == exact_encoding(values, shift).tolist()
    assert all(encoded.lo <= m <= encoded.hi for m in encoded.ints.flat)
    decoded = encoding.decode(encoded.ints, k)
    assert decoded.shape == values.shape
    assert np.array_equal(decoded.ravel(), [int(m) / 2**shift for m in encoded.ints.flat])


@fast(60)
@given(st.data())
def test_encode_refuses_what_it_cannot_hold(data):
    """NaN and inf fall outside every declared bound; values beyond the bounds, complex values
    and non-numbers are refused naming the values; bad bounds, k, scale_bits and max_abs are
    refused naming them."""
    encoding = Encoding()
    shape = shapes(min_side=1)
    value, words = data.draw(st.one_of(
        non_finite(shape).map(lambda v: (v, ["outside the declared bounds"])),
        arrays(shape, 2.0**30, ("float64", "int64")).filter(
            lambda v: np.abs(v).max() > BOUND).map(lambda v: (v, ["outside the declared bounds"])),
        complex_values(shape).map(lambda v: (v, ["values", "complex"])),
        st.sampled_from(NOT_NUMBERS).map(lambda v: (v, ["values"]))))
    assert_refused(lambda: encoding.encode(value), *words)
    bounds = data.draw(st.sampled_from([(1, 0), (0,), (0, 1, 2), "ab", None, 5,
                                        (-math.inf, 0), (0, math.nan), ("0", 1)]))
    if bounds is not None:
        assert_refused(lambda: encoding.encode([0.5], bounds=bounds), "bounds")
    bad_k = st.one_of(st.integers(-9, -1), st.sampled_from([1.5, "1", None]))
    assert_refused(lambda: encoding.encode([0.5], k=data.draw(bad_k)), "k")
    assert_refused(lambda: encoding.decode([1], data.draw(bad_k)), "k")
    assert_refused(lambda: encoding.decode(data.draw(st.sampled_from(
        [[1.5], ["1"], [None], np.array([0.5])])), 1), "ints")
    assert_refused(lambda: Encoding(scale_bits=data.draw(st.one_of(
        st.integers(-9, 0), st.integers(129, 200), st.sampled_from([2.5, "32"])))), "scale_bits")
    assert_refused(lambda: Encoding(max_abs=data.draw(st.sampled_from(
        [0, -1.0, math.nan, math.inf, "1", None, True, 2**2000]))), "max_abs")


@fast(20)
@given(st.data())
def test_homomorphic_operations_match_numpy_on_the_encodings(small_key, shared_pool, data):
    """+, -, unary -, * by a plaintext, @ on either side and sum of EncryptedArrays decrypt to
    exactly numpy's result on the encoded integers, with the scale exponents added by
    products (docs/paillier.md)."""
    public_key, private_key = small_key
    encoding = Encoding()
    n = data.draw(st.integers(1, 3))
    x_values = data.draw(arrays((n,), BOUND, NUMBER_DTYPES))
    y_values = data.draw(arrays((n,), BOUND, NUMBER_DTYPES))
    x = EncryptedArray.encrypt(x_values, shared_pool, encoding)
    y = EncryptedArray.encrypt(y_values, shared_pool, encoding)
    X, Y = encoding.encode(x_values).ints, encoding.encode(y_values).ints
    c = data.draw(arrays((n,), BOUND, INT_DTYPES))
    C = encoding.encode(c).ints
    m = data.draw(arrays((2, n), BOUND, INT_DTYPES))
    M = encoding.encode(m).ints
    for got, want, k in [(x + y, X + Y, 1), (x - y, X - Y, 1), (-x, -X, 1), (x * c, X * C, 2),
                         (x @ m.T, X @ M.T, 2), (m @ x, M @ X, 2), (x.sum(), X.sum(), 1),
                         (x + c, X + C, 1)]:
        assert got.k == k
        assert np.asarray(got.decrypt_integers(private_key)).tolist() == \
            np.asarray(want, dtype=object).tolist()
    assert np.array_equal(x.decrypt(private_key), encoding.decode(X, 1))
    assert_refused(lambda: x * y, "ciphertexts", errors=(TypeError,))
    assert_refused(lambda: x.sum(axis=data.draw(st.sampled_from([1, -2, 5]))), "axis")
    assert_refused(lambda: x.decrypt_integers(data.draw(st.sampled_from([None, 5, public_key]))),
                   "key")
    assert_refused(lambda: x + data.draw(st.sampled_from(NOT_NUMBERS)), "values")


@fast(10)
@given(st.data())
def test_packed_values_unpack_exactly(small_key, shared_pool, data):
    """pack of values in [lo, hi] into slots of a layout with value_max >= hi - lo decrypts
    to the same integers (docs/paillier.md, "Packing")."""
    public_key, private_key = small_key
    lo = data.draw(st.integers(-2**40, 2**40))
    width = data.draw(st.integers(0, 2**40))
    values = data.draw(st.lists(st.integers(lo, lo + width), min_size=1, max_size=30))
    array = EncryptedArray.encrypt(np.array(values, dtype=object), shared_pool, Encoding(), k=0,
                                   bounds=(lo, lo + width))
    layout = SlotLayout.for_key(public_key, max(width, data.draw(st.integers(1, 2**50))))
    assert list(pack(array, layout).decrypt_integers(private_key)) == values


@fast(30)
@given(st.data())
def test_key_and_pool_arguments_are_checked(small_key, data):
    """A modulus that is no odd integer > 1, key sizes, pool sizes, counts and kinds, slot
    layouts and phe exponents are refused naming them (before: mpz errors, a negative n or a
    float accepted, an AttributeError, a silent empty take)."""
    public_key = small_key[0]
    assert_refused(lambda: PublicKey(data.draw(st.sampled_from(
        ["abc", 1.5, None, float(public_key.n), True])), insecure_key_bits_ok=True), "n")
    assert_refused(lambda: PublicKey(data.draw(st.sampled_from(
        [-int(public_key.n), 2**511, 0, 1, 2])), insecure_key_bits_ok=True), "n")
    assert_refused(lambda: generate_keypair(data.draw(st.sampled_from(
        [1.5, "512", 255, 2048.0, None])), insecure_key_bits_ok=True), "key_bits")
    assert_refused(lambda: generate_keypair(512, insecure_key_bits_ok=True,
                                            seed=data.draw(st.sampled_from([-1, 1.5, "1"]))),
                   "seed")
    assert_refused(lambda: ObfuscatorPool(public_key, data.draw(st.sampled_from(
        [-1, 1.5, "8", None]))), "size")
    assert_refused(lambda: ObfuscatorPool(data.draw(st.sampled_from([None, 5, small_key[1]])),
                                          0), "public_key")
    assert_refused(lambda: ObfuscatorPool(public_key, 0, on_empty="wait"), "on_empty")
    assert_refused(lambda: ObfuscatorPool(public_key, 0, obfuscator="short"), "obfuscator")
    pool = ObfuscatorPool(public_key, 2)
    assert_refused(lambda: pool.take(data.draw(st.sampled_from([-1, 1.5, "1", None]))), "count")
    assert_refused(lambda: SlotLayout(512, data.draw(st.sampled_from([0, -3, 1.5, "7"]))),
                   "value_max")
    assert_refused(lambda: phe_exponent(Encoding(), data.draw(st.sampled_from(
        [-1, 0.5, "1", None]))), "k")
    assert_refused(lambda: to_phe_number(public_key, data.draw(st.sampled_from(
        [0, -5, public_key.nsquare, "7", 2.5])), 0), "ciphertext")
    assert_refused(lambda: to_phe_number(public_key, 7, data.draw(st.sampled_from(
        [0.5, "1", None]))), "exponent")
