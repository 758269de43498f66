"""Tabular SARSA and Q-learning in float64 and in the protocol's fixed point; selection."""

import numpy as np
import pytest

from ppml.protocols.pprl.learners import FixedPointQ, QTable, select, select_joint


def test_greedy_breaks_ties_uniformly_and_epsilon_explores():
    rng = np.random.default_rng(0)
    row = np.array([1.0, 3.0, 3.0, 0.0])
    picks = [select("greedy", row, rng, 0.0) for _ in range(2000)]
    assert set(picks) == {1, 2} and 0.45 < picks.count(1) / 2000 < 0.55
    explored = [select("epsilon_greedy", row, rng, 0.5) for _ in range(4000)]
    assert 0.08 < explored.count(0) / 4000 < 0.17                  # eps / 4 each
    assert set(select("random", row, rng, 0.0) for _ in range(200)) == {0, 1, 2, 3}


def test_the_public_coin_never_draws_from_an_agents_own_generator():
    """Every agent sees epsilon-greedy's coin; were it drawn from agent 0's generator, its
    outputs would predict agent 0's next permutations and random actions."""
    row = np.arange(6.0)
    for epsilon in (0.0, 1.0):
        own = [np.random.default_rng(1), np.random.default_rng(2)]
        alone = [np.random.default_rng(1), np.random.default_rng(2)]
        chosen = select_joint("epsilon_greedy", row, [2, 3], own, epsilon,
                              np.random.default_rng(3))
        if epsilon:                              # explores: each its own random action
            assert chosen == [int(r.integers(m)) for r, m in zip(alone, [2, 3])]
        else:                                    # greedy: each its own permutation
            for r, m in zip(alone, [2, 3]):
                r.permutation(m)
        assert [r.bit_generator.state for r in own] == [r.bit_generator.state for r in alone]


def test_sarsa_and_q_learning_follow_eq_1():
    for learner, target in (("sarsa", 2.0), ("qlearning", 5.0)):
        table = QTable(3, 2, alpha=0.5, gamma=0.9, learner=learner)
        table.q[1] = [2.0, 5.0]
        table.update(0, 1, 1.0, 1, 0)
        assert table.q[0, 1] == pytest.approx(0.5 * (1.0 + 0.9 * target))


def test_fixed_point_is_eqs_3_and_4_with_a_floor():
    table = FixedPointQ(3, 2, alpha=0.1, gamma=0.9, learner="sarsa", scale_bits=8,
                        division_bits=4)
    assert (table.alpha_k, table.alpha_gamma_k) == (2, 1)          # round(1.6), round(1.44)
    table.q[1, 0] = 1000
    table.update(0, 1, 3, 1, 0)
    k_delta = 2 * (3 << 8) + 1 * 1000 - 0
    assert table.q[0, 1] == k_delta >> 4
    table.q[2, 1] = 37
    table.update(2, 1, 0, 2, 1)                   # K dQ = 37 - 74 = -37: floors to -3, not -2
    assert table.q[2, 1] == 37 - 3
    assert table.values()[0, 1] == table.q[0, 1] / 256


def test_fixed_point_is_exact_at_any_scale_and_refuses_what_it_cannot_hold():
    table = FixedPointQ(2, 2, alpha=0.5, gamma=0.5, learner="qlearning", scale_bits=300,
                        division_bits=200)
    table.update(0, 0, 1, 1, 0)
    assert table.q[0, 0] == 2**299                                  # alpha L r, exactly
    with pytest.raises(ValueError, match="times 2\\^pprl.scale_bits is not an integer"):
        FixedPointQ(2, 2, 0.5, 0.5, "sarsa", 1, 4).update(0, 0, 0.3, 1, 0)
    with pytest.raises(ValueError, match="must round to >= 1"):
        FixedPointQ(2, 2, 0.01, 0.5, "sarsa", 8, 4)
    with pytest.raises(ValueError, match="pprl.learner must be one of sarsa, qlearning"):
        QTable(2, 2, 0.1, 0.9, "td0")
