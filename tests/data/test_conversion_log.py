"""The synthetic click and conversion log: shapes, ranges, Zipf popularity, determinism."""

import numpy as np

from ppml.data.conversion_log import conversion_log


def test_values_lie_in_range_and_conversions_follow_clicks():
    log = conversion_log(5000, 4, 3, 10, 5, 1.1, 0.3, 0.5, seed=2)
    assert log.keys.shape == (5000,) and log.values.shape == (5000, 4)
    assert log.values.min() >= 0 and log.values.max() <= 3
    assert (log.values[:, 1] <= log.values[:, 0]).all()
    assert ((log.values[:, 2:] > 0).any(axis=1) <= (log.values[:, 1] > 0)).all()
    assert log.pair(23) == (4, 3) and log.catalog == 50


def test_key_popularity_is_heavy_tailed_and_the_log_is_reproducible():
    log = conversion_log(20000, 2, 1, 100, 10, 1.1, 0.3, 0.1, seed=0)
    counts = np.sort(np.bincount(log.keys, minlength=1000))[::-1]
    assert counts[0] > 50 * max(counts[500], 1)                # a long tail of rare keys
    again = conversion_log(20000, 2, 1, 100, 10, 1.1, 0.3, 0.1, seed=0)
    assert (again.keys == log.keys).all() and (again.values == log.values).all()
