"""The SpectralUCB-DS instance: the k-NN Laplacian, its eigenvectors as arms, alpha = Q^T f."""

import numpy as np
import pytest

from ppml.data.graph import (SpectralArms, canonical_eigenvectors, knn_laplacian,
                             load_spectral_arms, spectral_arms)
from ppml.data.linear_arms import load_linear_arms


@pytest.fixture(scope="module")
def points():
    return np.random.default_rng(0).standard_normal((40, 3))


def test_laplacian_of_the_symmetrised_knn_graph(points):
    laplacian = knn_laplacian(points, k_neighbours=5)
    weights = np.diag(np.diag(laplacian)) - laplacian
    assert np.array_equal(laplacian, laplacian.T)
    assert np.allclose(laplacian.sum(axis=1), 0)
    assert set(np.unique(weights)) == {0.0, 1.0} and np.all(np.diag(weights) == 0)
    assert np.all(np.diag(laplacian) >= 5)   # own 5 neighbours, plus who picked it
    distances = np.linalg.norm(points[:, None] - points[None], axis=2)
    np.fill_diagonal(distances, np.inf)
    nearest = np.argsort(distances, axis=1)[:, :5]
    for i in range(len(points)):
        assert np.all(weights[i, nearest[i]] == 1)
    assert np.linalg.eigvalsh(laplacian).min() > -1e-9   # PSD


def test_eigenvectors_are_orthonormal_arms(points):
    vectors, eigenvalues = spectral_arms(points, k_neighbours=5)
    laplacian = knn_laplacian(points, k_neighbours=5)
    assert vectors.shape == (40, 40) and eigenvalues.shape == (40,)
    assert np.allclose(vectors.T @ vectors, np.eye(40)) and np.allclose(vectors @ vectors.T,
                                                                        np.eye(40))
    assert np.allclose(vectors @ np.diag(eigenvalues) @ vectors.T, laplacian)
    assert np.all(np.diff(eigenvalues) >= 0) and eigenvalues[0] == pytest.approx(0, abs=1e-9)
    assert np.all(eigenvalues >= 0)
    first = np.argmax(np.abs(vectors) > 1e-6 * np.abs(vectors).max(axis=0), axis=0)
    assert np.all(vectors[first, np.arange(40)] > 0)   # sign convention


def test_few_nodes_make_the_complete_graph():
    # The paper's K = N = d = 10 with 10 neighbours: every other movie is among the 10 nearest.
    points = np.random.default_rng(1).standard_normal((10, 10))
    complete = 10 * np.eye(10) - np.ones((10, 10))
    assert np.array_equal(knn_laplacian(points, k_neighbours=10), complete)
    assert np.array_equal(knn_laplacian(points, k_neighbours=9), complete)
    vectors, eigenvalues = spectral_arms(points, k_neighbours=10)
    assert eigenvalues[0] == pytest.approx(0, abs=1e-9) and np.allclose(eigenvalues[1:], 10)
    # Eigenvalue 10 has a 9-dimensional eigenspace: any rotation of it is a valid solver output.
    rotation = np.linalg.qr(np.random.default_rng(2).standard_normal((9, 9)))[0]
    rotated = vectors.copy()
    rotated[:, 1:] = vectors[:, 1:] @ rotation
    assert not np.allclose(rotated, vectors)
    assert np.allclose(canonical_eigenvectors(rotated, eigenvalues), vectors)
    assert np.allclose(canonical_eigenvectors(-vectors, eigenvalues), vectors)
    with pytest.raises(ValueError, match=r"k_neighbours must be >= 1"):
        knn_laplacian(points, k_neighbours=0)
    with pytest.raises(ValueError, match=r"N >= 2"):
        knn_laplacian(points[:1])


def test_spectral_instance_has_the_linear_instance_rewards():
    linear = load_linear_arms("synthetic", arms=30, dims=4, seed=2)
    spectral = load_spectral_arms("synthetic", arms=30, dims=4, seed=2)
    assert isinstance(spectral, SpectralArms)
    assert spectral.arms.shape == (30, 30) and spectral.theta.shape == (30,)
    assert np.allclose(spectral.theta, spectral.arms.T @ linear.means)
    assert np.allclose(spectral.means, linear.means)
    assert spectral.best_arm() == linear.best_arm()
    assert all(spectral.reward(t, a) == pytest.approx(linear.reward(t, a))
               for t in range(50) for a in (0, 7, 29))
    vectors, eigenvalues = spectral_arms(linear.arms)
    assert np.array_equal(spectral.eigenvalues, eigenvalues)


def test_movielens_spectral_instance(movielens3, movielens_dir):
    spectral = load_spectral_arms(arms=50, dims=3, user=3, data_dir=movielens_dir)
    assert spectral.name == "movielens" and spectral.arms.shape == (50, 50)
    assert np.array_equal(spectral.item_ids, np.arange(1, 51))
    assert np.allclose(spectral.means, movielens3.movies[:50] @ movielens3.users[3])
