"""MNIST tests need PPML_DATA (skipped without it). PCA runs once per session (`mnist20`)."""

import gzip

import numpy as np
import pytest
from sklearn.decomposition import PCA

from ppml.data import load_contextual
from ppml.data.mnist import load_mnist, mnist_pca, read_idx

TRAIN_LABEL_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]


def test_train_and_test_sets(mnist20):
    assert mnist20.train_contexts.shape == (60_000, 20)
    assert mnist20.test_contexts.shape == (10_000, 20)
    assert np.array_equal(np.bincount(mnist20.train_labels), TRAIN_LABEL_COUNTS)
    assert mnist20.test_labels.shape == (10_000,)
    for contexts in (mnist20.train_contexts, mnist20.test_contexts):
        assert np.allclose(np.linalg.norm(contexts, axis=1), 1.0)
    assert mnist20.components.shape == (20, 784) and mnist20.mean.shape == (784,)


def test_test_set_is_projected_with_the_training_pca(mnist20, mnist_dir):
    images = read_idx(mnist_dir / "mnist/t10k-images-idx3-ubyte.gz").reshape(10_000, 784) / 255
    projected = (images[:100] - mnist20.mean) @ mnist20.components.T
    projected /= np.linalg.norm(projected, axis=1, keepdims=True)
    assert np.allclose(projected, mnist20.test_contexts[:100])
    # The training mean, not the test mean, centres the test images.
    assert not np.allclose(mnist20.mean, images.mean(axis=0))


def test_pca_cache_is_reused(mnist20, mnist_dir, session_cache, monkeypatch):
    def refit(*args, **kwargs):
        raise AssertionError("PCA was fitted again although the projection is cached")

    monkeypatch.setattr(PCA, "fit", refit)
    again = mnist_pca(20, mnist_dir, session_cache)
    assert np.array_equal(again.train_contexts, mnist20.train_contexts)
    assert np.array_equal(again.test_contexts, mnist20.test_contexts)
    assert not [p for p in session_cache.iterdir() if p.name.startswith(".")]  # no temp files


def test_training_stream_is_a_seeded_sweep(mnist20, mnist_dir):
    data = load_mnist(horizon=500, data_seed=3, data_dir=mnist_dir)
    assert data.name == "mnist" and data.arms == 10 and data.contexts.shape == (500, 20)
    assert np.array_equal(data.contexts, mnist20.train_contexts[data.source_index])
    assert np.array_equal(data.labels, mnist20.train_labels[data.source_index])
    for t in range(20):
        assert data.reward(t, int(data.labels[t])) == 1.0
        assert data.mean_rewards(t).sum() == 1.0
    full = load_mnist(data_seed=3, data_dir=mnist_dir)
    assert full.horizon == 60_000 and np.array_equal(full.source_index[:500], data.source_index)
    assert sorted(full.source_index) == list(range(60_000))


def test_test_split_through_the_registry(mnist20, mnist_dir):
    data = load_contextual("mnist_test", arms=10, dims=20, horizon=None, data_seed=0,
                           data_dir=mnist_dir)
    assert data.name == "mnist_test" and data.horizon == 10_000
    assert np.array_equal(np.sort(data.source_index), np.arange(10_000))
    assert np.array_equal(data.contexts, mnist20.test_contexts[data.source_index])


def test_arms_and_dims_bounds(mnist_dir):
    with pytest.raises(ValueError, match=r"arms must be 10 .*kmeans_mnist"):
        load_mnist(data_dir=mnist_dir, arms=100)
    with pytest.raises(ValueError, match=r"dims must be <= 784"):
        load_mnist(dims=785, data_dir=mnist_dir)
    with pytest.raises(ValueError, match=r"split must be one of train, test"):
        load_mnist(data_dir=mnist_dir, split="valid")


def test_without_data_dir_the_error_says_how_to_fix(no_data_dir):
    with pytest.raises(FileNotFoundError, match=r"PPML_DATA.*data_dir="):
        load_contextual("mnist", arms=10, dims=20, horizon=10, data_seed=0)


def test_missing_mnist_file_is_named(tmp_path):
    (tmp_path / "mnist").mkdir()
    with pytest.raises(FileNotFoundError, match=r"mnist/train-images-idx3-ubyte\.gz"):
        mnist_pca(20, tmp_path)


def test_read_idx_refuses_a_non_idx_file(tmp_path):
    path = tmp_path / "bad.gz"
    with gzip.open(path, "wb") as out:
        out.write(b"\x00\x00\x08\x01\x00\x00\x00\x05abc")
    with pytest.raises(ValueError, match=r"header says \(5,\)"):
        read_idx(path)
    with gzip.open(path, "wb") as out:
        out.write(b"PK\x03\x04")
    with pytest.raises(ValueError, match="not an idx file"):
        read_idx(path)
