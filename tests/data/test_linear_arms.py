"""The LinUCB-DS instance: shapes, rewards theta . x_i +- R, errors.  MovieLens tests need
PPML_DATA (skipped without it)."""

import numpy as np
import pytest

from ppml.data.linear_arms import (MOVIE_NORM, PAPER_NOISE, USER_NORM, LinearArms,
                                   load_linear_arms)


def test_synthetic_instance_is_seeded_and_scaled_like_movielens():
    arms = load_linear_arms("synthetic", arms=15, dims=3, seed=4)
    assert arms.theta.shape == (3,) and arms.arms.shape == (15, 3) and (arms.K, arms.d) == (15, 3)
    assert np.linalg.norm(arms.theta) == pytest.approx(USER_NORM)
    assert np.allclose(np.linalg.norm(arms.arms, axis=1), MOVIE_NORM)
    assert np.array_equal(arms.means, arms.arms @ arms.theta)
    assert np.array_equal(arms.item_ids, np.arange(1, 16))
    again = load_linear_arms("synthetic", arms=15, dims=3, seed=4)
    assert np.array_equal(again.arms, arms.arms) and np.array_equal(again.theta, arms.theta)
    other = load_linear_arms("synthetic", arms=15, dims=3, seed=5)
    assert not np.array_equal(other.theta, arms.theta)


def test_rewards_are_the_mean_plus_or_minus_r_and_reproducible():
    arms = load_linear_arms("synthetic", arms=4, dims=2)
    assert arms.noise == PAPER_NOISE
    rewards = np.array([[arms.reward(t, a) for a in range(4)] for t in range(500)])
    assert np.allclose(np.abs(rewards - arms.means), PAPER_NOISE)
    assert 0.4 < np.mean(rewards > arms.means) < 0.6
    assert arms.reward(123, 2) == rewards[123, 2]
    exact = load_linear_arms("synthetic", arms=4, dims=2, noise=0.0)
    assert [exact.reward(t, 1) for t in range(5)] == [exact.means[1]] * 5
    assert arms.best_arm() == int(np.argmax(arms.means))


def test_constructor_checks_shapes_noise_and_indices():
    arms = LinearArms("toy", theta=[1.0, 2.0], arms=[[1.0, 0.0], [0.0, 1.0]], noise=0.0)
    assert list(arms.means) == [1.0, 2.0] and arms.best_arm() == 1
    assert not arms.arms.flags.writeable
    with pytest.raises(ValueError, match=r"theta must be \[d\] and arms \[K, d\]"):
        LinearArms("toy", theta=[1.0, 2.0], arms=[[1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match=r"noise must be a finite number >= 0"):
        LinearArms("toy", theta=[1.0], arms=[[1.0]], noise=-0.1)
    with pytest.raises(IndexError, match=r"arm must be an integer in \[0, 2\)"):
        arms.reward(0, 2)
    with pytest.raises(IndexError, match=r"step must be an integer"):
        arms.reward(-1, 0)


def test_parameter_errors_name_the_parameter_and_bound(no_data_dir):
    with pytest.raises(ValueError, match=r"unknown linear-arms dataset 'netflix'.*movielens"):
        load_linear_arms("netflix", arms=5, dims=3)
    with pytest.raises(ValueError, match=r"arm_choice must be one of first, random; got 'best'"):
        load_linear_arms("movielens", arms=5, dims=3, arm_choice="best")
    with pytest.raises(ValueError, match=r"arms must be <= 1682 \(MovieLens 100K has 1682"):
        load_linear_arms("movielens", arms=1683, dims=3)
    with pytest.raises(ValueError, match=r"user must be <= 942 \(MovieLens 100K has 943 users"):
        load_linear_arms("movielens", arms=5, dims=3, user=943)
    with pytest.raises(ValueError, match=r"user must be >= 0"):
        load_linear_arms("movielens", arms=5, dims=3, user=-1)
    with pytest.raises(FileNotFoundError, match=r"PPML_DATA"):
        load_linear_arms("movielens", arms=5, dims=3)


def test_movielens_first_movies_and_one_user(movielens3, movielens_dir):
    arms = load_linear_arms("movielens", arms=20, dims=3, user=7, data_dir=movielens_dir)
    assert np.array_equal(arms.theta, movielens3.users[7])
    assert np.array_equal(arms.arms, movielens3.movies[:20])
    assert np.array_equal(arms.item_ids, np.arange(1, 21))
    assert arms.name == "movielens" and arms.arms.shape == (20, 3)
    assert 1.0 < arms.means.min() and arms.means.max() < 6.0   # predicted ratings


def test_movielens_random_movies_are_distinct_and_seeded(movielens3, movielens_dir):
    arms = load_linear_arms("movielens", arms=30, dims=3, arm_choice="random",
                            data_dir=movielens_dir)
    assert len(np.unique(arms.item_ids)) == 30 and np.all(np.diff(arms.item_ids) > 0)
    assert np.array_equal(arms.arms, movielens3.movies[arms.item_ids - 1])
    again = load_linear_arms("movielens", arms=30, dims=3, arm_choice="random",
                             data_dir=movielens_dir)
    assert np.array_equal(again.item_ids, arms.item_ids)
