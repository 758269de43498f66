"""Fixed-base tables: the same values as powmod and as subset products, at the edges of the
exponent range and for every window; bad input raises naming the bound."""

import pickle
import secrets

import gmpy2
import pytest

from ppml.crypto.paillier.fixed_base import (MAX_WINDOW, FixedBaseProducts, FixedBaseTable,
                                             squarings)

MODULUS = gmpy2.next_prime(1 << 127) * gmpy2.next_prime(1 << 126)


@pytest.mark.parametrize("window", [1, 2, 3, 7, 8])
@pytest.mark.parametrize("bits", [1, 7, 8, 9, 64])
def test_powers_match_powmod_at_the_edges_of_the_range(window, bits):
    base = gmpy2.mpz(0xC0FFEE) ** 5 % MODULUS
    table = FixedBaseTable.powers(base, bits, MODULUS, window)
    top = (1 << bits) - 1
    for e in {0, 1, min(2, top), top, top - 1, 1 << (bits - 1), secrets.randbits(bits)}:
        assert table(e) == gmpy2.powmod(base, e, MODULUS), (bits, window, e)


def test_independent_bases_give_subset_products():
    bases = [gmpy2.mpz(secrets.randbelow(int(MODULUS) - 2) + 1) for _ in range(11)]
    table = FixedBaseTable(bases, MODULUS, window=4)     # groups of 4, 4 and 3 bases
    for subset in (0, 1, 0b11111111111, 0b10000000000, secrets.randbits(11)):
        expected = gmpy2.mpz(1)
        for i, base in enumerate(bases):
            if subset >> i & 1:
                expected = expected * base % MODULUS
        assert table(subset) == expected


def test_squarings_are_the_bases_of_a_power_table():
    assert squarings(3, 4, 1000) == [3, 9, 81, 6561 % 1000]


def test_a_table_pickles_to_the_same_values():
    table = FixedBaseTable.powers(5, 20, MODULUS, 4)
    copy = pickle.loads(pickle.dumps(table))
    assert copy(123_456) == table(123_456) == gmpy2.powmod(5, 123_456, MODULUS)


def test_exponents_outside_the_table_are_refused():
    table = FixedBaseTable.powers(5, 8, MODULUS, 3)
    with pytest.raises(ValueError, match=r"exponent must lie in \[0, 2\^8\).*9 bits"):
        table(256)
    with pytest.raises(ValueError, match=r"exponent must lie in \[0, 2\^8\).*negative"):
        table(-1)


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match=rf"window must be an integer in \[1, {MAX_WINDOW}\]"):
        FixedBaseTable([2], MODULUS, window=0)
    with pytest.raises(ValueError, match="window must be an integer"):
        FixedBaseTable([2], MODULUS, window=MAX_WINDOW + 1)
    with pytest.raises(ValueError, match="window must be an integer"):
        FixedBaseTable([2], MODULUS, window=True)
    with pytest.raises(ValueError, match="at least one base"):
        FixedBaseTable([], MODULUS)
    with pytest.raises(ValueError, match="modulus must be >= 2"):
        FixedBaseTable([1], 1)
    with pytest.raises(ValueError, match=r"base 1 must lie in \(0, modulus\)"):
        FixedBaseTable([2, MODULUS], MODULUS)
    with pytest.raises(ValueError, match=r"base 0 must lie in \(0, modulus\)"):
        FixedBaseTable([0], MODULUS)
    with pytest.raises(ValueError, match="bits must be an integer >= 1"):
        FixedBaseTable.powers(2, 0, MODULUS)


@pytest.mark.parametrize("window,depth", [(1, 1), (3, 1), (4, 3), (8, 8), (5, 64)])
def test_products_of_several_bases_match_powmod(window, depth):
    bases = [gmpy2.mpz(secrets.randbelow(int(MODULUS) - 2) + 1) for _ in range(3)]
    bits = 61                                            # not a multiple of any depth above
    products = FixedBaseProducts(bases, bits, MODULUS, window, depth)
    top = (1 << bits) - 1
    for exponents in ([0, 0, 0], [top, top, top], [1, 0, top], [secrets.randbits(bits)
                                                                 for _ in range(3)]):
        expected = gmpy2.mpz(1)
        for base, e in zip(bases, exponents):
            expected = expected * gmpy2.powmod(base, e, MODULUS) % MODULUS
        assert products(exponents) == expected, (window, depth, exponents)


def test_products_refuse_exponents_out_of_range():
    products = FixedBaseProducts([3, 5], 8, MODULUS, window=2, depth=2)
    with pytest.raises(ValueError, match=r"\[0, 2\^8\)"):
        products([256, 0])
    with pytest.raises(ValueError, match=r"\[0, 2\^8\)"):
        products([-1, 0])
    with pytest.raises(ValueError, match="one exponent per base"):
        products([1])
    with pytest.raises(ValueError, match="depth must be"):
        FixedBaseProducts([3], 8, MODULUS, depth=0)
