"""Logistic and softmax regression: probabilities, every label's clipped gradient, the true
label's alone, the loss."""

import numpy as np

import pytest

from ppml.protocols.masked_lark.models import (label_gradients, loss, parameters, probabilities,
                                               true_label_gradients)


def test_gradients_for_every_label_are_clipped_and_pick_the_true_one():
    x = np.random.default_rng(0).normal(size=(5, 3)) * 10
    grads = label_gradients("softmax", np.zeros(12), x, 3, clip=0.5)
    assert grads.shape == (5, 3, 12)
    assert (np.linalg.norm(grads, axis=2) <= 0.5 + 1e-12).all()


@pytest.mark.parametrize("model, classes", [("logistic", 2), ("softmax", 3)])
def test_the_true_labels_gradients_are_those_every_labels_gradients_pick(model, classes):
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(6, 4)) * 3, rng.integers(classes, size=6)
    theta = rng.normal(size=parameters(model, 4, classes))
    every = label_gradients(model, theta, x, classes, clip=0.7)
    assert np.array_equal(true_label_gradients(model, theta, x, y, classes, clip=0.7),
                          every[np.arange(6), y])


def test_logistic_gradients_are_the_cross_entropys():
    x = np.array([[0.5, -1.0]])
    theta = np.array([0.2, 0.1, -0.3])
    p = probabilities("logistic", theta, x, 2)[0, 1]
    grads = label_gradients("logistic", theta, x, 2, clip=100.0)
    assert np.allclose(grads[0, 1], (p - 1) * np.array([0.5, -1.0, 1.0]))
    assert np.allclose(grads[0, 0], p * np.array([0.5, -1.0, 1.0]))


def test_probabilities_sum_to_one_and_the_loss_of_a_uniform_model():
    x = np.random.default_rng(1).normal(size=(7, 4))
    assert parameters("softmax", 4, 3) == 15 and parameters("logistic", 4, 2) == 5
    p = probabilities("softmax", np.zeros(15), x, 3)
    assert np.allclose(p.sum(axis=1), 1.0) and np.allclose(p, 1 / 3)
    assert np.isclose(loss("softmax", np.zeros(15), x, np.zeros(7, int), 3), np.log(3))
