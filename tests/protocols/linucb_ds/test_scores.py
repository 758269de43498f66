"""Packed scores from the fixed theta* (step (3).ii): the same plaintexts and the same group
element as the paper's EDPs and Horner packing; bounds raise naming the parameter."""

import pickle

import gmpy2
import pytest

from ppml.protocols.linucb_ds.scores import PackedScores
from ppml.crypto.paillier import ObfuscatorPool, generate_keypair, ops
from ppml.crypto.paillier.encoding import from_residues

SLOT_BITS = 120


@pytest.fixture(scope="module")
def setting():
    public_key, private_key = generate_keypair(512, insecure_key_bits_ok=True, seed=6)
    theta_values = [123456789, -987654, 42]
    theta = public_key.encrypt_raw([v % public_key.n for v in theta_values],
                                   ObfuscatorPool(public_key, 3).take(3))
    return public_key, private_key, theta_values, theta


def paper(public_key, theta, rows, plain):
    """The paper's route: B_i* = EDP(theta*, c_i) E(plain_i), then Horner's packing."""
    nsquare, acc = public_key.nsquare, gmpy2.mpz(1)
    for row, p in reversed(list(zip(rows, plain))):
        score = ops.add_plain(public_key, [ops.dot(public_key, theta, row)],
                              [p % public_key.n])[0]
        acc = gmpy2.powmod(acc, 1 << SLOT_BITS, nsquare) * score % nsquare
    return acc


@pytest.mark.parametrize("depth", [1, 3, 8])
def test_same_group_element_as_edps_and_horner(setting, depth):
    public_key, private_key, theta_values, theta = setting
    bound = 2**40
    scores = PackedScores(public_key, theta, SLOT_BITS, 4, bound, window=4, depth=depth)
    rows = [[bound, -3, 0], [-bound, 7, 1], [0, 0, 0]]
    plain = [2**100, 2**100, 2**99]                     # slots stay >= 0, as in the protocol
    packed = scores(rows, plain)
    assert packed == paper(public_key, theta, rows, plain)
    m = from_residues(private_key.decrypt_raw([packed]), public_key.n)[0]
    expected = [sum(c * v for c, v in zip(row, theta_values)) + p for row, p in zip(rows, plain)]
    assert m == sum(e << (i * SLOT_BITS) for i, e in enumerate(expected))
    assert scores(rows[:1], plain[:1]) == paper(public_key, theta, rows[:1], plain[:1])


def test_bounds_raise_naming_the_parameter(setting):
    public_key, _, _, theta = setting
    with pytest.raises(ValueError, match="slot_bits"):
        PackedScores(public_key, theta, SLOT_BITS, 4, coefficient_bound=2**SLOT_BITS)
    scores = PackedScores(public_key, theta, SLOT_BITS, 2, coefficient_bound=100, window=4)
    with pytest.raises(ValueError, match="coefficient_bound=100"):
        scores([[101, 0, 0]], [0])
    with pytest.raises(ValueError, match="1 to 2 coefficient rows"):
        scores([[0, 0, 0]] * 3, [0] * 3)


def test_a_copy_rebuilds_the_same_tables(setting):
    public_key, _, _, theta = setting
    scores = PackedScores(public_key, theta, SLOT_BITS, 2, coefficient_bound=2**30, window=4)
    copy = pickle.loads(pickle.dumps(scores))
    assert copy([[5, -6, 7]], [9]) == scores([[5, -6, 7]], [9])
    assert len(pickle.dumps(scores)) < 4096             # the inputs, not the tables
