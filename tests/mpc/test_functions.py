import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.mpc.functions import iterations_for, linear_start

from .conftest import PARTIES


@pytest.mark.parametrize("parties", PARTIES)
def test_reciprocal_on_the_sherman_morrison_domain(parties, rng):
    a = rng.uniform(1, 10, 300)
    ctx = mpc.local_context(parties, seed=9)
    x = ctx.share(a, owner=0)
    assert np.allclose(x.reciprocal().reveal(), 1 / a, rtol=1e-4, atol=2e-5)
    assert np.allclose((3.0 * x.reciprocal()).reveal(), 3 / a, atol=1e-4)


@pytest.mark.parametrize("parties", [2, 3])
def test_paper_start_converges_in_seven_iterations_below_six(parties, rng):
    # Above about 8 the paper's start 3 exp(0.5 - x) + 0.003 needs more than 7 iterations
    # (relative error 0.968 at x = 10); docs/mpc.md tabulates this.
    a = rng.uniform(1, 6, 200)
    ctx = mpc.local_context(parties, seed=9)
    out = ctx.share(a, owner=0).reciprocal(start="paper").reveal()
    assert np.allclose(out, 1 / a, rtol=1e-3, atol=5e-5)


def test_linear_start_is_minimax():
    alpha, beta, error = linear_start((0.5, 1.0))
    assert np.isclose(alpha, 48 / 17) and np.isclose(beta, 32 / 17) and np.isclose(error, 1 / 17)
    grid = np.linspace(1, 10, 1001)
    alpha, beta, error = linear_start((1, 10))
    assert np.isclose(np.abs(1 - grid * (alpha - beta * grid)).max(), error)
    assert iterations_for(error, 20) == 5


@pytest.mark.parametrize("parties", [2, 3])
def test_exp_matches_the_paper_approximation(parties, rng):
    a = rng.uniform(-4, 2, 200)
    ctx = mpc.local_context(parties, seed=10)
    out = ctx.share(a, owner=0).exp().reveal()
    reference = (1 + a / 256) ** 256
    assert np.allclose(out, reference, rtol=1e-3, atol=1e-4)  # rounding, not flooring, keeps this
    assert np.allclose(out, np.exp(a), rtol=0.04)


def test_bad_reciprocal_arguments():
    ctx = mpc.local_context(2, seed=1)
    x = ctx.share(np.ones(2), owner=0)
    with pytest.raises(ValueError, match="start"):
        x.reciprocal(start="guess")
    with pytest.raises(ValueError, match="domain"):
        x.reciprocal(domain=(2, 1))
    with pytest.raises(ValueError, match="iterations"):
        x.reciprocal(iterations=-1)


@pytest.mark.parametrize("parties", [2, 3])
def test_quotient_costs_the_rounds_of_the_reciprocal(parties, rng):
    a, n = rng.uniform(1, 2, 50), rng.uniform(-3, 3, 50)
    ctx = mpc.local_context(parties, seed=4)
    x, num = ctx.share(a, owner=0), ctx.share(n, owner=parties - 1)
    before = ctx.comm.stats[0].rounds
    x.reciprocal(domain=(1, 2)).reveal()
    reciprocal_rounds = ctx.comm.stats[0].rounds - before
    before = ctx.comm.stats[0].rounds
    quotient = x.reciprocal(domain=(1, 2), numerator=num).reveal()
    assert ctx.comm.stats[0].rounds - before == reciprocal_rounds
    assert np.allclose(quotient, n / a, atol=1e-4)
    assert np.allclose((num / x).reveal(), n / a, atol=1e-4)        # default domain [1, 10]


def test_quotient_by_a_bit_vector_broadcasts(rng):
    a = rng.uniform(1, 2, (4, 3))
    ctx = mpc.local_context(2, seed=4)
    onehot = ctx.share(np.array([0, 1, 0]), owner=1, frac_bits=0)
    out = ctx.share(a, owner=0).reciprocal(domain=(1, 2), numerator=onehot).reveal()
    assert np.allclose(out, np.array([0, 1, 0]) / a, atol=1e-5)
