"""Keys and ciphertexts to phe (python-paillier) and back: same keys, same plaintexts, mixed
homomorphic sums, and the key policy on phe's keys."""

import numpy as np
import phe
import pytest
from gmpy2 import mpz

from ppml.crypto.paillier import (Encoding, EncryptedArray, PrivateKey, PublicKey,
                                  fresh_obfuscators, from_phe_number, phe_exponent,
                                  to_phe_number)
from ppml.crypto.paillier.encoding import from_residues, to_residues

INTEGERS = [0, 1, -1, 12345, -12345, 2**100, -(2**100)]


def encrypt_integers(public_key, ints):
    """ppml's encryption path: residues under fresh obfuscators r^n mod n^2."""
    residues = to_residues(ints, public_key.n)
    return public_key.encrypt_raw(residues, fresh_obfuscators(public_key, len(residues)))


def test_keys_round_trip_through_phe(small_key, key_1024):
    for public_key, private_key in (small_key, key_1024):
        phe_public, phe_private = public_key.to_phe(), private_key.to_phe()
        assert isinstance(phe_public, phe.PaillierPublicKey) and phe_public.g == phe_public.n + 1
        assert isinstance(phe_private, phe.PaillierPrivateKey)
        assert phe_private.public_key == phe_public and phe_public.n == public_key.n
        assert (phe_private.p, phe_private.q) == (private_key.p, private_key.q)
        back = PrivateKey.from_phe(phe_private, insecure_key_bits_ok=True)
        assert PublicKey.from_phe(phe_public, insecure_key_bits_ok=True) == public_key
        assert back.public_key == public_key
        assert (back.p, back.q, back.hp, back.hq, back.p_inverse) == \
            (private_key.p, private_key.q, private_key.hp, private_key.hq, private_key.p_inverse)


def test_ppml_ciphertexts_decrypt_with_phe(small_key):
    public_key, private_key = small_key
    phe_private = private_key.to_phe()
    numbers = [to_phe_number(public_key, c) for c in encrypt_integers(public_key, INTEGERS)]
    assert [phe_private.decrypt(v) for v in numbers] == INTEGERS
    # ppml's signed range reaches (n - 1) / 2; phe's stops at n // 3 - 1 and says so
    beyond, = encrypt_integers(public_key, [-public_key.max_plaintext])
    with pytest.raises(OverflowError):
        phe_private.decrypt(to_phe_number(public_key, beyond))


def test_phe_ciphertexts_decrypt_with_ppml(small_key):
    public_key, private_key = small_key
    phe_public = public_key.to_phe()
    for value in INTEGERS:
        ciphertext, exponent = from_phe_number(phe_public.encrypt(value))
        assert isinstance(ciphertext, type(mpz(0))) and exponent == 0
        assert from_residues(private_key.decrypt_raw([ciphertext]), public_key.n) == [value]


def test_homomorphic_addition_across_libraries(small_key):
    public_key, private_key = small_key
    phe_public, phe_private = public_key.to_phe(), private_key.to_phe()
    ours, = encrypt_integers(public_key, [-700])
    theirs = phe_public.encrypt(-12345)
    assert phe_private.decrypt(to_phe_number(public_key, ours) + theirs) == -13045
    total, exponent = from_phe_number(theirs + to_phe_number(public_key, ours))
    assert exponent == 0
    assert from_residues(private_key.decrypt_raw([total]), public_key.n) == [-13045]
    c, _ = from_phe_number(theirs)  # the same sum in ppml: a product of ciphertexts
    assert from_residues(private_key.decrypt_raw([ours * c % public_key.nsquare]),
                         public_key.n) == [-13045]


def test_scale_maps_to_phe_exponent_exactly(small_key, pool, encoding):
    """s = 32, k = 1: 2^-32 = 16^-8, so phe reads the array's reals as ppml does."""
    public_key, private_key = small_key
    array = EncryptedArray.encrypt([1.5, -2.25, 1e-3], pool, encoding)
    exponent = phe_exponent(encoding, array.k)
    assert exponent == -8
    numbers = [to_phe_number(public_key, c, exponent) for c in array.ciphertexts]
    assert [private_key.to_phe().decrypt(v) for v in numbers] == list(array.decrypt(private_key))
    assert phe_exponent(encoding, 0) == 0 and phe_exponent(Encoding(scale_bits=30), 2) == -15
    with pytest.raises(ValueError, match="phe cannot read it exactly"):
        phe_exponent(Encoding(scale_bits=30), 1)


def test_phe_key_with_another_g_is_refused(small_key):
    phe_public = small_key[0].to_phe()
    phe_public.g = phe_public.n + 2
    with pytest.raises(ValueError, match=r"key\.g must be key\.n \+ 1"):
        PublicKey.from_phe(phe_public, insecure_key_bits_ok=True)
    with pytest.raises(TypeError, match="phe.PaillierPublicKey"):
        PublicKey.from_phe(small_key[0])
    with pytest.raises(TypeError, match="phe.PaillierPrivateKey"):
        PrivateKey.from_phe(small_key[1])


def test_small_phe_keys_are_refused_without_the_insecure_flag():
    """A key from phe's own keygen, at 1024 bits: refused, unless insecure_key_bits_ok=True."""
    phe_public, phe_private = phe.generate_paillier_keypair(n_length=1024)
    with pytest.raises(ValueError, match="key_bits must be >= 2048"):
        PublicKey.from_phe(phe_public)
    with pytest.raises(ValueError, match="key_bits must be >= 2048"):
        PrivateKey.from_phe(phe_private)
    private_key = PrivateKey.from_phe(phe_private, insecure_key_bits_ok=True)
    assert private_key.public_key.bits == 1024
    ciphertext, _ = from_phe_number(phe_public.encrypt(-42))
    assert from_residues(private_key.decrypt_raw([ciphertext]), phe_public.n) == [-42]


def test_out_of_range_ciphertexts_are_refused(small_key):
    public_key = small_key[0]
    for bad in (0, public_key.nsquare, -1):
        with pytest.raises(ValueError, match=r"\(0, n\^2\)"):
            to_phe_number(public_key, bad)
    with pytest.raises(TypeError, match="phe.EncryptedNumber"):
        from_phe_number(np.int64(5))
