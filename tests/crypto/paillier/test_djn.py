"""DJN short-exponent obfuscators: n-th residues h_s^a prod (rho_j^n)^(c_j) that encrypt and
re-randomise like r^n, built on h = -x^2; the complement spreads their n-th roots over the
quadratic characters the key owner can compute; bad input raises naming the bound."""

import secrets

import gmpy2
import numpy as np
import pytest

from ppml.crypto.paillier import EncryptedArray, ObfuscatorPool, SlotLayout, pack
from ppml.crypto.paillier.djn import (COMPLEMENT_BASES, ShortExponentBase, exponent_bits,
                                      short_exponent_obfuscators)
from ppml.crypto.paillier.pool import fresh_obfuscators
from tests.crypto.paillier.owner import characters, nth_root


@pytest.fixture(scope="module")
def base(small_key):
    public_key = small_key[0]
    return ShortExponentBase(public_key, fresh_obfuscators(public_key, COMPLEMENT_BASES))


def fresh_values(base):
    """The complement's n-th residues, read back from the table (one base per bit)."""
    bits = base.short_bits
    return [base.table(1 << (bits + j)) for j in range(base.table.bits - bits)]


def test_the_exponent_has_half_the_key_bits():
    assert exponent_bits(2048) == 1024 and exponent_bits(512) == 256
    assert exponent_bits(2049) == 1025


def test_h_s_is_the_nth_power_of_minus_a_square(small_key, base):
    public_key, private_key = small_key
    assert private_key.decrypt_raw([base.h_s]) == [0]              # an n-th residue
    h = nth_root(private_key, base.h_s)
    assert gmpy2.powmod(h, public_key.n, public_key.nsquare) == base.h_s
    minus_h = -h % public_key.n                                    # -h = x^2: a square mod p, q
    assert characters(private_key, minus_h) == (1, 1)


def test_an_obfuscator_is_h_s_to_the_exponent_times_the_chosen_complement(small_key, base):
    public_key = small_key[0]
    nsquare, bits = public_key.nsquare, base.short_bits
    complement = base.table.bits - bits
    everything = gmpy2.mpz(1)
    for value in fresh_values(base):
        everything = everything * value % nsquare
    assert base.obfuscator(0, 0) == 1
    assert base.obfuscator((1 << bits) - 1, 0) == gmpy2.powmod(base.h_s, (1 << bits) - 1, nsquare)
    assert base.obfuscator(0, (1 << complement) - 1) == everything
    a, c = secrets.randbits(bits), 1
    assert base.obfuscator(a, c) == gmpy2.powmod(base.h_s, a, nsquare) * fresh_values(base)[0] \
        % nsquare


def test_obfuscators_are_distinct_nth_residues(small_key, base):
    values = short_exponent_obfuscators(base, 16)
    assert len(set(values)) == 16
    assert small_key[1].decrypt_raw(values) == [0] * 16


def test_the_complement_spreads_the_roots_over_the_quadratic_characters(small_key, base):
    """h^a alone has Legendre symbols fixed or tied together mod p and q (a leak to the key owner
    of the same characters of whatever it multiplies); with the complement all four occur."""
    private_key = small_key[1]
    alone = {characters(private_key, nth_root(private_key,
                                             base.obfuscator(secrets.randbits(base.short_bits), 0)))
             for _ in range(64)}
    assert len(alone) <= 2
    seen = [characters(private_key, nth_root(private_key, value))
            for value in base.draw(200)]
    counts = {pair: seen.count(pair) for pair in {(1, 1), (1, -1), (-1, 1), (-1, -1)}}
    assert min(counts.values()) >= 20, counts      # expected 50 each; below 20 is a 5-sigma event


def test_djn_pool_encrypts_rerandomises_and_computes_like_full(small_key, encoding):
    public_key, private_key = small_key
    pool = ObfuscatorPool(public_key, 40, obfuscator="djn", on_empty="raise")
    values = np.array([0.5, -1.25, 3.0, 0.0])
    x = EncryptedArray.encrypt(values, pool, encoding)
    assert np.array_equal(x.decrypt(private_key), values)
    fresh = x.rerandomize(pool)
    assert all(a != b for a, b in zip(fresh.ciphertexts, x.ciphertexts))
    # a re-randomised ciphertext is the old one times an n-th residue: c' / c decrypts to 0
    ratios = [b * gmpy2.invert(a, public_key.nsquare) % public_key.nsquare
              for a, b in zip(x.ciphertexts, fresh.ciphertexts)]
    assert private_key.decrypt_raw(ratios) == [0] * 4
    weights = np.array([[1.0, 2.0, -1.0, 0.5], [0.0, -3.0, 1.0, 2.0]])
    plain = weights @ values + 1.0
    result = (weights @ fresh + EncryptedArray.encrypt([1.0, 1.0], pool, encoding, k=2))
    assert np.array_equal(result.decrypt(private_key), plain)
    packed = pack(result.rerandomize(pool), SlotLayout.for_key(public_key, result.hi - result.lo))
    assert np.array_equal(packed.decrypt(private_key), plain)


def test_bad_input_is_refused(small_key, base):
    public_key = small_key[0]
    with pytest.raises(ValueError, match=rf"at least {COMPLEMENT_BASES} fresh n-th residues"):
        ShortExponentBase(public_key, fresh_obfuscators(public_key, 3))
    with pytest.raises(ValueError, match=r"complement value 1 must lie in \(0, n\^2\)"):
        ShortExponentBase(public_key, [1, public_key.nsquare] + [1] * COMPLEMENT_BASES)
    with pytest.raises(ValueError, match=rf"exponent must lie in \[0, 2\^{base.short_bits}\)"):
        base.obfuscator(1 << base.short_bits, 0)
    with pytest.raises(ValueError, match="obfuscator must be one of"):
        ObfuscatorPool(public_key, 1, obfuscator="short")
