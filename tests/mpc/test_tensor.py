"""Every arithmetic operation matches numpy within the fixed-point tolerance, for P = 2, 3, 5."""

import numpy as np
import pytest

import ppml.mpc as mpc

from .conftest import PARTIES

ULP = 2.0**-20


def share_pair(ctx, rng, shape_a=(4, 3), shape_b=(4, 3)):
    a, b = rng.uniform(-3, 3, shape_a), rng.uniform(-3, 3, shape_b)
    return a, b, ctx.share(a, owner=0), ctx.share(b, owner=ctx.parties - 1)


@pytest.mark.parametrize("parties", PARTIES)
@pytest.mark.parametrize("truncation", ["exact", "probabilistic"])
def test_linear_and_product_operations(parties, truncation, rng):
    ctx = mpc.local_context(parties, seed=1, truncation=truncation)
    a, b, x, y = share_pair(ctx, rng)
    tol = (parties + 2) * ULP * 4
    assert np.allclose((x + y).reveal(), a + b, atol=2 * ULP)
    assert np.allclose((x - y).reveal(), a - b, atol=2 * ULP)
    assert np.allclose((-x).reveal(), -a, atol=ULP)
    assert np.allclose((x * y).reveal(), a * b, atol=tol)
    assert np.allclose(x.square().reveal(), a * a, atol=tol)
    assert np.allclose((x @ y.T).reveal(), a @ b.T, atol=3 * tol)
    assert np.allclose((x * 2.5).reveal(), a * 2.5, atol=tol)
    assert np.allclose((3 * x).reveal(), 3 * a, atol=3 * ULP)
    assert np.allclose((x + 1.25).reveal(), a + 1.25, atol=ULP)
    assert np.allclose((2 - x).reveal(), 2 - a, atol=ULP)
    assert np.allclose((x / 4.0).reveal(), a / 4, atol=tol)
    assert np.allclose(x.sum(axis=0).reveal(), a.sum(axis=0), atol=8 * ULP)
    assert np.allclose(x[1:3, 0].reveal(), a[1:3, 0], atol=ULP)
    assert np.allclose(x.T.reshape(12).reveal(), a.T.reshape(12), atol=ULP)


@pytest.mark.parametrize("parties", [2, 3])
def test_batched_matrix_products(parties, rng):
    ctx = mpc.local_context(parties, seed=2)
    w, v = rng.uniform(-1, 1, (5, 4, 4)), rng.uniform(-1, 1, 4)
    sw, sv = ctx.share(w, owner=0), ctx.share(v, owner=1)
    assert np.allclose((sw @ sv).reveal(), w @ v, atol=1e-5)      # [A,D,D] @ [D]
    assert np.allclose((sv @ sw).reveal(), v @ w, atol=1e-5)      # [D] @ [A,D,D]
    assert np.allclose((sv @ sv).reveal(), v @ v, atol=1e-5)      # dot product
    m = rng.uniform(-1, 1, (4, 2))
    assert np.allclose((sw @ m).reveal(), w @ m, atol=1e-5)       # public right operand
    assert np.allclose((m.T @ sv).reveal(), m.T @ v, atol=1e-5)   # public left operand
    assert np.allclose((sw * sv).reveal(), w * v, atol=1e-5)      # broadcasting product


def test_bits_times_reals_need_no_truncation(rng):
    ctx = mpc.local_context(2, seed=3)
    a = rng.uniform(-2, 2, 8)
    x = ctx.share(a, owner=0)
    bit = ctx.share(np.array([0, 1] * 4), owner=1, frac_bits=0)
    before = ctx.comm.stats[0].rounds
    product = bit * x
    assert ctx.comm.stats[0].rounds - before == 1
    assert np.allclose(product.reveal(), a * np.array([0, 1] * 4), atol=ULP)


@pytest.mark.parametrize("parties", [2, 3])
def test_products_share_one_beaver_round_and_one_truncation(parties, rng):
    ctx = mpc.local_context(parties, seed=3)
    a, b, m = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, 4), rng.uniform(-1, 1, (3, 4, 4))
    x, y, w = ctx.share(a, owner=0), ctx.share(b, owner=1), ctx.share(m, owner=0)
    bits = ctx.share(np.array([1, 0, 1]), owner=1, frac_bits=0)
    before = ctx.comm.stats[0].rounds
    xy, scaled, bx = mpc.products([(x, y), (w, y.reshape(1, 4, 1)), (bits.reshape(3, 1), x)])
    assert ctx.comm.stats[0].rounds - before == 2           # one Beaver round, one truncation
    assert np.allclose(xy.reveal(), a * b, atol=1e-5)
    assert np.allclose(scaled.reveal(), m * b[:, None], atol=1e-5)
    assert bx.frac_bits == ctx.precision_bits               # bit x real: not truncated
    assert np.allclose(bx.reveal(), a * np.array([1, 0, 1])[:, None], atol=ULP)
    before = ctx.comm.stats[0].rounds
    mv, outer = mpc.products([(w, y), (x.reshape(3, 4, 1), x.reshape(3, 1, 4))], kind="matmul")
    assert ctx.comm.stats[0].rounds - before == 2
    assert np.allclose(mv.reveal(), m @ b, atol=1e-5)
    assert np.allclose(outer.reveal(), a[:, :, None] * a[:, None, :], atol=1e-5)


def test_products_keep_scale_skip_the_truncation(rng):
    ctx = mpc.local_context(2, seed=3)
    a, b = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, 4)
    x, y = ctx.share(a, owner=0), ctx.share(b, owner=1)
    before = ctx.comm.stats[0].rounds
    (xy,) = mpc.products([(x, y)], keep_scale=True)
    assert ctx.comm.stats[0].rounds - before == 1           # the Beaver round only
    assert xy.frac_bits == 2 * ctx.precision_bits
    assert np.allclose(xy.reveal(), a * b, atol=2.0**-38)   # exact up to the inputs' rounding


def test_a_product_beyond_the_ring_is_refused_before_its_round(rng):
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(rng.uniform(-1, 1, 4), owner=0)
    (wide,) = mpc.products([(x, x)], keep_scale=True)       # 2L = 40
    before = ctx.comm.stats[0].rounds
    for attempt in (lambda: wide * wide, lambda: wide.square(),
                    lambda: mpc.products([(wide, wide)], keep_scale=True)):
        with pytest.raises(ValueError, match=r"scale 2\^-80 does not fit the 64-bit ring"):
            attempt()
    assert ctx.comm.stats[0].rounds == before
    assert np.allclose((wide.at_precision() * x).reveal(),
                       x.reveal() ** 3, atol=1e-5)          # one truncation makes room


@pytest.mark.parametrize("parties", [2, 3])
def test_shared_operands_of_different_ranks_broadcast_like_numpy(parties, rng):
    """A scalar or a row meets a matrix by numpy's rules; the held-party axis never broadcasts
    against a logical one (constant(5) + x gave [11, 2] for x = [1, 2] at P = 2)."""
    ctx = mpc.local_context(parties, seed=2)
    a, row = rng.uniform(-3, 3, (parties, 4)), rng.uniform(-3, 3, 4)
    x, r, five = ctx.share(a, owner=0), ctx.constant(row), ctx.constant(5.0)
    assert np.allclose((five + x).reveal(), 5 + a, atol=ULP)
    assert np.allclose((x - five).reveal(), a - 5, atol=ULP)
    assert np.allclose((r + x).reveal(), row + a, atol=2 * ULP)
    assert np.allclose((x - r).reveal(), a - row, atol=2 * ULP)


def test_integer_sharing_reveals_integers():
    ctx = mpc.local_context(3, seed=4)
    x = ctx.share(np.array([-5, 7]), owner=2, frac_bits=0)
    out = (x * x).reveal()
    assert out.dtype == np.int64 and out.tolist() == [25, 49]


def test_binary_sharing_xor_and():
    ctx = mpc.local_context(3, seed=5)
    a, b = np.array([0b1100, 2**63 + 5], dtype=np.uint64), np.array([0b1010, 7], dtype=np.uint64)
    x, y = ctx.share_binary(a, owner=0), ctx.share_binary(b, owner=1)
    assert np.array_equal((x ^ y).reveal(), a ^ b)
    assert np.array_equal((x & y).reveal(), a & b)
    assert np.array_equal((~x).reveal(), ~a)
    assert np.array_equal((x >> 2).reveal(), a >> np.uint64(2))


def test_concatenate_stack_and_private_samples(rng):
    ctx = mpc.local_context(3, seed=6)
    a, b = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 2))
    x, y = ctx.share(a, owner=0), ctx.share(b, owner=1)
    bits = ctx.share(np.array([[1, 0], [0, 1]]), owner=2, frac_bits=0)
    assert np.allclose(mpc.concatenate([x, y], axis=1).reveal(), np.hstack([a, b]), atol=ULP)
    assert np.allclose(mpc.concatenate([y, bits], axis=-1).reveal(),
                       np.hstack([b, [[1, 0], [0, 1]]]), atol=ULP)
    assert np.allclose(mpc.stack([y, bits]).reveal(), np.stack([b, [[1, 0], [0, 1]]]), atol=ULP)
    y_bits = mpc.bernoulli(ctx, 0.25, (4000,)).reveal()
    assert set(np.unique(y_bits)) == {0, 1} and abs(y_bits.mean() - 0.25) < 0.03
    u = mpc.uniform(ctx, (4000,)).reveal()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.03
