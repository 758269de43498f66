"""ppml.data.load_contextual: names, defaults and parameter errors."""

import pytest

from ppml.data import DATASETS, ContextualData, load_contextual


def test_known_names():
    assert set(DATASETS) == {"digits", "mnist", "mnist_test", "kmeans", "kmeans_digits",
                             "kmeans_mnist", "synthetic"}


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown dataset 'cifar'.*digits, mnist"):
        load_contextual("cifar", arms=10, dims=20, horizon=10, data_seed=0)


@pytest.mark.parametrize("name", ["digits", "kmeans_digits", "synthetic"])
def test_embedded_datasets_need_no_data_dir(name, no_data_dir):
    data = load_contextual(name, arms=10, dims=8, horizon=30, data_seed=1)
    assert isinstance(data, ContextualData)
    assert data.contexts.shape == (30, 8) and data.arms == 10
    assert data.mean_rewards(0).shape == (10,)
    again = load_contextual(name, arms=10, dims=8, horizon=30, data_seed=1)
    assert all(again.reward(t, 3) == data.reward(t, 3) for t in range(30))


def test_defaults():
    assert load_contextual("digits").contexts.shape == (1797, 20)
    assert load_contextual("synthetic").contexts.shape == (1000, 10)


@pytest.mark.parametrize("name, kwargs, message", [
    ("digits", {"dims": 65}, r"dims must be <= 64"),
    ("digits", {"arms": 11}, r"arms must be 10"),
    ("kmeans_digits", {"arms": 5000}, r"arms must be <= 1797"),
    ("synthetic", {"horizon": 0}, r"horizon must be >= 1"),
    ("digits", {"data_seed": -2}, r"data_seed must be >= 0"),
])
def test_parameter_errors_name_parameter_and_bound(name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_contextual(name, **kwargs)


def test_mnist_names_without_data_dir_say_how_to_fix(no_data_dir):
    for name in ("mnist", "mnist_test", "kmeans_mnist"):
        with pytest.raises(FileNotFoundError, match=r"PPML_DATA.*data_dir="):
            load_contextual(name, horizon=5)
