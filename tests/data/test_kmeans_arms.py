import numpy as np
import pytest
from sklearn.cluster import KMeans

from ppml.data import load_contextual
from ppml.data.kmeans_arms import SIGMA, kernel_means, load_kmeans


def test_closest_center_has_mean_one_and_the_highest_mean():
    data = load_kmeans("digits", arms=25, dims=10, horizon=200, data_seed=1)
    assert data.name == "kmeans_digits" and data.centers.shape == (25, 10)
    for t in range(200):
        distances = np.linalg.norm(data.centers - data.context(t), axis=1)
        means = data.mean_rewards(t)
        assert data.best_arm(t) == np.argmin(distances)
        assert means.max() == 1.0 and np.all((means > 0) & (means <= 1))
        assert np.all(np.diff(means[np.argsort(distances)]) <= 1e-12)  # farther, lower


def test_means_are_the_gaussian_kernel_scaled_to_the_closest_center():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    centers = rng.standard_normal((6, 3)) / 2
    kernel = np.exp(-np.sum((x[:, None] - centers[None]) ** 2, axis=2) / (2 * SIGMA**2))
    assert np.allclose(kernel_means(x, centers), kernel / kernel.max(axis=1, keepdims=True))


def test_a_thousand_arms_at_small_horizon():
    data = load_contextual("kmeans_digits", arms=1000, dims=20, horizon=8, data_seed=0)
    assert data.arms == 1000 and data.horizon == 8
    assert data.mean_rewards(7).shape == (1000,)
    rewards = data.rewards(3)
    assert rewards.shape == (1000,) and rewards[data.best_arm(3)] == 1.0
    assert data.regrets(np.zeros(8, dtype=int)).shape == (8,)


def test_rewards_are_bernoulli_with_the_means():
    data = load_kmeans("digits", arms=10, dims=10, data_seed=4)
    means = data.mean_rewards_at(np.arange(data.horizon))
    rewards = np.stack([data.rewards(t) for t in range(data.horizon)])
    assert abs(rewards.mean() - means.mean()) < 0.02
    assert np.all(rewards[means == 1.0] == 1.0)


def test_clustering_is_seeded_and_cached(monkeypatch):
    a = load_kmeans("digits", arms=30, dims=6, horizon=10, data_seed=2)
    monkeypatch.setattr(KMeans, "fit", lambda *args, **kwargs: pytest.fail("KMeans refitted"))
    b = load_kmeans("digits", arms=30, dims=6, horizon=10, data_seed=2)
    assert np.array_equal(a.centers, b.centers)
    assert all(np.array_equal(a.rewards(t), b.rewards(t)) for t in range(10))


def test_different_seeds_give_different_clusterings():
    a = load_kmeans("digits", arms=12, dims=6, horizon=10, data_seed=2)
    b = load_kmeans("digits", arms=12, dims=6, horizon=10, data_seed=3)
    assert not np.allclose(a.centers, b.centers)


def test_bounds():
    with pytest.raises(ValueError, match=r"arms must be <= 1797"):
        load_kmeans("digits", arms=1798)
    with pytest.raises(ValueError, match=r"dims must be <= 64"):
        load_kmeans("digits", dims=65)
    with pytest.raises(ValueError, match=r"base must be one of digits, mnist"):
        load_kmeans("cifar")


def test_kmeans_name_uses_digits_without_a_data_dir(no_data_dir):
    assert load_contextual("kmeans", arms=5, dims=4, horizon=3, data_seed=0).name == \
        "kmeans_digits"


def test_kmeans_over_mnist(mnist20, mnist_dir):
    data = load_contextual("kmeans", arms=10, dims=20, horizon=50, data_seed=0,
                           data_dir=mnist_dir)
    assert data.name == "kmeans_mnist" and data.centers.shape == (10, 20)
    assert np.array_equal(data.contexts, mnist20.train_contexts[data.source_index])
    assert all(data.best_mean(t) == 1.0 for t in range(50))
