import numpy as np
import pytest

from ppml.data.synthetic import load_synthetic


def test_shapes_unit_rows_and_linear_means():
    data = load_synthetic(arms=5, dims=7, horizon=300, data_seed=1)
    assert data.name == "synthetic" and data.contexts.shape == (300, 7)
    assert np.allclose(np.linalg.norm(data.contexts, axis=1), 1.0)
    assert np.allclose(np.linalg.norm(data.theta, axis=1), 1.0)
    means = data.mean_rewards_at(np.arange(300))
    assert np.allclose(means, (1 + data.contexts @ data.theta.T) / 2)
    assert means.min() >= 0 and means.max() <= 1


def test_seeded_and_prefix_stable():
    a = load_synthetic(arms=4, dims=3, horizon=100, data_seed=9)
    b = load_synthetic(arms=4, dims=3, horizon=40, data_seed=9)
    assert np.array_equal(a.theta, b.theta)
    assert np.array_equal(a.contexts[:40], b.contexts)
    assert all(np.array_equal(a.rewards(t), b.rewards(t)) for t in range(40))
    assert not np.array_equal(a.theta, load_synthetic(arms=4, dims=3, data_seed=10).theta)


def test_least_squares_recovers_half_theta():
    data = load_synthetic(arms=2, dims=4, horizon=20_000, data_seed=0)
    means = data.mean_rewards_at(np.arange(data.horizon))
    w, *_ = np.linalg.lstsq(data.contexts, means, rcond=None)
    assert np.allclose(w.T, data.theta / 2, atol=0.03)


def test_bounds():
    with pytest.raises(ValueError, match=r"arms must be >= 1"):
        load_synthetic(arms=0)
    with pytest.raises(ValueError, match=r"dims must be >= 1"):
        load_synthetic(dims=0)
