"""Labelled examples for Masked LARK's conversion models: features the ad network knows and a
label only the browser knows.

* ``movielens`` (MovieLens 100K, from the data folder, checksums verified): each rating is an
  impression, a rating of 4 or more a conversion (label 1).  Features: the user's age / 100 and
  gender (1 for M), a one-hot of the user's occupation (21), the movie's 19 genre flags: 42.
  Split: the dataset's own u1.base (80,000) and u1.test (20,000) (`movielens.mku_split`).
* ``breast_cancer`` (embedded, scikit-learn): 569 examples of 30 standardised features, two
  classes; a seeded 80/20 split.
* ``digits`` (embedded, scikit-learn): 1,797 8x8 images, pixels / 16, ten classes (softmax
  regression); a seeded 80/20 split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppml.data.checksums import verified_path
from ppml.data.movielens import mku_split, read_ratings

DATASETS = ("movielens", "breast_cancer", "digits")
CONVERSION_RATING = 4
"""A rating of at least this many stars is a conversion."""


@dataclass(frozen=True)
class Examples:
    """Train and test features (float64) and labels (int64 in [0, classes))."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    classes: int


def load_conversions(name: str, data_dir=None, seed: int = 0) -> Examples:
    """The examples of dataset ``name`` (`DATASETS`); ``data_dir`` (or ``PPML_DATA``) for
    MovieLens; ``seed`` splits the embedded ones."""
    if name == "movielens":
        return _movielens(data_dir)
    if name in ("breast_cancer", "digits"):
        from sklearn import datasets            # imported here: see ppml/data/__init__.py
        data = datasets.load_breast_cancer() if name == "breast_cancer" else \
            datasets.load_digits()
        x = data.data.astype(np.float64)
        x = (x - x.mean(axis=0)) / np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0) \
            if name == "breast_cancer" else x / 16.0
        order = np.random.default_rng([seed, 0xC0]).permutation(len(x))
        cut = int(0.8 * len(x))
        train, test = order[:cut], order[cut:]
        y = data.target.astype(np.int64)
        return Examples(x[train], y[train], x[test], y[test], int(y.max()) + 1)
    raise ValueError(f"dataset must be one of {', '.join(DATASETS)} for masked_lark training, "
                     f"got {name!r}")


def _movielens(data_dir) -> Examples:
    ratings = read_ratings(data_dir)
    users = [line.split("|") for line in
             verified_path(data_dir, "ml-100k/u.user").read_text().splitlines() if line]
    occupations = [line.strip() for line in
                   verified_path(data_dir, "ml-100k/u.occupation").read_text().splitlines()
                   if line.strip()]
    user_features = np.zeros((len(users) + 1, 2 + len(occupations)))
    for user_id, age, gender, occupation, _ in users:
        row = user_features[int(user_id)]
        row[0], row[1] = int(age) / 100, float(gender == "M")
        row[2 + occupations.index(occupation)] = 1.0
    items = [line.split("|") for line in verified_path(data_dir, "ml-100k/u.item")
             .read_text(encoding="latin-1").splitlines() if line]
    genres = np.zeros((len(items) + 1, len(items[0]) - 5))
    for fields in items:
        genres[int(fields[0])] = [float(flag) for flag in fields[5:]]
    train, test = mku_split(ratings)

    def examples(block):
        x = np.hstack([user_features[block[:, 0]], genres[block[:, 1]]])
        return x, (block[:, 2] >= CONVERSION_RATING).astype(np.int64)

    (x_train, y_train), (x_test, y_test) = examples(train), examples(test)
    return Examples(x_train, y_train, x_test, y_test, 2)
