"""Bernoulli arms from item ratings, for Samba (Ciucanu, Lafourcade, Marcadet, Soare, JAIR 2022,
section 6.1).

"For each item i, we compute the mean reward mu_i = (# of ratings above a threshold for item i) /
(# of ratings received for item i). Without loss of generality, we consider the K items with
largest mean rewards."  Items are MovieLens 100K movies (ratings 1..5, threshold 4) or Jester
jokes (dataset 1 part 1: ratings in [-10, 10], 99 = not rated; threshold 4.5); "above" is
``rating >= threshold``, as in the authors' preprocessing script.

Two denominators: ``"ratings"`` divides by the item's number of ratings (the paper's text);
``"users"`` divides by the number of users, 943 or 24,983 (the authors' code, which counts an
unrated item as not liked).  They rank items differently; on MovieLens ``"ratings"`` puts the 43
movies whose 1 to 8 ratings are all >= 4, at mean 1.0 on top, so ``min_ratings`` can exclude
items with few ratings (docs/data.md has the measured numbers).

Arms are sorted by decreasing mean, ties by increasing item id.  Rewards are Bernoulli:
``reward(t, arm) = float(u(t, arm) < means[arm])`` with the counter-based uniforms of
ppml.data.rewards, so a secure run and its reference pulling the same arm at the same step get the
same reward, and every arm (every Samba data owner) draws from its own counter, independent of
the others (the authors' code gives all data owners the same seed, hence the same uniform at a
step).  ``synthetic`` (embedded) draws K means uniformly in [0, 1) from the seed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from ppml.checks import check_int
from ppml.data.bandit_data import reward_uniform, seeded_rng
from ppml.data.checksums import verified_path
from ppml.data.jester import JESTER_FILE, JESTER_MEMBER, JESTER_USERS, check_shape, read_matrix
from ppml.data.movielens import MOVIES, USERS, read_ratings
from ppml.data.rewards import check_step_arm, instance_key

NOT_RATED = 99.0
THRESHOLDS = {"movielens": 4.0, "jester": 4.5}
"""Default "like" thresholds (the authors' preprocessing: 4 of 5 stars, 4.5 of 10)."""
BERNOULLI_DATASETS = ("movielens", "jester", "synthetic")
DENOMINATORS = ("ratings", "users")
PathLike = Union[str, os.PathLike, None]


@dataclass(frozen=True)
class ItemCounts:
    """Per item: how many ratings reach the threshold, how many ratings it has, out of how many
    users."""

    liked: np.ndarray
    """[items] int64 number of ratings >= threshold."""
    rated: np.ndarray
    """[items] int64 number of ratings."""
    users: int


def movielens_counts(threshold: float, data_dir: PathLike = None) -> ItemCounts:
    """`ItemCounts` of the 1682 MovieLens movies (index = movie id - 1) from all of u.data."""
    ratings = read_ratings(data_dir)
    items = ratings[:, 1] - 1
    return ItemCounts(liked=np.bincount(items[ratings[:, 2] >= threshold], minlength=MOVIES),
                      rated=np.bincount(items, minlength=MOVIES), users=USERS)


def read_jester(data_dir: PathLike = None) -> np.ndarray:
    """Jester's ratings [24983, 100] (float64, NaN = not rated) from the verified zip."""
    table = read_matrix(verified_path(data_dir, JESTER_FILE))
    check_shape(table, f"{JESTER_FILE}/{JESTER_MEMBER}")
    ratings = np.where(table[:, 1:] == NOT_RATED, np.nan, table[:, 1:])
    if not np.array_equal(table[:, 0], np.sum(~np.isnan(ratings), axis=1)):
        raise ValueError(f"{JESTER_FILE}/{JESTER_MEMBER}: column 0 (the number of jokes rated) "
                         f"disagrees with the ratings that are not {NOT_RATED:g}")
    return ratings


def jester_counts(threshold: float, data_dir: PathLike = None) -> ItemCounts:
    """`ItemCounts` of the 100 Jester jokes (index = joke number - 1)."""
    ratings = read_jester(data_dir)
    return ItemCounts(liked=np.sum(ratings >= threshold, axis=0),
                      rated=np.sum(~np.isnan(ratings), axis=0), users=JESTER_USERS)


def _check_denominator(denominator: str) -> None:
    if denominator not in DENOMINATORS:
        raise ValueError(f"denominator must be one of {', '.join(DENOMINATORS)}; "
                         f"got {denominator!r}")


def item_means(counts: ItemCounts, denominator: str = "ratings") -> np.ndarray:
    """mu_i = liked_i / rated_i (``"ratings"``; 0 for an unrated item) or liked_i / users
    (``"users"``)."""
    _check_denominator(denominator)
    if denominator == "users":
        return counts.liked / counts.users
    return counts.liked / np.maximum(counts.rated, 1)


@dataclass(frozen=True, eq=False)
class BernoulliArms:
    """K Bernoulli arms: arm a pays 1 with probability ``means[a]``."""

    name: str
    means: np.ndarray
    """[K] success probabilities, in [0, 1]."""
    item_ids: np.ndarray
    """[K] the item behind each arm (MovieLens movie id / Jester joke number, 1-based)."""
    seed: int = 0
    """Seeds the reward uniforms."""

    def __post_init__(self) -> None:
        means = np.array(self.means, dtype=np.float64)
        ids = np.array(self.item_ids, dtype=np.int64)
        if means.ndim != 1 or means.size == 0 or ids.shape != means.shape:
            raise ValueError(f"means and item_ids must be [K] with K >= 1, got {means.shape} "
                             f"and {ids.shape}")
        if not np.all((means >= 0) & (means <= 1)):
            raise ValueError("means must be in [0, 1]")
        check_int("seed", self.seed, 0)
        for array in (means, ids):
            array.flags.writeable = False
        for name, value in (("means", means), ("item_ids", ids), ("seed", int(self.seed)),
                            ("_key", instance_key("bernoulli", self.name, self.seed))):
            object.__setattr__(self, name, value)

    @property
    def K(self) -> int:  # noqa: N802 (the paper's name)
        """Number of arms."""
        return self.means.shape[0]

    def reward(self, t: int, arm: int) -> float:
        """``float(u(t, arm) < means[arm])``: the same however often it is asked."""
        t, arm = check_step_arm(t, arm, self.K)
        return float(reward_uniform(self._key, t, arm) < self.means[arm])

    def arm(self, index: int) -> "ArmRewards":
        """Arm ``index``'s rewards alone: what its data owner holds (Samba, Fig. 6(a))."""
        index = check_step_arm(0, index, self.K)[1]
        return ArmRewards(self._key, index, float(self.means[index]))


@dataclass(frozen=True)
class ArmRewards:
    """One arm's reward source: its draws' key (public, derived from the instance's name and
    seed), its index and its own mean, and nothing of the other arms; `BernoulliArms.reward`'s
    values for this arm."""

    key: int
    index: int
    mean: float

    def reward(self, t: int) -> float:
        """``float(u(t, index) < mean)``."""
        t, index = check_step_arm(t, self.index, self.index + 1)
        return float(reward_uniform(self.key, t, index) < self.mean)


def top_items(means: np.ndarray, arms: int, eligible: np.ndarray) -> np.ndarray:
    """0-based indices of the ``arms`` eligible items with the largest means (decreasing mean,
    then increasing index)."""
    candidates = np.flatnonzero(eligible)
    return candidates[np.lexsort((candidates, -means[candidates]))][:arms]


def load_bernoulli_arms(name: str, *, arms: int, threshold: Optional[float] = None,
                        denominator: str = "ratings", min_ratings: int = 1, seed: int = 0,
                        data_dir: PathLike = None) -> BernoulliArms:
    """The Samba instance ``name`` with K = ``arms`` Bernoulli arms.

    ``movielens`` / ``jester``: the K items with the largest `item_means` among those with at
    least ``min_ratings`` ratings; ``threshold`` None means `THRESHOLDS` (4 and 4.5); read from
    ``data_dir`` (else ``$PPML_DATA``).  ``synthetic``: K means uniform in [0, 1) drawn from
    ``seed``, sorted decreasing (threshold, denominator and min_ratings do not apply).  ``seed``
    also keys the reward uniforms.
    """
    if name not in BERNOULLI_DATASETS:
        raise ValueError(f"unknown Bernoulli dataset {name!r}; known: "
                         f"{', '.join(BERNOULLI_DATASETS)}")
    _check_denominator(denominator)
    seed = check_int("seed", seed, 0)
    if name == "synthetic":
        arms = check_int("arms", arms, 1)
        means = np.sort(seeded_rng(seed, "synthetic-bernoulli").random(arms))[::-1]
        return BernoulliArms(name=name, means=means, item_ids=np.arange(1, arms + 1), seed=seed)
    threshold = THRESHOLDS[name] if threshold is None else float(threshold)
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    min_ratings = check_int("min_ratings", min_ratings, 1)
    counts = (movielens_counts if name == "movielens" else jester_counts)(threshold, data_dir)
    eligible = counts.rated >= min_ratings
    arms = check_int("arms", arms, 1, int(eligible.sum()),
                     f"{name} has {int(eligible.sum())} items with at least {min_ratings} "
                     "rating(s)")
    means = item_means(counts, denominator)
    chosen = top_items(means, arms, eligible)
    return BernoulliArms(name=name, means=means[chosen], item_ids=chosen + 1, seed=seed)
