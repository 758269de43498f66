"""PPRL partitioned by observation (Fig. 3): the jointly encrypted table ends equal to the
fixed-point reference's, entry for entry, with every joint action the same, at 2 and 3 agents;
each agent holds only its own key share; what agent 0 opens says nothing of the updates."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from tests.protocols.pprl.cuts import Cut
from tests.protocols.pprl.ranks import rank_correlation

from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.observation import KeyDealer, run_observation_protocol
from ppml.protocols.pprl.observation_agent import (ObservationAgent, digest,
                                                   encryptions_per_step)
from ppml.protocols.pprl.reference import run_observation_partitioned
from ppml.runtime.checkpoints import CheckpointPlan
from ppml.runtime.roles import LocalRole
from ppml.protocols.pprl.turn import COMPARED, ENGINE, OPENED

BALANCING = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                        episode_steps=15, methods=["pprl"], trials=1)


@pytest.mark.parametrize("agents,selection", [(2, "random"), (3, "epsilon_greedy")])
def test_the_jointly_encrypted_table_equals_the_fixed_point_reference(agents, selection):
    small = PPRLOptions(task="load_balancing", partition="observation", episodes=1,
                        episode_steps=12 if agents == 3 else 40, methods=["pprl"], trials=1,
                        selection=selection, epsilon=0.3)
    result = run_observation_protocol(small, agents, 0, 1, 512, True, key_seed=4)
    last = result.rows[-1]
    assert last["q_equal_reference"] and last["action_agreement"] == 1.0
    assert last["divisions"] == small.episode_steps
    assert (result.table.q != 0).sum() > 5                     # the table moved
    reference = run_observation_partitioned(small, "crl_fixed", 0, 1, agents)
    assert [r["episode_reward"] for r in result.rows] == \
        [r["episode_reward"] for r in reference.rows]


def test_fresh_keys_and_fresh_actions_agree_with_the_reference_too():
    last = run_observation_protocol(BALANCING, 2, 0, 2, 512, True).rows[-1]
    assert last["q_equal_reference"] and last["action_agreement"] == 1.0


def test_the_encryption_count_is_what_each_step_costs():
    last = run_observation_protocol(BALANCING, 2, 0, 3, 512, True, key_seed=1).rows[-1]
    steps = BALANCING.episodes * BALANCING.episode_steps
    assert encryptions_per_step([6, 6], [2, 2]) == [27, 13]
    assert last["encryptions"] == 144 + 40 * steps                # the table's, then 40 a step
    assert last["decryptions"] == 2 * steps + 2 * 144             # two shares each, the output


def test_each_agent_holds_its_own_key_share_and_no_key():
    """The dealer hands each agent its share sealed to that agent's X25519 key, once, and
    keeps none; no agent holds a private key or another agent's share."""
    dealer = KeyDealer(6, 2, 512, True)
    agents = [ObservationAgent(i, 2, BALANCING, 0, 0, 512, True, key_seed=6) for i in range(2)]
    for agent in agents:
        agent.attach([LocalRole(a, a.name, 10) for a in agents], LocalRole(dealer, "dealer", 10),
                     None)
        agent.take_key_share()
    assert agents[0].public_key == agents[1].public_key
    shares = [agent._key_share._holder._obj for agent in agents]     # each its own, in-process
    assert shares[0].index == 0 and shares[1].index == 1
    assert shares[0]._exponent != shares[1]._exponent
    assert dealer._shares == [None, None]
    with pytest.raises(PermissionError, match="agent 1's key share has been handed over"):
        dealer.key_share(1, agents[1]._agreement.public)
    for agent in agents:
        assert not any(hasattr(agent, name) for name in ("private_key", "_private_key"))
    share = shares[0]
    assert "exponent" not in repr(share) and str(share._exponent) not in repr(share)
    public, _, box = KeyDealer(6, 2, 512, True).key_share(0, agents[0]._agreement.public)
    assert str(share._exponent).encode() not in box and share.exponent_bytes() not in box


@pytest.mark.parametrize("selection", ["greedy", "epsilon_greedy"])
def test_greedy_choices_by_fig_4_equal_the_reference(selection):
    """Each agent's greedy action from the joint table, ties broken by the agents' own
    permutations: the same joint actions and table as the reference."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=25, methods=["pprl"], trials=1, selection=selection,
                          epsilon=0.3)
    result = run_observation_protocol(options, 2, 0, 6, 512, True, key_seed=5,
                                      record_views=True)
    last = result.rows[-1]
    assert last["q_equal_reference"] and last["action_agreement"] == 1.0
    assert last["comparisons"] > (10 if selection == "epsilon_greedy" else 50)
    seen = [row["l"] for row in result.views["agent-0"].to_pylist()]
    assert seen.count(COMPARED) == 6 * last["comparisons"]     # masked pairs of joint actions
    assert {row["l"] for row in result.views["agent-1"].to_pylist()} == {ENGINE}
    reference = run_observation_partitioned(options, "crl_fixed", 0, 6, 2)
    assert len({tuple(a) for a in reference.taken}) > 1        # the greedy choice moved


def test_a_greedy_step_costs_a_slice_and_the_pairs_of_joint_actions_more():
    assert encryptions_per_step([6, 6], [2, 2], greedy_choices=True) == [27 + 24, 13 + 6]
    assert encryptions_per_step([6, 6, 6], [2, 2, 2]) == [2 * 144 + 3, 2 * 12 + 1 + 132, 13]
    assert encryptions_per_step([6, 6], [2, 2], qlearning=True) == [12 + 3 + 24, 13 + 6]


@pytest.mark.parametrize("selection", ["random", "epsilon_greedy"])
def test_q_learning_takes_its_max_by_fig_4_and_equals_the_reference(selection):
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=20, methods=["pprl"], trials=1, selection=selection,
                          epsilon=0.3, learner="qlearning")
    last = run_observation_protocol(options, 2, 0, 7, 512, True, key_seed=6).rows[-1]
    assert last["q_equal_reference"] and last["action_agreement"] == 1.0
    assert last["comparisons"] >= 40                            # a max every step
    assert last["encryptions"] == 144 + sum(encryptions_per_step(
        [6, 6], [2, 2], qlearning=True)) * 40 + (30 * (last["comparisons"] - 40))


def test_agent_0_opens_masked_updates_unrelated_to_the_true_ones(k_deltas):
    """Agent 0 opens y = K dQ + 2^b + r each step; the last agent opens only the engine's
    masked values; the ranks of y do not follow the true K dQ."""
    options = PPRLOptions(task="load_balancing", partition="observation", episodes=2,
                          episode_steps=300, methods=["pprl"], trials=1)
    result = run_observation_protocol(options, 2, 0, 4, 512, True, key_seed=2,
                                      record_views=True)
    assert result.rows[-1]["q_equal_reference"]
    true = k_deltas
    run_observation_partitioned(options, "crl_fixed", 0, 4, 2)
    view = result.views["agent-0"].to_pylist()
    opened = [int(row["exact"]) for row in view if row["l"] == OPENED]
    true = true[-600:]                       # the last run's (the protocol's evaluation runs it too)
    assert len(opened) == 600 and len(set(true)) > 100
    assert abs(rank_correlation(opened, true)) < 0.16                       # 3.9 sigma
    assert {row["l"] for row in result.views["agent-1"].to_pylist()} == {ENGINE}


def test_an_agent_in_between_gives_shares_of_announced_values_only():
    """Agent 0 could ask an agent in between for its shares of the table itself; that agent
    gives shares only of what the last agent announced it masked, and after the run once."""
    agent = ObservationAgent(1, 3, BALANCING, 0, 0, 512, True, key_seed=2)
    agent._key_share = SimpleNamespace(partial_decrypt=lambda cts: SimpleNamespace(values=cts))
    with pytest.raises(PermissionError, match="only of what the last agent masked"):
        agent.share_for_owner([5, 6])
    agent.expect(digest([5, 6]))
    with pytest.raises(PermissionError):
        agent.share_for_owner([5, 7])                             # not what was announced
    agent.expect(digest([5, 6]))
    assert agent.share_for_owner([5, 6]) == [5, 6]
    with pytest.raises(PermissionError):
        agent.share_for_owner([5, 6])                             # once
    agent.finish()
    assert agent.share_for_owner([1, 2]) == [1, 2]                # the final table, once
    with pytest.raises(PermissionError, match="share of the final table"):
        agent.share_for_owner([1, 2])


RESUMED = PPRLOptions(task="load_balancing", partition="observation", episodes=4,
                      episode_steps=3, methods=["pprl"], trials=1, selection="epsilon_greedy",
                      learner="qlearning", epsilon=0.3)
"""Four episodes of three steps: greedy choices and Q-learning's max by Fig. 4, the coin."""


def resumed_trial(runtime: str, tmp_path, monkeypatch, seed, agents: int = 2):
    """``RESUMED`` with checkpoints every 2 steps, cut at step 8 and resumed from 6 (an
    episode's start), cut at step 12 and resumed from 10 (within the last episode): the
    resumed result, and the plan (its stores)."""
    names = tuple(f"agent-{i}" for i in range(agents))
    plan = CheckpointPlan(str(tmp_path), 2, names, "s")

    def attempt(checkpoints, cut=None, start=0):
        with monkeypatch.context() as patch:
            if cut:
                Cut(patch, cut, start, ObservationAgent, "apply_from", each=1)
            return run_observation_protocol(RESUMED, agents, 0, 1, 512, True, key_seed=seed,
                                            runtime=runtime, checkpoints=checkpoints)
    with pytest.raises(ConnectionError, match="step 8"):
        attempt(plan, cut=7)
    assert plan.store("world").steps() == [4, 6] and plan.store("driver").progress() == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == [*names, "driver", "world"]
    with pytest.raises(ConnectionError, match="step 12"):
        attempt(dataclasses.replace(plan, resume=True), cut=11, start=6)
    assert plan.store("agent-1").steps() == [8, 10]
    return attempt(dataclasses.replace(plan, resume=True)), attempt


@pytest.mark.parametrize("seed", [4, None])
def test_a_trial_resumes_from_its_checkpoints(tmp_path, monkeypatch, seed):
    """In seeded mode the uninterrupted run's rows (apart from timings) and table; with fresh
    keys and entropy the reference's actions and table (each agent's key share, generators
    and entropy its own, restored); steps 7 and 11 (finished before each cut) replayed; each
    party's files its own, the dealer none."""
    resumed, attempt = resumed_trial("local", tmp_path, monkeypatch, seed)
    assert resumed.replays == [(6, 7), (10, 11)]
    last = resumed.rows[-1]
    assert last["q_equal_reference"] and last["action_agreement"] == 1.0
    assert last["divisions"] == 12 and len(resumed.rows) == RESUMED.episodes
    if seed is not None:
        whole = attempt(None)
        assert resumed.taken == whole.taken and np.array_equal(resumed.table.q, whole.table.q)
        assert [{k: v for k, v in row.items() if not k.endswith("_s")} for row in resumed.rows] \
            == [{k: v for k, v in row.items() if not k.endswith("_s")} for row in whole.rows]
