"""MovieLens 100K: the mku.sh split, the ALS factorization, its RMSE and its cache.

Tests that read ml-100k need PPML_DATA (skipped without it); the d = 3 fit runs once per session
(`movielens3`)."""

import numpy as np
import pytest

from ppml.data import movielens
from ppml.data.movielens import (MOVIES, USERS, load_movielens_embeddings, mku_split,
                                 read_ratings, rmse)

# The first (user, item) pairs of ml-100k's shipped u1.test, as quoted by its users.
U1_TEST_HEAD = [(1, 6), (1, 10), (1, 12), (1, 14), (1, 17), (1, 20), (1, 23), (1, 24)]
# Measured: the global-mean predictor scores 1.154 on u1.test and ALS (d = 3) 0.939.
RMSE_MARGIN = 0.15


@pytest.fixture(scope="module")
def ratings(movielens_dir):
    return read_ratings(movielens_dir)


def test_u_data_is_read_in_file_order(ratings):
    assert ratings.shape == (100_000, 4)
    assert ratings[:, 0].max() == USERS and ratings[:, 1].max() == MOVIES
    assert np.array_equal(np.bincount(ratings[:, 2])[1:], [6110, 11370, 27145, 34174, 21201])
    pairs = ratings[:, 0] * 10_000 + ratings[:, 1]
    assert len(np.unique(pairs)) == len(pairs)   # (user, item) is a key: the sort order is total


def test_u1_split_is_mku_sh(ratings):
    base, test = mku_split(ratings, fold=1)
    assert base.shape == (80_000, 4) and test.shape == (20_000, 4)
    assert [tuple(row) for row in test[:8, :2]] == U1_TEST_HEAD
    for part in (base, test):   # sort -k 1,1n -k 2,2n
        keys = part[:, 0] * 10_000 + part[:, 1]
        assert np.all(np.diff(keys) > 0)
    assert test[:, 0].max() == 462   # u.data's first 20,000 lines hold users 1..462 only

    def rows(part):
        return part[np.lexsort((part[:, 1], part[:, 0]))]

    assert np.array_equal(rows(np.concatenate([base, test])), rows(ratings))
    assert np.array_equal(rows(test), rows(ratings[:20_000]))


def test_the_five_test_folds_partition_u_data(ratings):
    tests = [mku_split(ratings, fold)[1] for fold in range(1, 6)]
    everything = np.concatenate(tests)
    assert np.array_equal(everything[np.lexsort((everything[:, 1], everything[:, 0]))],
                          ratings[np.lexsort((ratings[:, 1], ratings[:, 0]))])
    with pytest.raises(ValueError, match=r"fold must be <= 5"):
        mku_split(ratings, fold=6)


def test_als_beats_the_global_mean_by_a_margin(movielens3, ratings):
    base, test = mku_split(ratings)
    baseline = float(np.sqrt(np.mean((test[:, 2] - base[:, 2].mean()) ** 2)))
    assert baseline == pytest.approx(1.154, abs=1e-3)
    assert movielens3.rmse_test < baseline - RMSE_MARGIN
    assert movielens3.rmse_train < movielens3.rmse_test
    assert movielens3.rmse_test == pytest.approx(rmse(movielens3.users, movielens3.movies, test))
    assert movielens3.rmse_train == pytest.approx(
        rmse(movielens3.users, movielens3.movies, base))


def test_embeddings_shapes_and_unrated_movies(movielens3, ratings):
    assert movielens3.users.shape == (USERS, 3) and movielens3.movies.shape == (MOVIES, 3)
    assert (movielens3.d, movielens3.seed) == (3, 0)
    assert not movielens3.users.flags.writeable
    base, _ = mku_split(ratings)
    unrated = np.setdiff1d(np.arange(MOVIES), base[:, 1] - 1)
    assert len(unrated) == 32 and unrated.min() == 598   # movie ids 599, 711, ...
    assert np.all(movielens3.movies[unrated] == 0)
    assert np.all(np.linalg.norm(np.delete(movielens3.movies, unrated, axis=0), axis=1) > 0)


def test_the_cache_is_reused_per_dims_and_seed(movielens3, movielens_dir, session_cache,
                                               monkeypatch):
    def refit(*args, **kwargs):
        raise AssertionError("ALS ran again although the factorization is cached")

    monkeypatch.setattr(movielens, "fit_als", refit)
    again = load_movielens_embeddings(3, data_dir=movielens_dir, cache_dir=session_cache)
    assert np.array_equal(again.users, movielens3.users)
    assert np.array_equal(again.movies, movielens3.movies)
    assert again.rmse_test == movielens3.rmse_test
    with pytest.raises(AssertionError, match="ALS ran again"):   # another seed is another entry
        load_movielens_embeddings(3, seed=1, data_dir=movielens_dir, cache_dir=session_cache)


def test_bounds_and_missing_data_dir(no_data_dir):
    with pytest.raises(ValueError, match=r"dims must be <= 100"):
        load_movielens_embeddings(101)
    with pytest.raises(ValueError, match=r"dims must be >= 1"):
        load_movielens_embeddings(0)
    with pytest.raises(FileNotFoundError, match=r"PPML_DATA.*data_dir="):
        load_movielens_embeddings(3)
