import numpy as np
import pytest

import ppml.mpc as mpc

from ..conftest import PARTIES


@pytest.mark.parametrize("parties", PARTIES)
def test_a2b_and_b2a_round_trip(parties, rng):
    values = rng.integers(-(2**63), 2**63 - 1, 300, dtype=np.int64, endpoint=True)
    ctx = mpc.local_context(parties, seed=3)
    x = ctx.share(values, owner=parties - 1, frac_bits=0, wide=True)   # the whole ring
    words = x.to_binary()
    assert np.array_equal(words.reveal().view(np.int64), values)
    assert np.array_equal(words.to_arithmetic().reveal(), values)


@pytest.mark.parametrize("parties", PARTIES)
def test_a2b_rounds_grow_with_a_carry_save_tree(parties):
    ctx = mpc.local_context(parties, seed=3)
    x = ctx.share(np.zeros(4), owner=0)
    x.to_binary()
    layers = {2: 0, 3: 1, 5: 3}[parties]  # carry-save layers (Dadda: 3, 4, 6 words per 1, 2, 3)
    assert ctx.comm.stats[0].by_op["a2b"]["rounds"] == layers + 7
