"""Binary circuits: the bit-plane transpose, the carry tree against the plaintext carry, and the
sign of a sum of several XOR-shared words; the tree opens a fraction of the prefix adder's
words."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.mpc.protocols.binary import (plane_bits, planes, sign_of_sum, top_carry,
                                       transpose64)
from ppml.mpc.protocols.convert import most_significant_bit

from ..conftest import PARTIES

MASK63 = np.uint64(2**63 - 1)


@pytest.mark.parametrize("shape, words_a_plane", [((3, 70), 4), ((3, 400), 19)])
def test_planes_hold_bit_i_of_every_element(shape, words_a_plane):
    """Below and above `UNPACKED_PLANES_MAX` (210 and 1,200 elements)."""
    words = np.random.default_rng(0).integers(0, 2**64, (2,) + shape, dtype=np.uint64)
    held = planes(words)
    assert held.shape == (2, 64, words_a_plane)
    bits = (words.reshape(2, -1)[:, :, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    for i in range(64):
        assert np.array_equal(plane_bits(held[:, i], shape).reshape(2, -1), bits[:, :, i])


def test_the_transpose_is_its_own_inverse():
    block = np.random.default_rng(1).integers(0, 2**64, (5, 64), dtype=np.uint64)
    assert np.array_equal(transpose64(transpose64(block)), block)
    one = np.zeros((1, 64), np.uint64)
    one[0, 3] = np.uint64(1) << np.uint64(40)                  # word 3, bit 40
    assert transpose64(one)[0, 40] == np.uint64(1) << np.uint64(3)


def _shared_words(ctx, words: np.ndarray) -> np.ndarray:
    """XOR shares of public ``words``, party 0 holding them, the others zeros."""
    out = np.zeros((ctx.parties,) + words.shape, dtype=np.uint64)
    out[0] = words
    return out


@pytest.mark.parametrize("bits", [63, 64, 5])
def test_the_carry_tree_gives_the_carry_out_of_the_top_bit(bits):
    rng = np.random.default_rng(bits)
    a, b = (rng.integers(0, 2**64, 500, dtype=np.uint64) for _ in range(2))
    a[:3], b[:3] = np.uint64(2**64 - 1), np.uint64(1)          # a carry all the way through
    ctx = mpc.local_context(2, seed=4)
    carry = top_carry(ctx, _shared_words(ctx, a & b), _shared_words(ctx, a ^ b), bits)
    low = (np.uint64(1) << np.uint64(bits)) - np.uint64(1) if bits < 64 else ~np.uint64(0)
    if bits < 64:
        expected = ((a & low) + (b & low)) >> np.uint64(bits)
    else:
        expected = (a.astype(object) + b.astype(object) >= 2**64).astype(np.uint64)
    assert np.array_equal(np.bitwise_xor.reduce(carry, axis=0), expected)


@pytest.mark.parametrize("parties", PARTIES)
def test_the_sign_of_a_sum_of_shares_is_exact_at_the_edges(parties):
    values = np.array([0, -1, 1, 2**63 - 1, -(2**63), 2**62, -(2**62) - 1, 7], dtype=np.int64)
    ctx = mpc.local_context(parties, seed=5)
    x = ctx.share(values, owner=parties - 1, frac_bits=0, wide=True)   # the ring's edges
    signs = np.bitwise_xor.reduce(most_significant_bit(ctx, x.data), axis=0)
    assert signs.tolist() == [int(v < 0) for v in values]
    word = np.array([5, 2**63 + 1], dtype=np.uint64)
    assert np.bitwise_xor.reduce(sign_of_sum(ctx, [_shared_words(ctx, word)]),
                                 axis=0).tolist() == [0, 1]


def test_a_sign_bit_opens_a_fraction_of_the_prefix_adders_words():
    ctx = mpc.local_context(2, seed=6)
    x = ctx.share(np.arange(6400.0) / 4, owner=1)
    most_significant_bit(ctx, x.data)
    sent = ctx.comm.stats[0].bytes_sent
    ctx = mpc.local_context(2, seed=6)
    ctx.share(np.arange(6400.0) / 4, owner=1).to_binary()            # the whole sum: the adder
    assert sent < ctx.comm.stats[0].bytes_sent / 3
