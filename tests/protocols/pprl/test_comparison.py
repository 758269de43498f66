"""Private comparison of the two agents' integers of any width, and the limbs they enter the
engine as."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.protocols.pprl.comparison import less_than, limbs


@pytest.mark.parametrize("bits", [1, 16, 62, 63, 124, 125, 177])
def test_less_than_matches_python_integers_at_every_width(bits):
    rng = np.random.default_rng(bits)
    u = [int.from_bytes(rng.bytes(24), "big") % 2**bits for _ in range(40)]
    v = [int.from_bytes(rng.bytes(24), "big") % 2**bits for _ in range(40)]
    v[:10] = u[:10]
    v[10:20] = [x ^ 1 for x in u[10:20]]                   # differ in the lowest bit only
    shares = less_than(mpc.local_context(2, seed=1), u, v, bits)
    assert list((shares[0] ^ shares[1]) & np.uint64(1)) == [int(a < b) for a, b in zip(u, v)]


def test_limbs_refuse_values_outside_the_width():
    assert limbs([2**62 + 5], 70).tolist() == [[5, 1]]
    with pytest.raises(ValueError, match=r"a compared value must lie in \[0, 2\^70\)"):
        limbs([2**70], 70)
    with pytest.raises(ValueError, match=r"\[0, 2\^70\)"):
        limbs([-1], 70)
