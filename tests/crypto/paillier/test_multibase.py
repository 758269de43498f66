"""Multi-base obfuscators: products of t-bit powers of 2 lambda + 4 fresh n-th residues, within
2^-lambda of r^n even for the key owner: the bound's parameters, the table's products, and the
key owner's attacks on the n-th roots (characters of order 2 and 3) find nothing."""

import secrets

import gmpy2
import numpy as np
import pytest

from ppml.crypto.paillier import EncryptedArray, ObfuscatorPool
from ppml.crypto.paillier.multibase import (MultiBase, base_count, collision, distance_bound,
                                            exponent_bits, multibase_obfuscators)
from ppml.crypto.paillier.pool import fresh_obfuscators
from tests.crypto.paillier.owner import characters, cubic_character, nth_root

LAMBDA = 40
"""The smallest statistical parameter accepted: few bases, so the module's tests stay fast."""


@pytest.fixture(scope="module")
def base(small_key):
    public_key = small_key[0]
    return MultiBase(public_key, fresh_obfuscators(public_key, base_count(LAMBDA)), LAMBDA)


@pytest.mark.parametrize("key_bits", [512, 1024, 2048, 3072, 4096])
@pytest.mark.parametrize("statistical_bits", [40, 64, 128, 256])
def test_the_parameters_meet_the_bound(key_bits, statistical_bits):
    k, t = base_count(statistical_bits), exponent_bits(key_bits, statistical_bits)
    assert k == 2 * statistical_bits + 4
    assert k * t >= key_bits + 2 * statistical_bits
    assert distance_bound(key_bits, statistical_bits) <= -statistical_bits


def test_collision_counts_residues_exactly():
    for m, t in [(2, 3), (3, 5), (7, 4), (5, 2), (16, 4)]:
        values = np.arange(1 << t) % m
        brute = np.mean(values[:, None] == values[None, :])
        assert collision(m, t) == pytest.approx(brute, abs=1e-15)
    assert collision(4, 6) == 0.25                      # exactly 1/m when m divides 2^t


def test_an_obfuscator_is_the_product_of_the_bases_powers(small_key, base):
    nsquare, t = small_key[0].nsquare, base.exponent_bits
    bases = [base.table(1 << (j * t)) for j in range(base_count(LAMBDA))]
    exponents = [secrets.randbits(t) for _ in bases]
    packed = sum(e << (j * t) for j, e in enumerate(exponents))
    expected = gmpy2.mpz(1)
    for g, e in zip(bases, exponents):
        expected = expected * gmpy2.powmod(g, e, nsquare) % nsquare
    assert base.table(packed) == expected
    assert base.table.bits == base_count(LAMBDA) * t


def test_obfuscators_are_distinct_nth_residues(small_key, base):
    values = multibase_obfuscators(base, 16)
    assert len(set(values)) == 16
    assert small_key[1].decrypt_raw(values) == [0] * 16


def test_the_key_owner_finds_the_roots_characters_uniform(small_key, base):
    """The key owner's attack on one base (DJN's h^a): the Legendre symbols of the n-th roots
    modulo p and q, and their cubic characters modulo a prime = 1 mod 3.  Here every class is as
    frequent as for r^n (the quadratic pairs 1/4 each, the cubic classes 1/3 each)."""
    private_key = small_key[1]
    roots = [nth_root(private_key, value) for value in base.draw(600)]
    pairs = [characters(private_key, root) for root in roots]
    counts = {pair: pairs.count(pair) for pair in {(1, 1), (1, -1), (-1, 1), (-1, -1)}}
    assert min(counts.values()) >= 105, counts     # expected 150 each; sd 10.6: a 4-sigma test
    prime = next(p for p in (private_key.p, private_key.q) if p % 3 == 1)
    classes = [cubic_character(prime, root) for root in roots]
    assert min(classes.count(c) for c in range(3)) >= 155, classes   # expected 200; sd 11.5


def test_the_attack_sees_bases_from_a_subgroup(small_key):
    """The control: bases whose roots are all squares (a subgroup of index 4, as a key owner who
    chose them could arrange) give roots that are squares, every time."""
    public_key, private_key = small_key
    squares = [gmpy2.powmod(r * r, public_key.n, public_key.nsquare)
               for r in (secrets.randbelow(int(public_key.n) - 2) + 2
                         for _ in range(base_count(LAMBDA)))]
    skewed = MultiBase(public_key, squares, LAMBDA)
    assert {characters(private_key, nth_root(private_key, value))
            for value in skewed.draw(50)} == {(1, 1)}


def test_a_multibase_pool_encrypts_and_rerandomises_like_full(small_key, encoding):
    public_key, private_key = small_key
    pool = ObfuscatorPool(public_key, 20, obfuscator="multibase", on_empty="raise")
    values = np.array([0.5, -1.25, 3.0, 0.0])
    x = EncryptedArray.encrypt(values, pool, encoding)
    fresh = x.rerandomize(pool)
    assert all(a != b for a, b in zip(fresh.ciphertexts, x.ciphertexts))
    assert np.array_equal(fresh.decrypt(private_key), values)


def test_bad_input_is_refused(small_key):
    public_key = small_key[0]
    with pytest.raises(ValueError, match=rf"at least {base_count(LAMBDA)} fresh n-th residues "
                                         rf"\(2 lambda \+ 4 for statistical_bits={LAMBDA}\)"):
        MultiBase(public_key, fresh_obfuscators(public_key, 3), LAMBDA)
    with pytest.raises(ValueError, match=r"bases value 1 must lie in \(0, n\^2\)"):
        MultiBase(public_key, [1, public_key.nsquare] + [1] * base_count(LAMBDA), LAMBDA)
    with pytest.raises(ValueError, match="statistical_bits must be an integer in"):
        MultiBase(public_key, [], 20)
    with pytest.raises(ValueError, match="count must be an integer >= 0"):
        MultiBase(public_key, fresh_obfuscators(public_key, base_count(LAMBDA)),
                  LAMBDA).draw(-1)
