"""Algorithm 3: exact and bounded truncation never fail; probabilistic fails at about |x|/2^64."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.crypto.fixed import encode_integers
from ppml.mpc.protocols.truncate import truncate, truncate_each, wrap_count
from ppml.mpc.ring import ARITHMETIC

from ..conftest import PARTIES


def truncated(parties, mode, values, bits, seed=0):
    ctx = mpc.local_context(parties, seed=seed, truncation=mode)
    x = ctx.share(values, owner=0, frac_bits=0, wide=True)   # products before truncation
    (out,) = ctx.open([truncate(ctx, x.data, bits)], ARITHMETIC)
    return out.view(np.int64)


@pytest.mark.parametrize("parties", PARTIES)
def test_exact_rounds_within_p_half_ulps_over_the_whole_range(parties, rng):
    values = rng.integers(-(2**62), 2**62, 20_000, dtype=np.int64, endpoint=True)
    values[:4] = [-(2**62), 2**62, 0, -1]
    error = values / 2**20 - truncated(parties, "exact", values, 20)
    assert np.abs(error).max() <= parties / 2 + 0.5
    assert abs(error.mean()) < 0.05


@pytest.mark.parametrize("parties", PARTIES)
def test_bounded_is_exact_up_to_two_to_the_62(parties, rng):
    limit = 2**62
    values = rng.integers(-limit, limit, 20_000, dtype=np.int64, endpoint=True)
    values[:4] = [-limit, limit, 0, -1]
    error = values / 2**20 - truncated(parties, "bounded", values, 20)
    assert np.abs(error).max() < 1.0
    assert abs(error.mean()) < 0.05


@pytest.mark.parametrize("parties", PARTIES)
def test_probabilistic_is_right_for_small_values(parties, rng):
    values = rng.integers(-(2**40), 2**40, 20_000)
    error = values / 2**20 - truncated(parties, "probabilistic", values, 20)
    assert np.abs(error).max() <= parties / 2 + 0.5


def test_probabilistic_fails_at_the_paper_rate_for_large_values(rng):
    values = np.full(40_000, 2**60, dtype=np.int64)  # failure probability 2^60 / 2^64 = 1/16
    error = (values >> 20) - truncated(3, "probabilistic", values, 20)
    failures = np.mean(np.abs(error) > 3)
    assert 0.04 < failures < 0.085
    for mode in ("exact", "bounded"):
        assert np.all(np.abs(truncated(3, mode, values, 20) - (values >> 20)) <= 3)


def test_bounded_fails_above_two_to_the_62_where_exact_is_right(rng):
    """The tester's 17-25 wrong of 64 products in (2^62, 2^63): the bounded formula misses a
    wrap with probability (|x| - 2^62) / 2^63, a quarter at 1.5 2^62; at +-2^62 it never does;
    exact is right up to its rounding offset's edge 2^63 - P 2^(k-1)."""
    edge = np.array([2**62, -(2**62)] * 5000, dtype=np.int64)
    assert np.abs(truncated(2, "bounded", edge, 20, seed=5) - edge / 2**20).max() <= 1
    above = np.full(20_000, 3 * 2**61, dtype=np.int64)
    failures = np.mean(np.abs(truncated(2, "bounded", above, 20, seed=5) - above / 2**20) > 1)
    assert 0.23 < failures < 0.27
    top = np.array([3 * 2**61, 2**63 - 2 * 2**19 - 1, -(2**63)], dtype=np.int64)
    assert np.abs(truncated(2, "exact", top, 20) - top / 2**20).max() <= 1.5


def test_shift_by_zero_is_identity():
    ctx = mpc.local_context(2, seed=1)
    x = ctx.share(encode_integers([5]), owner=0, frac_bits=0)
    assert truncate(ctx, x.data, 0) is x.data


@pytest.mark.parametrize("mode", ["bounded", "exact", "probabilistic"])
def test_truncate_each_takes_its_own_bits_per_value(mode, rng):
    a = rng.integers(-(2**40), 2**40, (3, 4), dtype=np.int64)
    b = rng.integers(-(2**40), 2**40, 5, dtype=np.int64)
    c = rng.integers(-(2**40), 2**40, 6, dtype=np.int64)
    ctx = mpc.local_context(3, seed=4, truncation=mode)
    shared = [ctx.share(v, owner=k, frac_bits=0, wide=True).data
              for k, v in enumerate((a, b, c))]
    before = ctx.comm.stats[0].rounds
    out = truncate_each(ctx, [(shared[0], 20), (shared[1], 0), (shared[2], 12)])
    if mode == "bounded":
        assert ctx.comm.stats[0].rounds - before == 1          # every value in one opening
    opened = [o.view(np.int64) for o in ctx.open(out, ARITHMETIC)]
    assert opened[0].shape == (3, 4)
    assert np.abs(opened[0] - a / 2**20).max() <= 2                 # within P / 2 + 1/2 ulps
    assert np.array_equal(opened[1], b)                             # 0 bits: unchanged
    assert np.abs(opened[2] - c / 2**12).max() <= 2


@pytest.mark.parametrize("parties", [2, 3, 5])
def test_wrap_count_counts_how_often_the_shares_wrap(parties):
    """theta_x with sum_p x_p = x + theta_x 2^64 (shares and x unsigned), for any shares."""
    ctx = mpc.local_context(parties, seed=parties)
    rng = np.random.default_rng(parties)
    values = np.concatenate([rng.integers(0, 2**63, 50, dtype=np.uint64) * np.uint64(2),
                             np.array([0, 1, 2**64 - 1], dtype=np.uint64)])
    x = ctx.share(values.view(np.int64), owner=0, frac_bits=0, wide=True).data
    theta = ARITHMETIC.reconstruct(wrap_count(ctx, x))
    expected = [sum(int(share) for share in x[:, i]) >> 64 for i in range(len(values))]
    assert theta.tolist() == expected
