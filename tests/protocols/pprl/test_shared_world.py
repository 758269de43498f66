"""The world of the shares backend by observation: a barrier per call, each agent answered with
its own perceptions only; in one process every part comes at once."""

import threading

import pytest

from ppml.experiments.pprl_shares_parties import WorldService
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.shared_world import SharedWorlds

OPTIONS = PPRLOptions(task="load_balancing", partition="observation", episodes=1,
                      episode_steps=3, backend="shares", scale_bits=20, methods=["pprl"])


def _world(timeout_s=5.0):
    world = SharedWorlds(OPTIONS, 2, 0, timeout_s)
    world.start([[0, 1], [0, 1]])
    return world


def test_in_one_process_every_part_comes_at_once_and_each_agent_gets_its_own():
    world = _world()
    states = world.reset([True, True])
    assert [len(s) for s in states] == [2, 2]                 # two trials, one state each
    answers = world.step([[0, 1], [1, 1]])
    for own_states, own_rewards in answers:
        assert len(own_states) == len(own_rewards) == 2
    world.end_episode([0, 0])
    report = world.report()
    assert set(report) == {"0", "1"}
    assert report["0"]["taken"] == [[0, 1]] and report["1"]["taken"] == [[1, 1]]
    assert len(report["0"]["rows"]) == 1


def test_agents_in_their_own_threads_meet_and_are_answered_with_their_own_part():
    world, answers = _world(), [None, None]

    def agent(i):
        parts = [None, None]
        parts[i] = True
        answers[i] = world.reset(parts)

    threads = [threading.Thread(target=agent, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert answers[0][1] is None and answers[1][0] is None
    assert answers[0][0] is not None and answers[1][1] is not None


def test_a_missing_agent_is_named_after_the_timeout_and_a_second_part_is_refused():
    world = _world(timeout_s=0.2)
    with pytest.raises(TimeoutError, match=r"agents \[1\] to call reset"):
        world.reset([True, None])
    with pytest.raises(ValueError, match="agent 0 has already called reset"):
        world.reset([True, None])


def test_an_agent_may_send_its_own_part_only():
    service = WorldService(_world(), ["agent-0", "agent-1"])
    with pytest.raises(PermissionError, match="agent-1 may send its own part of reset only"):
        service.reset("agent-1", [True, None])
    with pytest.raises(PermissionError, match="own part of step only"):
        service.step("agent-0", [[0, 0], [0, 0]])
    with pytest.raises(AttributeError):
        service.report


def test_an_agent_cannot_read_the_others_parts_from_the_worlds_errors():
    """A part is checked when it comes, against its own agent's bounds; a call of another
    method than the others', or a failure of the step, names no other agent's part."""
    world = _world()
    world.reset([True, True])
    done = []
    thread = threading.Thread(target=lambda: done.append(world.step([[1, 0], None])))
    thread.start()
    with pytest.raises(ValueError, match=r"called start while the others are in step") as err:
        world.start([None, [0, 1]])
    assert "[1, 0]" not in str(err.value)
    with pytest.raises(ValueError, match=r"agent 1: step takes one action in \[0, 2\)") as err:
        world.step([None, [7, 0]])
    assert "[1, 0]" not in str(err.value)
    world.step([None, [0, 1]])
    thread.join(10)
    assert done and done[0][1] is None


def test_a_failure_of_the_step_reaches_every_agent_at_once():
    world = SharedWorlds(OPTIONS, 2, 0, 5.0)
    world.start([[0], [0]])
    world.reset([True, True])
    world.reward_bound = 0.0                           # every reward is now out of bounds
    errors = []

    def agent(i):
        parts = [None, None]
        parts[i] = [0]
        try:
            world.step(parts)
        except ValueError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=agent, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(errors) == 2 and all("outside pprl.reward_bound=0.0" in e for e in errors)
