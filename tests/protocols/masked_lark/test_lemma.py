"""The slides' lemma and its corollary: exact modulo 2^64, each share alone uniform."""

import numpy as np
import pytest

from ppml.crypto.rng import Stream
from ppml.protocols.masked_lark.lemma import inner_product_share, share, subset_sum_share


@pytest.mark.parametrize("helpers", [2, 3, 5])
def test_the_helpers_parts_add_up_to_the_inner_product(helpers):
    rng = np.random.default_rng(0)
    w = rng.integers(-1000, 1000, size=40)
    v = rng.integers(0, 2**64, size=(40, 3), dtype=np.uint64)         # any ring elements
    parts = [inner_product_share(s, v) for s in share(w[None], helpers, Stream(bytes(32)))[:, 0]]
    exact = [sum(int(wi) * int(vi) for wi, vi in zip(w, v[:, c])) % 2**64 for c in range(3)]
    assert np.sum(parts, axis=0, dtype=np.uint64).tolist() == exact


def test_the_corollary_sums_a_secret_subset():
    v = np.arange(10, dtype=np.uint64) * 7
    chosen = np.zeros(10, dtype=np.int64)
    chosen[[1, 4, 9]] = 1
    shares = share(chosen[None], 2, Stream(bytes(32)))[:, 0]
    assert int(np.sum([subset_sum_share(s, v) for s in shares], dtype=np.uint64)) == 7 * 14


def test_a_share_alone_does_not_depend_on_w():
    first = [share(np.array([[w] * 4000]), 2, Stream(bytes(32)))[0, 0] for w in (0, 1)]
    assert np.array_equal(first[0], first[1])           # the first share is the stream's alone
    bits = (first[0] >> np.uint64(63)).mean()
    assert abs(bits - 0.5) < 0.05


def test_shapes_must_match():
    with pytest.raises(ValueError, match="the share has \\(3,\\) entries and v has \\(4,\\) rows"):
        inner_product_share(np.zeros(3, np.uint64), np.zeros((4, 2), np.uint64))
