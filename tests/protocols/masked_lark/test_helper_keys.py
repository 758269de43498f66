"""A helper's HPKE keys, one per worker, each made where it opens: every report opens with the
key its id names, whatever the number of workers; a share moved or altered does not."""

import numpy as np
import pytest

from ppml.protocols.masked_lark.helper_keys import HelperKeys
from ppml.protocols.masked_lark.reports import key_index, make_reports


def _reports(keys: list, n: int = 40, d: int = 3):
    values = np.arange(n * d, dtype=np.int64).reshape(n, d)
    seen = np.zeros((n, 8), dtype=np.uint8)
    return values, make_reports(values, seen, keys, seed=None, batch=0)


def _opened_sum(helpers: list, made, d: int) -> np.ndarray:
    total = 0
    for j, keys in enumerate(helpers):
        plain, opened = keys.open(made.sealed[j], made.public)
        assert opened.all()
        total = total + plain.view(np.uint64).reshape(-1, d)
    return total


def test_one_key_opens_every_report():
    helpers = [HelperKeys(j) for j in range(2)]
    values, made = _reports([h.public for h in helpers])
    assert np.array_equal(_opened_sum(helpers, made, 3).view(np.int64), values)


@pytest.mark.ray
def test_each_worker_opens_with_its_own_key(ray_cluster):
    helpers = [HelperKeys(0, workers=2), HelperKeys(1, workers=3)]
    try:
        assert len(set(helpers[1].public)) == 3                 # made apart: all different
        values, made = _reports([h.public for h in helpers])
        assert set(key_index(made.public, 3).tolist()) == {0, 1, 2}
        assert np.array_equal(_opened_sum(helpers, made, 3).view(np.int64), values)
    finally:
        for h in helpers:
            h.close()


def test_a_moved_or_altered_share_does_not_open():
    helpers = [HelperKeys(j) for j in range(2)]
    _, made = _reports([h.public for h in helpers])
    sealed = made.sealed[0].copy()
    sealed[[3, 4]] = sealed[[4, 3]]                               # swapped between reports
    sealed[7, -1] ^= 1                                            # altered
    _, opened = helpers[0].open(sealed, made.public)
    assert np.flatnonzero(~opened).tolist() == [3, 4, 7]
    _, opened = helpers[1].open(made.sealed[0], made.public)     # another helper's shares
    assert not opened.any()
