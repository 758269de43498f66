"""EncryptedArray: homomorphic sums and products equal numpy's exactly at the integer level;
scale exponents add; bounds propagate and overflow raises before anything wraps."""

import pickle

import numpy as np
import pytest

from ppml.crypto.paillier import (Encoded, Encoding, EncryptedArray, ObfuscatorPool, SlotLayout,
                                  pack)

BOUND = 2**40


@pytest.fixture
def integers(encoding):
    """encode(values) at scale exponent 0 within +-BOUND (exact integers)."""
    return lambda values: encoding.encode(np.asarray(values, dtype=object), k=0,
                                          bounds=(-BOUND, BOUND))


@pytest.fixture
def data():
    rng = np.random.default_rng(1)  # test data, not cryptographic values
    return {"x": rng.integers(-BOUND, BOUND, 5), "y": rng.integers(-BOUND, BOUND, 5),
            "M": rng.integers(-BOUND, BOUND, (3, 5)), "w": rng.integers(-BOUND, BOUND, 5)}


def exact(a):
    return np.asarray(a, dtype=object)


def test_sums_and_products_match_numpy_exactly(small_key, pool, integers, data):
    _, private_key = small_key
    x, y, w = (exact(data[name]) for name in "xyw")
    X = EncryptedArray.encrypt(integers(x), pool, Encoding())
    Y = EncryptedArray.encrypt(integers(y), pool, Encoding())
    cases = {
        "x + y": (X + Y, x + y), "x - y": (X - Y, x - y), "-x": (-X, -x),
        "x + w": (X + integers(w), x + w), "w - x": (integers(w) - X, w - x),
        "x * w (signed scalars)": (X * integers(w), x * w),
        "sum": (X.sum(), x.sum()), "x . w": (X @ integers(w), x @ w),
        "w . x": (integers(w) @ X, w @ x),
    }
    for name, (encrypted, expected) in cases.items():
        assert np.array_equal(encrypted.decrypt_integers(private_key), exact(expected)), name


def test_matrix_products_match_numpy_exactly(small_key, pool, integers, data):
    _, private_key = small_key
    x, M, w = exact(data["x"]), exact(data["M"]), exact(data["w"])
    X = EncryptedArray.encrypt(integers(x), pool, Encoding())
    EM = EncryptedArray.encrypt(integers(M), pool, Encoding())
    cases = {
        "M @ enc x": (integers(M) @ X, M @ x),
        "enc M @ w": (EM @ integers(w), M @ w),
        "w3 @ enc M": (integers(w[:3]) @ EM, w[:3] @ M),
        "enc x @ M.T": (X @ integers(M.T), x @ M.T),
        "enc M @ M.T": (EM @ integers(M.T), M @ M.T),
        "M.T.T @ enc M.T": (integers(M) @ EncryptedArray.encrypt(integers(M.T), pool, Encoding()),
                            M @ M.T),
        "sum axis 0": (EM.sum(axis=0), M.sum(axis=0)),
        "sum axis 1": (EM.sum(axis=1), M.sum(axis=1)),
        "broadcast product": (EM * integers(w), M * w),
        "permutation": (X[[4, 2, 0, 1, 3]], x[[4, 2, 0, 1, 3]]),
    }
    for name, (encrypted, expected) in cases.items():
        assert encrypted.shape == expected.shape, name
        assert np.array_equal(encrypted.decrypt_integers(private_key), expected), name


def test_real_products_carry_scale_exponents_and_decode(small_key, pool, encoding):
    _, private_key = small_key
    theta, A_inv, arms = np.array([0.5, -1.25]), np.array([[2.0, -0.5], [0.25, 1.0]]), \
        np.array([[1.0, 0.0], [-0.5, 0.75], [0.125, -2.0]])
    T = EncryptedArray.encrypt(theta, pool, encoding)
    theta_hat = A_inv @ T
    scores = theta_hat.rmatmul(arms)
    assert (T.k, theta_hat.k, scores.k) == (1, 2, 3)
    assert np.array_equal(scores.decrypt(private_key), arms @ (A_inv @ theta))
    ints = {name: encoding.encode(v).ints for name, v in (("arms", arms), ("A_inv", A_inv),
                                                           ("theta", theta))}
    expected = ints["arms"] @ (ints["A_inv"] @ ints["theta"])
    assert np.array_equal(scores.decrypt_integers(private_key), expected)


def test_bounds_propagate_from_declared_bounds_only(pool, encoding):
    X = EncryptedArray.encrypt([1.0, 2.0, 3.0], pool, encoding, bounds=(-4.0, 4.0))
    four = 4 << 32
    assert (X.lo, X.hi) == (-four, four)
    assert ((X + X).lo, (X + X).hi) == (-2 * four, 2 * four)
    weights = encoding.encode([1.0, -1.0, 0.5], bounds=(-2.0, 2.0))
    assert ((X @ weights).lo, (X @ weights).hi) == (-3 * four * (2 << 32), 3 * four * (2 << 32))
    assert (X.sum().lo, X.sum().hi) == (-3 * four, 3 * four)


def test_overflow_raises_before_wrapping(small_key, pool, encoding):
    X = EncryptedArray.encrypt([1.0], pool, encoding)
    product = X
    with pytest.raises(ValueError, match=r"plaintext overflow: a product may reach .* 2\^511"):
        for _ in range(10):
            product = product * [3.0]
    assert product.k < 10
    limit = small_key[0].max_plaintext
    one = np.array([1], dtype=object)
    half = EncryptedArray.encrypt(Encoded(one, 0, -(limit // 2), limit // 2), pool, encoding)
    assert (half + half).decrypt_integers(small_key[1])[0] == 2
    wide = EncryptedArray.encrypt(Encoded(one, 0, -limit, limit), pool, encoding)
    with pytest.raises(ValueError, match="plaintext overflow: a sum"):
        wide + wide
    with pytest.raises(ValueError, match="plaintext overflow: a dot product"):
        wide @ np.array([1.0])


def test_mismatched_operands_are_refused(small_key, key_1024, pool, encoding):
    X = EncryptedArray.encrypt([1.0, 2.0], pool, encoding)
    with pytest.raises(ValueError, match="scale exponent 2 to values at scale exponent 1"):
        X + X * [1.0, 1.0]
    with pytest.raises(TypeError, match="cannot multiply two ciphertexts"):
        X * X
    other = EncryptedArray.encrypt([1.0, 2.0], ObfuscatorPool(key_1024[0], 2), encoding)
    with pytest.raises(ValueError, match="different keys or encodings"):
        X + other
    with pytest.raises(ValueError, match=r"this private key is for PublicKey\(1024 bits, n=0x"
                                         r"[0-9a-f]{8}\.\.\.\), but the array is encrypted "
                                         r"under PublicKey\(512 bits, n=0x[0-9a-f]{8}\.\.\.\)"):
        X.decrypt(key_1024[1])
    with pytest.raises(TypeError, match="key must be a PrivateKey or a Decryptor, got int"):
        X.decrypt(7)
    with pytest.raises(ValueError, match="contracted dimensions differ"):
        X @ np.ones(3)
    with pytest.raises(ValueError, match=r"ciphertexts must lie in \(0, n\^2\)"):
        EncryptedArray(small_key[0], encoding, [small_key[0].nsquare], 1, 0, 0)


def test_arrays_and_packed_arrays_travel_by_pickle(small_key, pool, encoding):
    """What a party sends (Ray pickles it): ciphertexts and public metadata only."""
    X = EncryptedArray.encrypt([[1.5, -2.0], [0.25, 3.0]], pool, encoding)
    packed = pack(X, SlotLayout.for_key(small_key[0], X.hi - X.lo))
    X2, packed2 = pickle.loads(pickle.dumps((X, packed)))
    assert (X2.k, X2.lo, X2.hi, X2.public_key, X2.encoding) == (X.k, X.lo, X.hi, X.public_key,
                                                                 X.encoding)
    assert np.array_equal(X2.decrypt(small_key[1]), X.decrypt(small_key[1]))
    assert np.array_equal(packed2.decrypt(small_key[1]), X.decrypt(small_key[1]))


def test_rerandomize_changes_ciphertexts_not_plaintexts(small_key, pool, encoding):
    X = EncryptedArray.encrypt([1.5, -1.5], pool, encoding)
    Y = X.rerandomize(pool)
    assert not set(X.ciphertexts) & set(Y.ciphertexts)
    assert np.array_equal(X.decrypt(small_key[1]), Y.decrypt(small_key[1]))
    again = EncryptedArray.encrypt([1.5, -1.5], pool, encoding)
    assert not set(X.ciphertexts) & set(again.ciphertexts)
