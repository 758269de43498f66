import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.mpc.protocols import compare

from ..conftest import PARTIES


@pytest.mark.parametrize("parties", PARTIES)
def test_comparisons_match_numpy(parties, rng):
    a = np.round(rng.uniform(-4, 4, 200), 1)
    b = np.round(rng.uniform(-4, 4, 200), 1)
    b[:50] = a[:50]  # exact ties
    ctx = mpc.local_context(parties, seed=4)
    x, y = ctx.share(a, owner=0), ctx.share(b, owner=1)
    assert np.array_equal((x < y).reveal(), a < b)
    assert np.array_equal((x > y).reveal(), a > b)
    assert np.array_equal((x >= y).reveal(), a >= b)
    assert np.array_equal((x <= y).reveal(), a <= b)
    assert np.array_equal((x == y).reveal(), a == b)
    assert np.array_equal((x >= 0).reveal(), a >= 0)
    assert np.array_equal(x.sign().reveal(), np.where(a < 0, -1, 1))
    assert np.allclose(x.relu().reveal(), np.maximum(a, 0), atol=2**-19)


@pytest.mark.parametrize("parties", [2, 3])
@pytest.mark.parametrize("limbs", [1, 2, 3, 4])
def test_limb_comparison_matches_python_integers(parties, limbs):
    """[a < b] of integers of 62 * limbs bits given as limbs, with ties in every limb and
    numbers that differ in one limb only."""
    rng = np.random.default_rng(limbs)
    count = 64
    a = rng.integers(0, 2**62, (count, limbs), dtype=np.uint64)
    b = rng.integers(0, 2**62, (count, limbs), dtype=np.uint64)
    b[:16] = a[:16]                                            # equal
    for row in range(16, 32):                                  # differ in one limb at most
        b[row] = a[row]
        b[row, rng.integers(limbs)] = rng.integers(0, 2**62, dtype=np.uint64)
    b[32:40, -1] = a[32:40, -1]                                # equal top limb
    b[40:44] = np.uint64(2**62 - 1)
    a[40:44] = np.uint64(0)
    ctx = mpc.local_context(parties, seed=5)
    x = ctx.share(a, owner=0, frac_bits=0, wide=True).data      # limbs of up to 62 bits
    y = ctx.share(b, owner=1, frac_bits=0, wide=True).data
    bits = np.bitwise_xor.reduce(compare.less_than_limbs(ctx, x, y), axis=0)
    number = lambda row: sum(int(v) << (62 * k) for k, v in enumerate(row))   # noqa: E731
    assert list(bits) == [int(number(u) < number(v)) for u, v in zip(a, b)]
