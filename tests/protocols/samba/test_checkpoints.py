"""Samba's checkpoints: a run cut when a DO group is lost resumes from the last step every role
holds, with the uninterrupted run's arms, total and counts in seeded mode, and, with fresh keys,
a run its reference replays (each role went on with its own streams)."""

import dataclasses

import numpy as np
import pytest

from ppml.data.bernoulli_items import BernoulliArms
from ppml.protocols.samba import protocol
from ppml.protocols.samba.config import SambaConfig
from ppml.protocols.samba.keys import SambaKeys
from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.protocols.samba.reference import run_reference
from ppml.protocols.samba.roles import DataOwnerGroup
from ppml.runtime.checkpoints import CheckpointPlan

CUT = 17
"""The step whose bits a DO group never receives: its process is lost."""


class LostGroup(DataOwnerGroup):
    """A DO group lost when the last bits of step `CUT` reach it (with step CUT + 1's call),
    in a run with cryptography (the experiment's distributed baseline runs without)."""

    def exchange(self, delivery, asked):
        if self.crypto and delivery is not None and delivery[:2] == (CUT, self.policy.iterations):
            raise ConnectionError(f"DO group lost at step {CUT + 1}")
        return super().exchange(delivery, asked)


@pytest.mark.parametrize("name, mask, seed", [
    ("pursuit", "mpc", 4), ("thompson", "mpc", None), ("eps_greedy", "mpc", 5),
    ("softmax", "paper", 6), ("softmax", "mpc", None)])
def test_a_run_resumes_from_its_checkpoints(tmp_path, monkeypatch, name, mask, seed):
    data = BernoulliArms("toy", np.array([0.3, 0.6, 0.5, 0.7, 0.2]), np.arange(1, 6), seed=3)
    plan = CheckpointPlan(str(tmp_path), 5, (), "s")
    setup = SambaConfig(30, AlgorithmSpec(name, epsilon=0.3, softmax_tau=0.1), mask=mask,
                        owners_per_actor=2, key_bits=512, insecure_key_bits_ok=True, seed=seed,
                        collect_keys=seed is None, checkpoints=plan)
    with monkeypatch.context() as patch:
        patch.setattr(protocol, "DataOwnerGroup", LostGroup)
        with pytest.raises(ConnectionError, match=f"step {CUT + 1}"):
            protocol.run_samba(data, setup)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["comp", "controller", "do-0-1",
                                                          "do-2-3", "do-4-4"]
    assert plan.store("do-2-3").steps() == [10, 15]
    assert plan.store("controller").progress() == CUT
    resumed = protocol.run_samba(data, dataclasses.replace(
        setup, checkpoints=dataclasses.replace(plan, resume=True)))
    assert resumed.replays == [(15, CUT)]
    keys = SambaKeys.for_seed(seed) if seed is not None else resumed.replay_keys
    reference = run_reference(data, 30, setup.spec, keys, mask)
    assert resumed.arms == reference.arms
    assert resumed.cumulative_reward == reference.cumulative_reward
    if seed is not None:
        whole = protocol.run_samba(data, dataclasses.replace(setup, checkpoints=None))
        assert (resumed.arms, resumed.counts) == (whole.arms, whole.counts)
