import numpy as np
import pytest

from ppml.privacy.membership import squared_loss, weights_of, yeom_advantage


def test_an_overfit_model_leaks_and_a_constant_one_does_not():
    rng = np.random.default_rng(0)
    members = rng.normal(size=(40, 50))
    labels = rng.integers(0, 3, 40)
    fit = np.linalg.lstsq(members, np.eye(3)[labels], rcond=None)[0].T  # interpolates members
    others, other_labels = rng.normal(size=(200, 50)), rng.integers(0, 3, 200)
    leak = yeom_advantage(squared_loss(fit, members, labels),
                          squared_loss(fit, others, other_labels))
    assert leak["advantage"] > 0.5
    blind = np.zeros((3, 50))
    none = yeom_advantage(squared_loss(blind, members, labels),
                          squared_loss(blind, others, other_labels))
    assert none["advantage"] == 0.0  # every loss is 1: both rates are 1


def test_weights_and_errors():
    w_inv = np.stack([np.eye(2) * 2, np.eye(2)])
    assert np.allclose(weights_of(w_inv, np.array([[1.0, 0], [0, 3.0]])), [[2, 0], [0, 3]])
    with pytest.raises(ValueError, match="member"):
        yeom_advantage(np.array([]), np.array([1.0]))
