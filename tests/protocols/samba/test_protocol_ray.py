"""Samba with DO groups, Comp and DC as Ray actors gives the local runtime's run."""

import numpy as np
import pytest

from ppml.data.bernoulli_items import BernoulliArms
from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.protocols.samba.config import SambaConfig
from ppml.protocols.samba.protocol import run_samba

pytestmark = pytest.mark.ray


@pytest.mark.parametrize("name, owners_per_actor", [
    ("pursuit", 2), ("ucb", None), ("thompson", 1), ("eps_greedy", 2),
    ("eps_greedy_decreasing", None), ("softmax", 3)])
def test_ray_and_local_give_the_same_run(ray_cluster, name, owners_per_actor):
    data = BernoulliArms("toy", np.array([0.2, 0.6, 0.4]), np.arange(1, 4), seed=7)
    runs = [run_samba(data, SambaConfig(30, AlgorithmSpec(name), runtime=runtime,
                                        owners_per_actor=owners_per_actor, key_bits=512,
                                        insecure_key_bits_ok=True, seed=9))
            for runtime in ("local", "ray")]
    assert runs[0].arms == runs[1].arms
    assert runs[0].cumulative_reward == runs[1].cumulative_reward
    assert runs[0].counts == runs[1].counts
