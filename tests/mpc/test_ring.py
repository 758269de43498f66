import numpy as np
from hypothesis import given, settings, strategies as st

from ppml.mpc import ring


@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32))
@settings(max_examples=25, deadline=None)
def test_limb_matmul_is_exact(m, k, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**64, (3, m, k), dtype=np.uint64, endpoint=False)
    b = rng.integers(0, 2**64, (k, n), dtype=np.uint64, endpoint=False)
    old = ring.LIMB_MATMUL_MIN_WORK
    ring.LIMB_MATMUL_MIN_WORK = 1
    try:
        assert np.array_equal(ring.matmul(a[None], b[None]), np.matmul(a, b)[None])
    finally:
        ring.LIMB_MATMUL_MIN_WORK = old


@given(st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=6), st.booleans())
def test_count_wraps_matches_python_integers(words, signed):
    stack = np.array(words, dtype=np.uint64)[:, None]
    theta = int(ring.count_wraps(stack, signed)[0])
    values = [w - 2**64 if signed and w >= 2**63 else w for w in words]
    total = sum(values)
    reduced = (total % 2**64)
    if signed and reduced >= 2**63:
        reduced -= 2**64
    assert total == reduced + theta * 2**64


def test_matmul_follows_numpy_promotion_rules():
    rng = np.random.default_rng(0)
    w = rng.integers(0, 100, (2, 5, 4, 4), dtype=np.uint64)
    v = rng.integers(0, 100, (2, 4), dtype=np.uint64)
    assert np.array_equal(ring.matmul(w, v), np.stack([w[i] @ v[i] for i in range(2)]))
    assert np.array_equal(ring.matmul(v, w), np.stack([v[i] @ w[i] for i in range(2)]))
    assert np.array_equal(ring.matmul(v, v), np.array([v[0] @ v[0], v[1] @ v[1]]))
    assert ring.matmul_shape((5, 4, 4), (4,)) == (5, 4)
