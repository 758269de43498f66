"""The one-hot window protocols: e^x in one opening (the rounding of its two factors only, at any
scale, aliasing outside its window) and the reciprocal's series."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.mpc.protocols.window import exp, reciprocal
from ppml.mpc.ring import ARITHMETIC

from ..conftest import PARTIES


def opened_exp(parties, values, frac_bits, lowest, bits, precision_bits=20, seed=0):
    """e^x at scale 2^-2L for x = values / 2^frac_bits (integers), and the rounds it took."""
    ctx = mpc.local_context(parties, seed=seed, precision_bits=precision_bits)
    v = ctx.share(values, owner=0, frac_bits=0, wide=True)
    before = ctx.comm.stats[0].rounds
    y = exp(ctx, v.data, frac_bits, lowest, bits, precision_bits)
    rounds = ctx.comm.stats[0].rounds - before
    (out,) = ctx.open([y], ARITHMETIC)
    return out.view(np.int64) / 2.0 ** (2 * precision_bits), rounds


@pytest.mark.parametrize("parties", PARTIES)
@pytest.mark.parametrize("frac_bits", [0, 20, 40])
def test_exp_rounds_only_its_two_factors(parties, frac_bits, rng):
    """Within 2^-(L+1) (e e^x + 1) of e^x (the rounding of e^(n + omega) and e^-rho) in one
    round, for x at scale 2^-frac_bits, the window's ends included."""
    x = np.concatenate([rng.uniform(-8, 7, 5000), [-8.0, 7.0, 0.0]])    # n in [-8, 7]
    values = np.rint(x * 2.0**frac_bits).astype(np.int64)
    x = values / 2.0**frac_bits
    out, rounds = opened_exp(parties, values, frac_bits, lowest=-8, bits=4)
    assert rounds == 1
    assert np.all(np.abs(out - np.exp(x)) <= 2.0**-21 * (np.e * np.exp(x) + 1))


def test_an_integer_part_outside_the_window_aliases():
    """The window [-4, 4) holds the integer parts of x in [-4, 3): x = 4.5 (n = 4 or 5) passes
    for x - 8, a precondition the caller's domain states."""
    values = np.full(200, 4.5 * 2**20, dtype=np.int64)
    out, _ = opened_exp(2, values, 20, lowest=-4, bits=3)
    assert np.allclose(out, np.exp(4.5 - 8), rtol=0, atol=2.0**-20)


@pytest.mark.parametrize("parties", PARTIES)
def test_the_reciprocal_series_in_one_round(parties, rng):
    """1/x for x in [1, 2] at scale 2^-40 (eq. 1's denominators at 2L): grid 1, window [2, 6),
    21 terms (relative error 2^-21), at scale 2^-(L + 28), in one round."""
    x = np.concatenate([rng.uniform(1, 2, 2000), [1.0, 2.0]])
    values = np.rint(x * 2.0**40).astype(np.int64)
    ctx = mpc.local_context(parties, seed=2)
    v = ctx.share(values, owner=0, frac_bits=0, wide=True)
    before = ctx.comm.stats[0].rounds
    y = reciprocal(ctx, v.data, 40, 1, 2, 2, 21, 20, 28)
    assert ctx.comm.stats[0].rounds - before == 1
    (out,) = ctx.open([y], ARITHMETIC)
    assert np.all(np.abs(out.view(np.int64) / 2.0**48 - 2.0**40 / values) <= 2.0**-20)
