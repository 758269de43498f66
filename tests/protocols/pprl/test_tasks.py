"""Section 6's tasks as Gymnasium environments, and discrete Gymnasium tasks by name."""

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from ppml.protocols.pprl import tasks
from ppml.protocols.pprl.tasks import LoadBalancing, RandomWalk


@pytest.mark.parametrize("env", [RandomWalk, LoadBalancing])
def test_the_tasks_pass_gymnasiums_checker(env):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env(), skip_render_check=True)


def test_random_walk_moves_pays_and_ends_as_section_6_1_says():
    env = RandomWalk(5)
    assert env.reset(seed=0) == (0, {})
    assert env.step(1)[:3] == (0, 0.0, False)                 # a_2 at s_1: no move
    for state in (1, 2, 3):
        assert env.step(0)[:3] == (state, 0.0, False)
    assert env.step(0)[:3] == (4, 1.0, True)                  # a_1 at s_{n-1}: reward, goal
    env.reset()
    for _ in range(tasks.MAX_EPISODE_STEPS - 1):
        assert env.step(1)[3] is False
    assert env.step(1)[3] is True                             # truncated after 1,000 steps
    with pytest.raises(ValueError, match="action must be 0"):
        env.step(2)


def test_load_balancing_rewards_passing_and_overflow():
    env = LoadBalancing()
    env.reset(seed=3)
    seen_pass = seen_overflow = False
    for _ in range(3000):
        before = env._backlog.copy()
        action = np.array([1, 0])
        state, reward, terminated, truncated, info = env.step(action)
        own = info["rewards"]
        assert reward == sum(own) and not terminated and not truncated
        assert all(0 <= s <= tasks.BACKLOG for s in state)
        for i in range(2):
            if own[i] == 0:
                seen_overflow = True
            else:
                assert own[i] in (50 - state[i] ** 2, 50 - state[i] ** 2 - tasks.PASS_COST)
        if own[0] == 50 - state[0] ** 2 - tasks.PASS_COST:
            seen_pass = True
            assert state[1] >= before[1] - 1                  # B received A's job
    assert seen_pass and seen_overflow
    for bad in (np.array([2, 0]), np.array([0.5, 1.0]), np.array([[0, 1]]), [0, 1, 1]):
        with pytest.raises(ValueError, match=r"0 \(keep\) or 1 \(pass\) for each of the 2 "):
            env.step(bad)
    env.step(np.array([True, False]))                 # bits are 0 and 1


def test_m_factories_pass_to_the_next_in_a_ring():
    env = tasks.make("load_balancing", agents=3)
    env.reset(seed=2)
    assert env.observation_space.nvec.tolist() == [6, 6, 6]
    for _ in range(300):                        # everyone passes: jobs move one factory on
        before = env._backlog.copy()
        state, reward, _, _, info = env.step(np.array([1, 1, 1]))
        assert reward == sum(info["rewards"]) and len(info["rewards"]) == 3
        assert all(s <= b + 1 for s, b in zip(state, before))
    with pytest.raises(ValueError, match="for each of the 3 factories"):
        env.step(np.array([1, 1]))


def test_any_discrete_gymnasium_task_by_name_and_others_refused():
    env = tasks.make("FrozenLake-v1")
    assert (env.observation_space.n, env.action_space.n) == (16, 4)
    with pytest.raises(ValueError, match="discrete observation and action spaces"):
        tasks.make("CartPole-v1")
    with pytest.raises(ValueError, match="pprl.task must be one of random_walk, load_balancing"):
        tasks.make("NoSuchTask-v0")


def _transitions(env, steps: int, seed: int) -> list:
    env.reset(seed=seed)
    actions = np.random.default_rng(0).integers(2, size=(steps, env.factories))
    return [(obs.tolist(), reward) for obs, reward, *_ in map(env.step, actions)]


def test_load_balancing_draws_ahead_what_one_call_a_step_would_draw(monkeypatch):
    steps = 2 * tasks.DRAWS_AHEAD + 5                            # past two refills
    ahead = _transitions(LoadBalancing(3), steps, seed=7)
    monkeypatch.setattr(tasks, "DRAWS_AHEAD", 1)                 # one call a step
    assert _transitions(LoadBalancing(3), steps, seed=7) == ahead


def test_a_new_seed_voids_the_draws_taken_ahead():
    env = LoadBalancing()
    _transitions(env, 10, seed=7)
    assert _transitions(env, 50, seed=9) == _transitions(LoadBalancing(), 50, seed=9)
