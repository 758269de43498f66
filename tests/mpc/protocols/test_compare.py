import numpy as np
import pytest

import ppml.mpc as mpc

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
