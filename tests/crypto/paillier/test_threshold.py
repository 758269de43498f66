"""(m, m)-threshold decryption: all m agents decrypt together, fewer cannot, a wrong share is
caught, and no share shows its exponent."""

import itertools

import gmpy2
import pytest

from ppml.crypto.paillier import ObfuscatorPool, generate_keypair
from ppml.crypto.paillier.threshold import STATISTICAL_BITS, combine, deal


@pytest.fixture(scope="module")
def keys():
    return generate_keypair(512, insecure_key_bits_ok=True, seed=11)


def encrypt(public_key, residues):
    return public_key.encrypt_raw(residues, ObfuscatorPool(public_key, len(residues))
                                  .take(len(residues)))


@pytest.mark.parametrize("parties", [2, 3, 5])
def test_all_agents_together_decrypt_what_the_private_key_decrypts(keys, parties):
    public_key, private_key = keys
    residues = [0, 1, 42, int(public_key.n) - 1, 2**200 + 7]
    ciphertexts = encrypt(public_key, residues)
    shares = deal(private_key, parties)
    assert combine(public_key, [s.partial_decrypt(ciphertexts) for s in shares]) == residues
    assert private_key.decrypt_raw(ciphertexts) == residues


def test_fewer_agents_cannot_decrypt(keys):
    public_key, private_key = keys
    ciphertexts = encrypt(public_key, [5, 6])
    shares = deal(private_key, 3)
    partials = [s.partial_decrypt(ciphertexts) for s in shares]
    for pair in itertools.combinations(partials, 2):
        with pytest.raises(ValueError, match="needs the shares of all 3 agents"):
            combine(public_key, list(pair))
        product = pair[0].values[0] * pair[1].values[0] % public_key.nsquare
        assert (product - 1) % public_key.n != 0                  # not of the form 1 + x n


def test_a_wrong_share_and_a_foreign_ciphertext_are_refused(keys):
    public_key, private_key = keys
    ciphertexts = encrypt(public_key, [9])
    partials = [s.partial_decrypt(ciphertexts) for s in deal(private_key, 2)]
    partials[1].values[0] = partials[1].values[0] * 2 % public_key.nsquare
    with pytest.raises(ValueError, match="do not combine: one is wrong or was tampered"):
        combine(public_key, partials)
    with pytest.raises(ValueError, match="not a Paillier ciphertext of this 512-bit key"):
        deal(private_key, 2)[0].partial_decrypt([public_key.n])   # not coprime with n


def test_shares_are_fresh_wide_and_hidden(keys):
    public_key, private_key = keys
    first, second = deal(private_key, 2), deal(private_key, 2)
    assert first[0]._exponent != second[0]._exponent               # fresh from the OS
    assert first[0]._exponent.bit_length() > 2 * 512 + STATISTICAL_BITS - 16
    assert str(first[0]._exponent) not in repr(first[0])
    assert deal(private_key, 2, seed=3)[0]._exponent == deal(private_key, 2, seed=3)[0]._exponent
    d = sum(s._exponent for s in first)
    assert d % public_key.n == 1 and gmpy2.gcd(d, public_key.n) == 1
