import numpy as np

import pytest

from ppml.protocols.private_cb.reference import (EpsilonGreedyLinear, LeanEpsilonGreedyLinear,
                                                 tie_broken_argmax)


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


def play_both(arms: int, dims: int, steps: int, seed: int, **options) -> tuple:
    """The reference and the lean loop on one random stream with the same exploration draws:
    their arms, and the lean model."""
    rng = np.random.default_rng(seed)
    models = [EpsilonGreedyLinear(arms, dims, **options),
              LeanEpsilonGreedyLinear(arms, dims, **options)]
    truth = rng.normal(size=(arms, dims))
    taken = ([], [])
    for _ in range(steps):
        x = rng.normal(size=dims)
        x /= np.linalg.norm(x)
        y, v, gamma = int(rng.uniform() < 0.1), rng.uniform(size=arms), rng.permutation(arms)
        noise = rng.normal(scale=0.1)
        for model, arms_taken in zip(models, taken):
            arm = model.select(x, y, v, gamma)
            arms_taken.append(arm)
            model.update(x, arm, float(truth[arm] @ x + noise))
    return taken[0], taken[1], models[1]


def test_the_lean_loop_takes_the_reference_arms_exactly_on_a_small_run():
    reference, lean, _ = play_both(arms=3, dims=4, steps=60, seed=2)
    assert lean == reference


@pytest.mark.parametrize("options", [{}, {"regularizer": 0.5, "refresh_every": 50}])
def test_the_lean_loop_takes_the_reference_arms_in_99_percent_of_steps(options):
    reference, lean, _ = play_both(arms=10, dims=20, steps=3000, seed=4, **options)
    assert np.mean(np.equal(reference, lean)) >= 0.99


def test_the_lean_theta_is_w_inverse_b():
    rng = np.random.default_rng(5)
    model = LeanEpsilonGreedyLinear(arms=2, dims=3, regularizer=0.5, refresh_every=1000)
    for _ in range(40):
        model.update(rng.normal(size=3), int(rng.integers(2)), float(rng.normal()))
    assert np.allclose(model.theta, np.linalg.solve(model.w, model.b[..., None])[..., 0])
    assert np.allclose(model.w_inv, np.linalg.inv(model.w))


def test_the_lean_loop_refreshes_theta_and_the_inverse():
    model = LeanEpsilonGreedyLinear(arms=1, dims=2, refresh_every=3)
    for _ in range(3):
        model.w_inv[0] += 1e-3                                               # drift
        model.theta[0] += 1e-3
        model.update(np.array([1.0, 0.0]), 0, 1.0)
    assert np.allclose(model.w_inv, np.linalg.inv(model.w))
    assert np.allclose(model.theta[0], [0.75, 0.0])
