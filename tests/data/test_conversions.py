"""The conversion models' examples: MovieLens conversions from the data folder, the embedded
defaults, unknown names."""

import numpy as np
import pytest

from ppml.data.conversions import load_conversions


def test_movielens_ratings_become_conversions_with_user_and_genre_features(movielens_dir):
    data = load_conversions("movielens", movielens_dir)
    assert data.x_train.shape == (80_000, 42) and data.x_test.shape == (20_000, 42)
    assert data.classes == 2 and 0.5 < data.y_train.mean() < 0.6     # 4 or 5 stars: 55 %
    assert (data.x_train[:, 2:23].sum(axis=1) == 1).all()           # one occupation each
    assert 0 < data.x_train[:, 0].min() and data.x_train[:, 0].max() < 1   # age / 100


def test_the_embedded_defaults_need_no_data_folder(no_data_dir):
    cancer, digits = load_conversions("breast_cancer"), load_conversions("digits")
    assert cancer.classes == 2 and cancer.x_train.shape[1] == 30
    assert np.allclose(np.concatenate([cancer.x_train, cancer.x_test]).mean(axis=0), 0)
    assert digits.classes == 10 and digits.x_train.max() <= 1
    assert len(digits.x_train) + len(digits.x_test) == 1797


def test_an_unknown_dataset_is_named():
    with pytest.raises(ValueError, match="dataset must be one of movielens, breast_cancer, "
                                         "digits for masked_lark training, got 'mnist'"):
        load_conversions("mnist")
