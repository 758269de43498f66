"""The world: p'' may ask for a step's reward before p' has pulled, and waits for the pull."""

import threading
import time

import pytest

from ppml.protocols.private_cb.world import World
from ppml.data import load_contextual


def test_reward_waits_for_the_pull_and_a_step_is_pulled_once():
    data = load_contextual("digits", arms=10, dims=20, horizon=5, data_seed=0)
    world = World(data, timeout_s=5.0)
    got = []
    asker = threading.Thread(target=lambda: got.append(world.reward(2)))
    asker.start()
    time.sleep(0.05)
    assert got == []                                     # still waiting for step 2's pull
    world.pull(2, 7)
    asker.join(timeout=5.0)
    assert got == [data.reward(2, 7)] and world.reward(2) == got[0]
    with pytest.raises(RuntimeError, match="step 2 was already pulled"):
        world.pull(2, 3)
    with pytest.raises(TimeoutError, match="no arm was pulled at step 4"):
        World(data, timeout_s=0.01).reward(4)
