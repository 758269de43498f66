"""Samba's Bernoulli arms: item means, the two denominators, top-K order, rewards.  MovieLens and
Jester tests need PPML_DATA (skipped without it)."""

import numpy as np
import pytest

from ppml.data.bernoulli_items import (BernoulliArms, item_means, jester_counts,
                                       load_bernoulli_arms, movielens_counts)


@pytest.fixture(scope="module")
def movielens4(movielens_dir):
    return movielens_counts(4.0, movielens_dir)


@pytest.fixture(scope="module")
def jester45(jester_dir):
    return jester_counts(4.5, jester_dir)


def test_synthetic_means_are_seeded_and_sorted():
    arms = load_bernoulli_arms("synthetic", arms=12, seed=3)
    assert arms.K == 12 and np.all((arms.means >= 0) & (arms.means <= 1))
    assert np.all(np.diff(arms.means) <= 0)
    assert np.array_equal(arms.item_ids, np.arange(1, 13))
    assert np.array_equal(load_bernoulli_arms("synthetic", arms=12, seed=3).means, arms.means)


def test_rewards_are_reproducible_bernoulli_and_independent_across_arms():
    arms = BernoulliArms("toy", means=[0.5, 0.5, 0.2], item_ids=[1, 2, 3], seed=1)
    draws = np.array([[arms.reward(t, a) for a in range(3)] for t in range(4000)])
    assert set(np.unique(draws)) == {0.0, 1.0}
    assert draws.mean(axis=0) == pytest.approx([0.5, 0.5, 0.2], abs=0.03)
    assert 0.45 < np.mean(draws[:, 0] == draws[:, 1]) < 0.55   # no shared stream
    assert arms.reward(1234, 2) == draws[1234, 2]
    other = BernoulliArms("toy", means=[0.5, 0.5, 0.2], item_ids=[1, 2, 3], seed=2)
    assert [other.reward(t, 0) for t in range(64)] != list(draws[:64, 0])
    with pytest.raises(IndexError, match=r"arm must be an integer in \[0, 3\)"):
        arms.reward(0, 3)


def test_constructor_and_loader_errors(no_data_dir):
    with pytest.raises(ValueError, match=r"means must be in \[0, 1\]"):
        BernoulliArms("toy", means=[1.5], item_ids=[1])
    with pytest.raises(ValueError, match=r"unknown Bernoulli dataset 'netflix'"):
        load_bernoulli_arms("netflix", arms=3)
    with pytest.raises(ValueError, match=r"denominator must be one of ratings, users; got 'all'"):
        load_bernoulli_arms("movielens", arms=3, denominator="all")
    with pytest.raises(FileNotFoundError, match=r"PPML_DATA"):
        load_bernoulli_arms("jester", arms=3)


def test_movielens_counts(movielens4):
    assert movielens4.rated.sum() == 100_000 and movielens4.users == 943
    assert movielens4.liked.sum() == 34_174 + 21_201   # ratings 4 and 5


def test_jester_counts(jester45):
    assert jester45.rated.sum() == 1_810_455 and jester45.users == 24_983
    assert jester45.liked.shape == (100,) and np.all(jester45.liked <= jester45.rated)


def test_denominators_differ_as_documented(movielens4, jester45):
    for counts in (movielens4, jester45):
        by_ratings, by_users = item_means(counts, "ratings"), item_means(counts, "users")
        assert np.all((by_ratings >= 0) & (by_ratings <= 1))
        assert np.allclose(by_users * counts.users, by_ratings * counts.rated)
        assert np.all(by_users <= by_ratings)
    movielens = item_means(movielens4, "ratings")
    assert np.sum(movielens == 1.0) == 43 and movielens4.rated[movielens == 1.0].max() == 8
    assert item_means(movielens4, "users").max() == pytest.approx(501 / 943)


def test_top_k_arms_as_documented(movielens_dir, jester_dir):
    cases = [("movielens", "ratings", 1, [711, 814, 1064], 1.0),
             ("movielens", "users", 1, [50, 100, 181], 0.531),
             ("movielens", "ratings", 20, [114, 479, 513], 0.910),
             ("jester", "ratings", 1, [89, 50, 27], 0.521),
             ("jester", "users", 1, [50, 27, 36], 0.496)]
    for name, denominator, min_ratings, top, best in cases:
        arms = load_bernoulli_arms(name, arms=10, denominator=denominator,
                                   min_ratings=min_ratings,
                                   data_dir=jester_dir if name == "jester" else movielens_dir)
        assert list(arms.item_ids[:3]) == top and arms.means[0] == pytest.approx(best, abs=1e-3)
        order = np.lexsort((arms.item_ids, -arms.means))
        assert np.array_equal(order, np.arange(10))   # decreasing mean, then increasing id
    with pytest.raises(ValueError, match=r"arms must be <= 939 \(movielens has 939 items with "
                                         r"at least 20 rating"):
        load_bernoulli_arms("movielens", arms=940, min_ratings=20, data_dir=movielens_dir)


def test_one_arm_alone_gives_that_arms_rewards():
    from ppml.data.bernoulli_items import BernoulliArms
    arms = BernoulliArms("toy", np.array([0.1, 0.5, 0.9]), np.array([1, 2, 3]), seed=4)
    for index in range(3):
        alone = arms.arm(index)
        assert (alone.index, alone.mean) == (index, arms.means[index])
        assert [alone.reward(t) for t in range(50)] == [arms.reward(t, index) for t in range(50)]
    with pytest.raises(IndexError, match="arm must be an integer in"):
        arms.arm(3)
