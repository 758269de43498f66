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


def test_reciprocal_of_a_public_value_outside_its_domain_is_refused():
    """The reported 1/0 = 17.49: a public constant must lie in the domain, which the message
    names; on the domain's edges the reciprocal is right."""
    ctx = mpc.local_context(2, seed=1, precision_bits=20)
    for bad in ([0.0], [-2.0], [1.0, 10.5]):
        with pytest.raises(ValueError, match=r"reciprocal of a public value outside its domain: "
                                             r"every x must lie in domain = \[1, 10\]"):
            ctx.constant(np.array(bad)).reciprocal()
    edges = np.array([1.0, 10.0])
    assert np.allclose(ctx.constant(edges).reciprocal().reveal(), 1 / edges, rtol=3e-5)
    with pytest.raises(ValueError, match=r"domain = \[0\.5, 2\]"):
        ctx.constant(np.array([0.25])).reciprocal(domain=(0.5, 2), start="paper")


def test_a_reciprocal_domain_must_keep_the_iterates_in_the_ring():
    ctx = mpc.local_context(2, seed=1, precision_bits=20)
    values = np.array([3, 2**10]) * 2.0**-20             # exactly encoded
    x = ctx.share(values, owner=0)
    low = 2.0**-21                                       # 2 / a = 2^22 = 2^(62 - 2L)
    assert np.allclose(x.reciprocal(domain=(low, 1e-2), iterations=30).reveal(),
                       1 / values, rtol=1e-4)
    with pytest.raises(ValueError, match=r"reciprocal domain must have a >= 2\^-21 = 4\.76837e-07 "
                                         r"at precision_bits=20"):
        x.reciprocal(domain=(low / 2, 1e-2))


@pytest.mark.parametrize("bits", [16, 20, 24])
def test_exp_is_within_its_stated_error_up_to_the_top_of_its_domain(bits):
    """On [-2^k, (62 - 2L) ln 2]: error <= max(1, e^x) (x^2 / 2^(k+1) + (P + 1) 2^(k-L))."""
    ctx = mpc.local_context(2, seed=2, precision_bits=bits)
    top = (62 - 2 * bits) * np.log(2)
    a = np.concatenate([np.linspace(-6, 2, 41), [-256.0, top - 1e-3]])
    out = ctx.share(a, owner=0, wide=True).exp().reveal()    # -256 is wider than 2^(31-L)
    bound = np.maximum(1, np.exp(a)) * (a**2 / 2**9 + 3 * 2.0 ** (8 - bits))
    assert np.all(np.abs(out - np.exp(a)) <= bound)
    with pytest.raises(ValueError, match=r"exp of a public value outside its domain: every x "
                                         r"must lie in \[-2\^squarings, \(62 - 2 precision_bits\) "
                                         r"ln 2\] at squarings=8, precision_bits=%d" % bits):
        ctx.constant(np.array([top + 1e-3])).exp()
    with pytest.raises(ValueError, match=r"exp of a public value outside its domain"):
        ctx.constant(np.array([-257.0]), wide=True).exp()


def test_exp_refuses_a_precision_too_low_for_its_squarings():
    """The reported e^0.5 = 2.64 at L = 8: 8 squarings need L >= 16; 0 <= k <= L - 8 works."""
    ctx = mpc.local_context(2, seed=1, precision_bits=8)
    x = ctx.share(np.array([0.5]), owner=0)
    with pytest.raises(ValueError, match=r"exp with squarings=8 needs precision_bits >= 16, got "
                                         r"precision_bits=8"):
        x.exp()
    assert np.allclose(x.exp(squarings=0).reveal(), 1.5)               # 1 + x, as stated
    ctx = mpc.local_context(2, seed=1, precision_bits=12)
    out = ctx.share(np.array([0.5]), owner=0).exp(squarings=4).reveal()
    assert abs(out[0] - np.exp(0.5)) <= np.exp(0.5) * (0.25 / 2**5 + 3 * 2.0**-8)
    with pytest.raises(ValueError, match="exp squarings must be an integer >= 0"):
        ctx.share(np.array([0.5]), owner=0).exp(squarings=-1)
