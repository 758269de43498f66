"""PPRL partitioned by time: the encrypted run ends with the fixed-point reference's table,
entry for entry, at 2 and 3 agents; each agent holds only its own private key."""

import dataclasses

import numpy as np
import pytest

from tests.protocols.pprl.cuts import Cut
from tests.protocols.pprl.ranks import rank_correlation

from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.protocol import run_time_protocol
from ppml.protocols.pprl.reference import run_time_partitioned
from ppml.protocols.pprl.roles import TimeAgent
from ppml.protocols.pprl.turn import COMPARED, ENGINE, HANDED_OVER, OPENED
from ppml.runtime.checkpoints import CheckpointPlan

CLIFF = PPRLOptions(task="CliffWalking-v1", reward_bound=100, steps_per_agent=60,
                    methods=["pprl"], trials=1)
"""Rewards of -1 and -100 every step: the divisions meet negative values from the start."""


@pytest.mark.parametrize("agents", [2, 3])
def test_the_encrypted_table_equals_the_fixed_point_reference(agents):
    row = run_time_protocol(CLIFF, agents, 0, 1, 512, True, key_seed=4).rows[0]
    assert row["q_equal_reference"] and row["action_agreement"] == 1.0
    assert row["divisions"] == (agents - 1) * CLIFF.steps_per_agent
    reference = run_time_partitioned(CLIFF, "crl_fixed", agents, 0, 1).table.q
    assert (reference < 0).sum() > 20                        # the table is far from trivial


def test_fresh_keys_agree_with_the_reference_too():
    row = run_time_protocol(CLIFF, 2, 0, 2, 512, True).rows[0]
    assert row["q_equal_reference"] and row["encryptions"] > row["decryptions"] > 0


def test_rewards_beyond_the_bound_are_refused():
    small = PPRLOptions(task="CliffWalking-v1", reward_bound=50, steps_per_agent=400,
                        methods=["pprl"], trials=1)
    with pytest.raises(ValueError, match="outside pprl.reward_bound=50"):
        run_time_protocol(small, 2, 0, 0, 512, True, key_seed=1)


def test_an_agent_holds_its_own_private_key_only():
    agents = [TimeAgent(i, 2, CLIFF, 0, 0, 512, True, key_seed=7) for i in range(2)]
    assert agents[0]._private_key.public_key == agents[0].public_key
    assert agents[0].public_key != agents[1].public_key
    assert not any(hasattr(a, name) for a in agents for name in ("table", "_masks"))


@pytest.mark.parametrize("learner", ["sarsa", "qlearning"])
@pytest.mark.parametrize("selection", ["random", "greedy", "epsilon_greedy"])
def test_every_learner_and_selection_equals_the_reference(learner, selection):
    """Greedy choices and Q-learning's max by private comparison (four actions, ties broken by
    the holder's permutation): the same actions and the same table as the reference."""
    options = PPRLOptions(task="CliffWalking-v1", reward_bound=100, steps_per_agent=40,
                          methods=["pprl"], trials=1, learner=learner, selection=selection,
                          epsilon=0.3)
    row = run_time_protocol(options, 3 if selection == "greedy" else 2, 0, 1, 512, True,
                            key_seed=4).rows[0]
    assert row["q_equal_reference"] and row["action_agreement"] == 1.0
    assert (row["comparisons"] > 0) == ((learner, selection) != ("sarsa", "random"))


def test_the_owners_view_does_not_follow_the_holders_updates(k_deltas):
    """Agent 0 (the owner in agent 1's turn) opens y = K dQ + 2^b + r: its ranks do not follow
    the true K dQ of agent 1's steps (|Spearman| < 0.15 over 1,000 steps, 4.7 sigma)."""
    options = PPRLOptions(task="CliffWalking-v1", reward_bound=100, steps_per_agent=1000,
                          methods=["pprl"], trials=1)
    result = run_time_protocol(options, 2, 0, 3, 512, True, key_seed=2, record_views=True)
    assert result.rows[0]["q_equal_reference"]
    true = k_deltas
    run_time_partitioned(options, "crl_fixed", 2, 0, 3)
    view = result.views["agent-0"].to_pylist()
    opened = [int(row["exact"]) for row in view if row["l"] == OPENED]
    assert len(opened) == 1000 and len(set(true[-1000:])) > 50
    assert abs(rank_correlation(opened, true[-1000:])) < 0.15
    engine = [row for row in view if row["l"] == ENGINE]
    assert engine and not any(row["l"] == OPENED for row in result.views["agent-1"].to_pylist())


def test_the_owner_sees_the_same_comparisons_in_every_step():
    """Exploring steps need no greedy comparison and a step that ends an episode needs one more
    (FrozenLake ends some 40 of agent 1's 300 steps): the owner still sees 6 masked pairs x 3 comparisons in every step
    (epsilon-greedy Q-learning), blind ones filling in; only the holder opens their results."""
    options = PPRLOptions(task="FrozenLake-v1", reward_bound=1, steps_per_agent=300,
                          methods=["pprl"], trials=1, selection="epsilon_greedy", epsilon=0.5,
                          learner="qlearning")
    result = run_time_protocol(options, 2, 0, 5, 512, True, key_seed=3, record_views=True)
    row = result.rows[0]
    assert row["q_equal_reference"] and row["action_agreement"] == 1.0
    assert row["comparisons"] == 3 * 300
    steps = [r["t"] - 300 for r in result.views["agent-0"].to_pylist()      # turn 1's steps
             if r["l"] == COMPARED]                                            # follow turn 0's
    assert np.bincount(steps)[1:].tolist() == [6 * 3] * 300
    assert {r["l"] for r in result.views["agent-1"].to_pylist()} == {ENGINE}

def test_the_key_switch_shows_the_owner_masked_values_only(k_deltas):
    """Two rounds: when the turn comes back to agent 0, the owner, it opens Q + R for every
    entry (l = HANDED_OVER) and holds the table under agent 1's key (and agent 1 likewise in
    turn 3); what agent 0
    opens does not follow the true Q-values (|Spearman| < 0.3 over 192 entries), and the run
    still equals the reference."""
    options = PPRLOptions(task="CliffWalking-v1", reward_bound=100, steps_per_agent=300,
                          rounds=2, methods=["pprl"], trials=1)
    result = run_time_protocol(options, 2, 0, 3, 512, True, key_seed=2, record_views=True)
    assert result.rows[0]["q_equal_reference"] and result.rows[0]["action_agreement"] == 1.0
    table = run_time_partitioned(PPRLOptions(**{**options.__dict__, "rounds": 1}),
                                 "crl_fixed", 2, 0, 3)
    view = result.views["agent-0"].to_pylist()
    opened = [int(row["exact"]) for row in view if row["l"] == HANDED_OVER]
    assert [row["t"] for row in view if row["l"] == HANDED_OVER] == [2 * 300] * 192
    true = [int(v) for v in table.table.q.ravel()]
    assert len(set(true)) > 10 and abs(rank_correlation(opened, true)) < 0.3
    assert [row["t"] for row in result.views["agent-1"].to_pylist()       # and back, turn 3
            if row["l"] == HANDED_OVER] == [3 * 300] * 192


def test_a_holder_hands_its_table_over_after_its_turn_and_to_the_next_turn_only():
    agent = TimeAgent(1, 2, CLIFF, 0, 0, 512, True, key_seed=3)
    agent.turn, agent.player = 1, object()                        # its turn 1 is under way
    with pytest.raises(RuntimeError, match="once that is over, not for turn 2"):
        agent.hand_over(2, 0)
    agent.player = None
    with pytest.raises(RuntimeError, match="not for turn 5"):
        agent.hand_over(5, 0)
    with pytest.raises(RuntimeError, match="after the last turn only"):
        agent.final_table()


@pytest.mark.parametrize("seed", [4, None])
def test_a_trial_resumes_from_its_checkpoints(tmp_path, monkeypatch, seed):
    """Two rounds of two agents (30 steps a turn, the key switch in turn 2), checkpoints every
    12 steps.  Cut at step 36 and resumed from 24 (within the first turn, in the clear), then
    cut at 96 and resumed from 84 (within turn 2, where the holder makes its engine anew): in
    seeded mode the uninterrupted run's actions and table; with fresh keys and entropy the
    resumed agents still take the reference's actions to its table (their keys and generators
    restored); steps 25-30 and 85-90 (finished before each cut) reported as replayed; each
    agent's files its own."""
    options = PPRLOptions(task="CliffWalking-v1", reward_bound=100, steps_per_agent=30,
                          rounds=2, methods=["pprl"], trials=1, selection="epsilon_greedy",
                          epsilon=0.3)
    plan = CheckpointPlan(str(tmp_path), 12, ("agent-0", "agent-1"), "s")

    def attempt(checkpoints, cut=None, start=0):
        with monkeypatch.context() as patch:
            if cut:
                Cut(patch, cut, start)
            return run_time_protocol(options, 2, 0, 1, 512, True, key_seed=seed,
                                     checkpoints=checkpoints)
    with pytest.raises(ConnectionError, match="step 36"):
        attempt(plan, cut=35)
    assert plan.store("agent-1").steps() == [12, 24] and plan.store("driver").progress() == 30
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent-0", "agent-1", "driver"]
    with pytest.raises(ConnectionError, match="lost at step"):
        attempt(dataclasses.replace(plan, resume=True), cut=95, start=24)
    assert plan.store("agent-0").steps() == [72, 84]
    resumed = attempt(dataclasses.replace(plan, resume=True))
    assert resumed.replays == [(24, 30), (84, 90)]
    row = resumed.rows[0]
    assert row["q_equal_reference"] and row["action_agreement"] == 1.0
    assert row["divisions"] == 3 * options.steps_per_agent
    if seed is not None:
        whole = attempt(None)
        assert resumed.taken == whole.taken and np.array_equal(resumed.table.q, whole.table.q)
        assert row == {**whole.rows[0], **{k: row[k] for k in row if k.endswith("_s")}}
