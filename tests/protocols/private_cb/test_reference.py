import numpy as np

from ppml.protocols.private_cb.reference import EpsilonGreedyLinear, tie_broken_argmax


def test_sherman_morrison_keeps_the_exact_inverse():
    rng = np.random.default_rng(0)
    model = EpsilonGreedyLinear(arms=3, dims=4, regularizer=0.5)
    for _ in range(50):
        x = rng.normal(size=4)
        model.update(x / np.linalg.norm(x), int(rng.integers(3)), float(rng.uniform()))
    assert np.allclose(model.w_inv, np.linalg.inv(model.w), atol=1e-10)


def test_scores_are_w_transpose_x():
    rng = np.random.default_rng(1)
    model = EpsilonGreedyLinear(arms=2, dims=3)
    for _ in range(10):
        model.update(rng.normal(size=3), 1, 1.0)
    x = rng.normal(size=3)
    w = np.linalg.solve(model.w[1], model.b[1])
    assert np.isclose(model.scores(x)[1], w @ x) and model.scores(x)[0] == 0


def test_exploration_and_ties():
    model = EpsilonGreedyLinear(arms=4, dims=2)
    gamma = np.array([2, 0, 3, 1])
    assert model.select(np.ones(2), 0, np.zeros(4), gamma) == 2        # all scores tie
    assert model.select(np.ones(2), 1, np.array([.1, .9, .2, .3]), gamma) == 1
    assert tie_broken_argmax(np.array([1.0, 3.0, 3.0]), np.array([0, 1, 2])) == 2


def test_refresh_recomputes_the_inverse():
    model = EpsilonGreedyLinear(arms=1, dims=2, refresh_every=3)
    for k in range(3):
        model.w_inv[0] += 1e-3  # drift
        model.update(np.array([1.0, 0.0]), 0, 1.0)
    assert np.allclose(model.w_inv, np.linalg.inv(model.w))
