"""Keys: size policy, CSPRNG and seeded (INSECURE) generation, CRT decryption against phe,
refusal of tampered ciphertexts."""

import logging
import pickle
from pathlib import Path

import gmpy2
import phe
import pytest

import ppml.crypto.paillier as paillier
from ppml.crypto.paillier import (MIN_KEY_BITS, ObfuscatorPool, PrivateKey, PublicKey,
                                  generate_keypair)
from ppml.crypto.paillier.keys import keypair_from_factors

def test_default_key_is_2048_bits_from_two_1024_bit_primes(key_2048):
    public_key, private_key = key_2048
    assert MIN_KEY_BITS == 2048 and public_key.bits == 2048
    assert private_key.p.bit_length() == private_key.q.bit_length() == 1024
    assert private_key.p != private_key.q and gmpy2.is_prime(private_key.p, 50)
    assert gmpy2.is_prime(private_key.q, 50) and private_key.p * private_key.q == public_key.n


def test_a_2048_bit_round_trip_agrees_with_phe(key_2048):
    public_key, private_key = key_2048
    residues = [0, 1, 12345678901234567890, int(public_key.n) - 1]
    ours = public_key.encrypt_raw(residues, ObfuscatorPool(public_key, 4).take(4))
    phe_private = phe.PaillierPrivateKey(phe.PaillierPublicKey(int(public_key.n)),
                                         int(private_key.p), int(private_key.q))
    assert [phe_private.raw_decrypt(int(c)) for c in ours] == residues
    assert private_key.decrypt_raw(ours) == residues


@pytest.mark.parametrize("bits", [512, 1024, 2046])
def test_keys_below_2048_bits_are_refused_without_the_insecure_flag(bits):
    with pytest.raises(ValueError, match="key_bits must be >= 2048"):
        generate_keypair(bits)


def test_a_received_small_public_key_is_refused_too(small_key):
    n = small_key[0].n
    with pytest.raises(ValueError, match="key_bits must be >= 2048"):
        PublicKey(n)
    assert PublicKey(n, insecure_key_bits_ok=True) == small_key[0]


def test_the_insecure_flag_has_a_floor_and_bits_must_be_even():
    with pytest.raises(ValueError, match=">= 256 even with insecure_key_bits_ok"):
        generate_keypair(128, insecure_key_bits_ok=True)
    with pytest.raises(ValueError, match="must be even"):
        generate_keypair(513, insecure_key_bits_ok=True)
    public_key, _ = generate_keypair(256, insecure_key_bits_ok=True)
    assert public_key.bits == 256


def test_unseeded_keys_are_fresh_and_seeded_keys_reproducible_with_a_warning(caplog):
    assert generate_keypair(512, insecure_key_bits_ok=True)[0] != \
        generate_keypair(512, insecure_key_bits_ok=True)[0]
    with caplog.at_level(logging.WARNING):
        a = generate_keypair(512, insecure_key_bits_ok=True, seed=7)
    assert "INSECURE" in caplog.text
    b = generate_keypair(512, insecure_key_bits_ok=True, seed=7)
    c = generate_keypair(512, insecure_key_bits_ok=True, seed=8)
    assert a[0] == b[0] and a[1].p == b[1].p and a[0] != c[0]


def test_the_private_key_never_shows_its_factors(small_key):
    public_key, private_key = small_key
    for text in (repr(private_key), str(private_key), repr(public_key)):
        assert str(private_key.p) not in text and str(private_key.q) not in text
        assert hex(private_key.p)[2:] not in text


def test_wrong_factors_are_refused(small_key):
    public_key, private_key = small_key
    with pytest.raises(ValueError, match="distinct factors"):
        PrivateKey(public_key, private_key.p, private_key.p)
    with pytest.raises(ValueError, match="distinct factors"):
        PrivateKey(public_key, private_key.p, private_key.q + 2)


def test_public_keys_pickle_by_modulus(small_key):
    public_key = small_key[0]
    assert pickle.loads(pickle.dumps(public_key)) == public_key


def test_ciphertexts_agree_with_phe_both_ways(small_key, pool):
    public_key, private_key = small_key
    phe_public = phe.PaillierPublicKey(int(public_key.n))
    phe_private = phe.PaillierPrivateKey(phe_public, int(private_key.p), int(private_key.q))
    residues = [0, 1, 2**100 + 3, int(public_key.n) - 5]
    ours = public_key.encrypt_raw(residues, pool.take(len(residues)))
    assert [phe_private.raw_decrypt(int(c)) for c in ours] == residues
    theirs = [phe_public.raw_encrypt(m) for m in residues]
    assert private_key.decrypt_raw(theirs) == residues


def test_tampered_ciphertexts_are_refused(small_key):
    public_key, private_key = small_key
    n, nsquare = public_key.n, public_key.nsquare
    for bad in (-1, nsquare, nsquare + 7):
        with pytest.raises(ValueError, match=r"outside \[0, n\^2\)"):
            private_key.decrypt_raw([bad])
    for bad in (0, n, private_key.p * 12345, private_key.q):
        with pytest.raises(ValueError, match="not coprime with n"):
            private_key.decrypt_raw([bad])


def test_another_keys_ciphertext_decrypts_undetected_unless_above_n_squared(small_key, pool,
                                                                            key_1024):
    """What decrypt_raw cannot check: under another 512-bit key a ciphertext is a unit below
    n^2, so it decrypts to an unrelated residue without error; only one at or above n^2 (here
    from a larger key) is refused.  `EncryptedArray.decrypt` knows its key and refuses."""
    public_key, private_key = small_key
    other_public, other_private = generate_keypair(512, insecure_key_bits_ok=True, seed=513)
    mine = public_key.encrypt_raw([42], pool.take(1))
    assert mine[0] < other_public.nsquare                     # holds for this seed's pair
    assert other_private.decrypt_raw(mine) != [42]
    large = key_1024[0].encrypt_raw([42], [key_1024[0].nsquare - 1])
    with pytest.raises(ValueError, match=r"outside \[0, n\^2\)"):
        private_key.decrypt_raw(large)


def test_no_weak_randomness_in_the_paillier_package():
    """Randomness comes from os.urandom / secrets only: never `random`, never numpy's RNG."""
    for path in Path(paillier.__file__).parent.glob("*.py"):
        text = path.read_text()
        for weak in ("import random", "from random", "np.random", "numpy.random"):
            assert weak not in text, f"{path.name} uses {weak}"


def test_a_key_pair_comes_back_from_its_factors(small_key):
    """What an owner keeps in its checkpoint (p, q) gives back a key pair that decrypts what
    the original encrypted."""
    public_key, private_key = small_key
    again_public, again_private = keypair_from_factors(private_key.factors())
    assert again_public.n == public_key.n
    sealed = public_key.encrypt_raw([12345], [pow(7, public_key.n, public_key.nsquare)])
    assert again_private.decrypt_raw(sealed) == [12345]
