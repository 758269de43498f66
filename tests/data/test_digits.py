import numpy as np
import pytest

from ppml.data.digits import DIGITS_IMAGES, digits_contexts, load_digits


def test_shapes_unit_rows_and_ten_arms():
    data = load_digits(dims=20, data_seed=0)
    assert data.name == "digits"
    assert data.contexts.shape == (DIGITS_IMAGES, 20) and data.contexts.dtype == np.float64
    assert np.allclose(np.linalg.norm(data.contexts, axis=1), 1.0)
    assert data.arms == 10
    assert sorted(data.source_index) == list(range(DIGITS_IMAGES))
    assert np.array_equal(np.bincount(data.labels),
                          [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])


def test_reward_is_one_for_the_correct_class_only():
    data = load_digits(dims=8, horizon=50, data_seed=5)
    for t in range(50):
        label = int(data.labels[t])
        assert data.reward(t, label) == 1.0
        assert [data.reward(t, a) for a in range(10) if a != label] == [0.0] * 9
        assert data.best_arm(t) == label


def test_seeded_order_is_reproducible():
    a, b = load_digits(dims=10, horizon=100, data_seed=7), load_digits(dims=10, horizon=100,
                                                                     data_seed=7)
    assert np.array_equal(a.contexts, b.contexts) and np.array_equal(a.labels, b.labels)
    c = load_digits(dims=10, horizon=100, data_seed=8)
    assert not np.array_equal(a.source_index, c.source_index)
    assert np.array_equal(load_digits(dims=10, horizon=30, data_seed=7).contexts,
                          a.contexts[:30])


def test_contexts_follow_the_source_rows():
    contexts, labels = digits_contexts(12)
    data = load_digits(dims=12, horizon=40, data_seed=1)
    assert np.array_equal(data.contexts, contexts[data.source_index])
    assert np.array_equal(data.labels, labels[data.source_index])


def test_long_horizon_cycles_through_reshuffled_passes():
    data = load_digits(dims=5, horizon=2 * DIGITS_IMAGES + 3, data_seed=2)
    first, second = data.source_index[:DIGITS_IMAGES], data.source_index[DIGITS_IMAGES:-3]
    assert sorted(first) == sorted(second) == list(range(DIGITS_IMAGES))
    assert not np.array_equal(first, second)


def test_full_dims_are_allowed_and_beyond_is_refused():
    assert load_digits(dims=64, horizon=5).dims == 64
    with pytest.raises(ValueError, match=r"dims must be <= 64"):
        load_digits(dims=65)
    with pytest.raises(ValueError, match=r"dims must be >= 1"):
        load_digits(dims=0)


def test_arms_other_than_ten_are_refused_pointing_to_kmeans():
    with pytest.raises(ValueError, match=r"arms must be .*10.*kmeans_digits"):
        load_digits(arms=20)


def test_bad_horizon_and_seed():
    with pytest.raises(ValueError, match=r"horizon must be >= 1"):
        load_digits(horizon=0)
    with pytest.raises(ValueError, match=r"data_seed must be >= 0"):
        load_digits(data_seed=-1)
    with pytest.raises(ValueError, match=r"data_seed must be an integer"):
        load_digits(data_seed=1.5)
