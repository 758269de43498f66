"""One public scale: exact round trips of reals and integers, residues, declared bounds and the
plaintext-space check."""

import math

import numpy as np
import phe
import pytest

from ppml.crypto.paillier import Encoded, Encoding, EncryptedArray, check_headroom
from ppml.crypto.paillier.encoding import from_residues, scaled, to_residues


def test_reals_round_trip_at_the_fixed_scale(encoding):
    rng = np.random.default_rng(0)  # test data, not cryptographic values
    x = np.concatenate([rng.uniform(-1e3, 1e3, 200),
                        [0.0, -0.0, 1.5, -2.25, 2.0**-32, -(2.0**-32)]])
    for k in (1, 2, 3):
        decoded = encoding.decode(encoding.encode(x, k).ints, k)
        assert np.all(np.abs(decoded - x) <= 2.0 ** -(k * 32 + 1) + np.spacing(np.abs(x)))
    dyadic = np.array([1.5, -2.25, 3.0, -(2.0**-32), 2.0**19])
    assert np.array_equal(encoding.decode(encoding.encode(dyadic).ints, 1), dyadic)


def test_encrypted_reals_round_trip_positive_and_negative(small_key, pool, encoding):
    public_key, private_key = small_key
    x = np.array([[0.0, 1.0, -1.0], [123.456789, -98765.4321, 2.0**-32]])
    encrypted = EncryptedArray.encrypt(x, pool, encoding)
    expected = encoding.decode(encoding.encode(x).ints, 1)
    assert encrypted.shape == (2, 3) and np.array_equal(encrypted.decrypt(private_key), expected)
    assert np.max(np.abs(expected - x)) <= 2.0**-33


def test_phe_reads_our_scale_as_one_fixed_exponent(small_key, pool, encoding):
    """2^-32 = 16^-8: to phe, an array at k = 1 is EncryptedNumbers that all have exponent -8,
    and phe's homomorphic sum of them is ours."""
    public_key, private_key = small_key
    phe_public = phe.PaillierPublicKey(int(public_key.n))
    phe_private = phe.PaillierPrivateKey(phe_public, int(private_key.p), int(private_key.q))
    X = EncryptedArray.encrypt([1.5, -2.25, 1e-3, -123456.789], pool, encoding)
    numbers = [phe.EncryptedNumber(phe_public, int(c), exponent=-8) for c in X.ciphertexts]
    assert [phe_private.decrypt(v) for v in numbers] == list(X.decrypt(private_key))
    assert phe_private.decrypt(sum(numbers)) == X.sum().decrypt(private_key)
    encoded = phe.EncodedNumber(phe_public, int(encoding.encode(-0.75).ints) % phe_public.n, -8)
    theirs = EncryptedArray(public_key, encoding, [phe_public.encrypt_encoded(encoded, None)
                                                   .ciphertext()], 1, X.lo, X.hi)
    assert theirs.decrypt(private_key)[0] == -0.75


def test_integers_encode_exactly_at_any_size(encoding):
    big = [2**200 + 1, -(2**200) - 1, 0, 7]
    encoded = encoding.encode(big, k=0, bounds=(-(2**201), 2**201))
    assert list(encoded.ints) == big and (encoded.lo, encoded.hi) == (-(2**201), 2**201)
    shifted = encoding.encode(np.array([3, -4], dtype=np.int64), k=1)
    assert list(shifted.ints) == [3 << 32, -4 << 32]


def test_rounding_is_half_to_even_and_exact():
    assert [scaled(v, 1) for v in (0.25, 0.75, -0.25, -0.75, 1.25)] == [0, 2, 0, -2, 2]
    assert scaled(1e300, 64) == int(1e300) << 64


def test_every_array_carries_the_same_public_metadata_whatever_its_values(pool, encoding):
    """No data-dependent exponent: arrays of different values differ only in their ciphertexts."""
    a = EncryptedArray.encrypt([0.1, 123.0], pool, encoding)
    b = EncryptedArray.encrypt([-77.7, 2.0**-30], pool, encoding)
    assert (a.k, a.lo, a.hi, a.shape) == (b.k, b.lo, b.hi, b.shape)


def test_values_outside_the_declared_bounds_are_refused(encoding):
    with pytest.raises(ValueError, match=r"outside the declared bounds \[-1.0, 1.0\]"):
        encoding.encode([0.5, 1.5], bounds=(-1.0, 1.0))
    with pytest.raises(ValueError, match=r"outside the declared bounds"):
        encoding.encode([2.0**21])
    with pytest.raises(ValueError, match=r"outside the declared bounds"):
        encoding.encode([math.nan])
    with pytest.raises(ValueError, match="lo <= hi"):
        encoding.encode([0.0], bounds=(1.0, -1.0))


def test_the_scale_is_bounded():
    with pytest.raises(ValueError, match=r"scale_bits must be an integer in \[1, 128\]"):
        Encoding(scale_bits=0)
    with pytest.raises(ValueError, match="max_abs"):
        Encoding(max_abs=math.inf)


def test_residues_decode_above_half_n_as_negative(small_key):
    n = small_key[0].n
    half = small_key[0].max_plaintext
    values = [0, 1, -1, half, -half]
    residues = to_residues(values, n)
    assert all(0 <= r < n for r in residues) and residues[2] == n - 1
    assert from_residues(residues, n) == values
    assert from_residues([half + 1], n) == [-half]


def test_the_plaintext_space_check_names_its_bound(small_key):
    public_key = small_key[0]
    check_headroom(-public_key.max_plaintext, public_key.max_plaintext, public_key, "x")
    with pytest.raises(ValueError, match=r"\(n - 1\)/2 ~ 2\^511 of this 512-bit key"):
        check_headroom(0, public_key.max_plaintext + 1, public_key, "x")
    with pytest.raises(ValueError, match="plaintext overflow: x"):
        check_headroom(-public_key.max_plaintext - 1, 0, public_key, "x")


def test_encrypting_beyond_the_plaintext_space_is_refused(small_key, pool):
    too_wide = Encoded(np.array([1], dtype=object), 0, -(2**600), 2**600)
    with pytest.raises(ValueError, match="plaintext overflow: the encrypted values"):
        EncryptedArray.encrypt(too_wide, pool, Encoding())
    with pytest.raises(ValueError, match="plaintext overflow"):
        EncryptedArray.encrypt([1.0], pool, Encoding(scale_bits=128), k=4)
