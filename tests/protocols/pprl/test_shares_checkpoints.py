"""Checkpoints of PPRL's shares backend: a run cut twice (a lost link) and resumed twice ends
with the uninterrupted run's rows in seeded mode, each agent saving only its own state."""

import dataclasses

import pytest

from tests.protocols.pprl.cuts import Cut

from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.shares import SharedTable
from ppml.protocols.pprl.shares_observation import run_shares_trials
from ppml.protocols.pprl.shares_time import run_shares_time_trials
from ppml.runtime.checkpoints import CheckpointPlan

BY_TIME = PPRLOptions(task="FrozenLake-v1", reward_bound=1, steps_per_agent=12,
                      methods=["pprl"], trials=2, selection="epsilon_greedy", learner="sarsa",
                      epsilon=0.3, backend="shares", scale_bits=20)
"""Episodes end often (the holes): checkpoints fall within a turn, at its end, between
trials."""


def untimed(result) -> list:
    return [{k: v for k, v in row.items() if not k.endswith("_s")} for row in result.rows]


@pytest.mark.parametrize("seed", [4, None])
def test_trials_by_time_resume_from_their_checkpoints(tmp_path, monkeypatch, seed):
    """Three agents, two trials on one engine (24 steps each on the shares, agent 0's turn in
    the clear before them), checkpoints every 5 steps.  Cut at step 13 (resumed from 10, in
    the first trial's second turn on the shares), then at 37 (resumed from 35, in the second
    trial): in seeded mode the uninterrupted run's rows; unseeded, each trial still takes the
    reference's actions to its table (entropy and generators restored); the replays name the
    steps that ran twice, each trial its own."""
    plan = CheckpointPlan(str(tmp_path), 5, ("agent-0", "agent-1", "agent-2"), "s")

    def attempt(checkpoints, cut=None, start=0):
        with monkeypatch.context() as patch:
            if cut:
                Cut(patch, cut, start, SharedTable, "learn", each=1)
            return run_shares_time_trials(BY_TIME, 3, 0, [0, 1], key_seed=seed,
                                          checkpoints=checkpoints)
    with pytest.raises(ConnectionError, match="step 14"):
        attempt(plan, cut=13)
    assert plan.store("agent-2").steps() == [5, 10] and plan.store("agent-1").progress() == 13
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent-0", "agent-1", "agent-2"]
    with pytest.raises(ConnectionError, match="lost at step"):
        attempt(dataclasses.replace(plan, resume=True), cut=37, start=10)
    assert plan.store("agent-0").steps() == [30, 35]
    resumed = attempt(dataclasses.replace(plan, resume=True))
    assert [r.replays for r in resumed] == [[(10, 13)], [(35, 37)]]
    assert all(r.rows[0]["q_equal_reference"] and r.rows[0]["action_agreement"] == 1.0
               for r in resumed)
    if seed is not None:
        assert [untimed(r) for r in resumed] == [untimed(r) for r in attempt(None)]


BY_OBSERVATION = PPRLOptions(task="load_balancing", partition="observation", episodes=3,
                             episode_steps=4, methods=["pprl"], trials=3, trials_together=2,
                             selection="epsilon_greedy", learner="qlearning", epsilon=0.3,
                             backend="shares", scale_bits=20)


@pytest.mark.parametrize("seed", [3, None])
def test_trials_by_observation_resume_from_their_checkpoints(tmp_path, monkeypatch, seed):
    """Two agents and the world, two trials together then a third (12 steps a group),
    checkpoints every 5 steps.  Cut at step 7 (resumed from 5, within an episode), then at
    22 (resumed from 20, at an episode's last update, in the second group): in seeded mode the
    uninterrupted run's rows; unseeded, every trial ends with the reference's table and
    actions; the replays name the steps that ran twice, each group its own."""
    plan = CheckpointPlan(str(tmp_path), 5, ("agent-0", "agent-1"), "s")

    def attempt(checkpoints, cut=None, start=0):
        with monkeypatch.context() as patch:
            if cut:
                Cut(patch, cut, start, SharedTable, "learn", each=1)
            return run_shares_trials(BY_OBSERVATION, 2, 0, [0, 1, 2], key_seed=seed,
                                     checkpoints=checkpoints)
    with pytest.raises(ConnectionError, match="step 8"):
        attempt(plan, cut=7)
    assert plan.store("world").steps() == [5] and plan.store("agent-1").progress() == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent-0", "agent-1", "world"]
    with pytest.raises(ConnectionError, match="lost at step"):
        attempt(dataclasses.replace(plan, resume=True), cut=22, start=5)
    assert plan.store("agent-0").steps() == [15, 20]
    resumed = attempt(dataclasses.replace(plan, resume=True))
    assert [r.replays for r in resumed] == [[(5, 7)], [(5, 7)], [(20, 22)]]
    assert all(r.rows[-1]["q_equal_reference"] and r.rows[-1]["action_agreement"] == 1.0
               for r in resumed)
    if seed is not None:
        assert [untimed(r) for r in resumed] == \
            [untimed(r) for r in attempt(None)]


@pytest.mark.ray
@pytest.mark.parametrize("partition", ["time", "observation"])
def test_ray_agents_resume_from_their_own_checkpoints(ray_cluster, tmp_path, partition):
    """Each agent (and by observation the world) a Ray actor keeping its own store: a finished
    run's checkpoints resumed run the steps after the last one again, to the same rows."""
    agents = 3 if partition == "time" else 2
    plan = CheckpointPlan(str(tmp_path), 5, tuple(f"agent-{i}" for i in range(agents)), "s")

    def run(checkpoints):
        if partition == "time":
            return run_shares_time_trials(BY_TIME, agents, 0, [0, 1], key_seed=4,
                                          runtime="ray", checkpoints=checkpoints)
        return run_shares_trials(BY_OBSERVATION, agents, 0, [0, 1], key_seed=3,
                                 runtime="ray", checkpoints=checkpoints)
    whole = run(plan)
    resumed = run(dataclasses.replace(plan, resume=True))
    assert [r.replays for r in resumed] == ([[], [(45, 48)]] if partition == "time" else
                                            [[(10, 12)], [(10, 12)]])
    assert [untimed(r) for r in resumed] == [untimed(r) for r in whole]
