"""ComputeScore / SelectArm of Fig. 4: scores, selection, parameter bounds, Beta draws."""

import math

import numpy as np
import pytest

from ppml.protocols.samba.policies import ALGORITHMS, ARGMAX, MATCH, AlgorithmSpec, Arm, select_arm
from ppml.protocols.samba.draws import BetaDraws, Words
from ppml.crypto.rng import Stream, seeded_key


def stream(label):
    return Stream(seeded_key(3, label))


def test_argmax_takes_the_first_maximum_and_match_follows_the_cumulative_sum():
    assert select_arm(ARGMAX, [0.2, 0.7, 0.7, 0.1]) == 1
    assert select_arm(MATCH, [1.0, 2.0, 1.0], 0.2) == 0
    assert select_arm(MATCH, [1.0, 2.0, 1.0], 0.5) == 1
    assert select_arm(MATCH, [1.0, 2.0, 1.0], 0.99) == 2


def arms(s, n, p=(0.0, 0.0), draws=(None, None)):
    """`Arm` objects with the given s_i, n_i, p_i and draws."""
    out = [Arm(d) for d in draws]
    for a, si, ni, pi in zip(out, s, n, p):
        a.s, a.n, a.p = si, ni, pi
    return out


def test_scores_of_fig_4_each_from_its_own_state():
    state = arms([24, 49], [33, 68])
    assert AlgorithmSpec("ucb").policy(2).compute_scores(68, 1, state) == \
        pytest.approx([24 / 33 + math.sqrt(2 * math.log(68) / 33),
                       49 / 68 + math.sqrt(2 * math.log(68) / 68)])
    assert AlgorithmSpec("softmax", softmax_tau=0.1).policy(2).compute_scores(
        98, 1, state) == pytest.approx([math.exp(24 / 33 / 0.1), math.exp(49 / 68 / 0.1)])
    assert AlgorithmSpec("eps_greedy").policy(2).compute_scores(5, 1, state) == \
        [24 / 33, 49 / 68]


def test_pursuit_updates_p_as_in_section_4_2():
    policy = AlgorithmSpec("pursuit", pursuit_beta=0.1).policy(3)
    state = arms([1, 0], [1, 1], [policy.initial_p()] * 2)
    policy.after_iteration(1, state, [1, 0])
    assert [a.p for a in state] == [pytest.approx(0.4), pytest.approx(0.3)]
    assert policy.compute_scores(9, 2, state) == [a.p for a in state]
    assert policy.iterations == 2 and policy.kind(1) == ARGMAX and policy.kind(2) == MATCH


def test_decreasing_epsilon_and_exploration_rate():
    spec = AlgorithmSpec("eps_greedy_decreasing", eps_decay=0.5)
    assert spec.policy(10).epsilon(10) == 0.5 and spec.policy(10).epsilon(100) == 0.05
    fixed = AlgorithmSpec("eps_greedy", epsilon=0.3).policy(4)
    draws = Words(stream("explore"))
    assert np.mean([fixed.explores(t, draws) for t in range(4000)]) == pytest.approx(0.3, abs=0.03)


def test_thompson_draws_of_two_arms_are_independent():
    policy = AlgorithmSpec("thompson").policy(2)
    a, b = BetaDraws(stream("owner-0")), BetaDraws(stream("owner-1"))
    state = arms([5, 5], [10, 10], draws=(a, b))
    pairs = np.array([policy.compute_scores(t, 1, state)
                      for t in range(2000)])
    assert abs(np.corrcoef(pairs.T)[0, 1]) < 0.08


@pytest.mark.parametrize("field, value, message", [
    ("name", "greedy", "algorithm must be one of"), ("epsilon", 1.5, "epsilon must be in"),
    ("eps_decay", 0.0, "eps_decay must be > 0"), ("softmax_tau", 1e-4, "softmax_tau must be >="),
    ("pursuit_beta", 0.0, "pursuit_beta must be in"), ("ucb_c", -1.0, "ucb_c must be > 0")])
def test_parameters_are_checked(field, value, message):
    args = {"name": "ucb", field: value}
    with pytest.raises(ValueError, match=message):
        AlgorithmSpec(**args)


def test_every_algorithm_has_a_policy():
    assert all(AlgorithmSpec(name).policy(3).iterations in (1, 2) for name in ALGORITHMS)
