"""Who may call what in a federated PPRL run: each call that belongs to one agent at a time
goes to that agent only (`pprl_parties.RULES`), whatever the allow-lists let a peer name."""

from types import SimpleNamespace

import pytest

from ppml.crypto.agreement import KeyAgreement
from ppml.crypto.rng import fresh_key
from ppml.experiments.pprl_parties import RULES, Served, Trials
from ppml.protocols.pprl.roles import EngineDealer


def test_the_dealer_serves_a_turn_to_its_owner_and_holder_only():
    dealer = EngineDealer(None)
    dealer.deal(3, 0, 2, KeyAgreement(fresh_key()).public)          # turn 3: owner 0, holder 2
    rules = RULES["dealer"]
    assert rules["corrections"](dealer, "agent-0", (3,)) and \
        not rules["corrections"](dealer, "agent-2", (3,))            # the holder: never
    assert rules["forget"](dealer, "agent-2", (3,)) and not rules["forget"](dealer, "agent-1", (3,))
    assert rules["deal"](dealer, "agent-2", (4, 0, 2, b"")) and \
        not rules["deal"](dealer, "agent-1", (4, 0, 2, b""))          # only as its own holder
    assert not rules["corrections"](dealer, "agent-0", (9,))         # not dealt: nobody
    with pytest.raises(PermissionError, match="not the owner"):
        dealer.owner_box(3, 2, KeyAgreement(fresh_key()).public)     # the holder cannot take it
    dealer.owner_box(3, 0, KeyAgreement(fresh_key()).public)
    with pytest.raises(PermissionError, match="taken its key already"):
        dealer.owner_box(3, 0, KeyAgreement(fresh_key()).public)     # once


def test_an_agent_serves_its_engine_table_and_chain_to_the_right_agent_only():
    owner = SimpleNamespace(engine_holder=2, owner=1, index=1, agents=3)
    rules = RULES["agent"]
    for method in ("compare", "divide", "join_engine", "close_engine", "prepare_owner"):
        assert rules[method](owner, "agent-2", (1,)) and not rules[method](owner, "agent-0", (1,))
    assert rules["hand_over"](owner, "agent-2", (5, 2)) and \
        not rules["hand_over"](owner, "agent-0", (5, 2))              # asking for another
    assert rules["final_table"](owner, "agent-1", ()) and not rules["final_table"](owner,
                                                                                  "agent-2", ())
    assert {c for c in ("agent-0", "agent-1", "agent-2") if rules["take_outbox"](owner, c, ())} \
        == {"agent-0", "agent-2"}                                    # the chain's neighbours
    assert rules["share_for_owner"](owner, "agent-0", ([1],)) and \
        not rules["share_for_owner"](owner, "agent-2", ([1],))
    assert not rules["place"](owner, "agent-2", (1,))                 # another agent's place


def test_served_refuses_a_call_its_rule_refuses_and_too_few_arguments():
    world = SimpleNamespace(observe=lambda index: (index, 0.0))
    trials = Trials(lambda trial: world, report=None)
    trials.start_trial(0)
    served = Served(trials, "world")
    assert served.observe("agent-1", 1) == (1, 0.0)
    with pytest.raises(PermissionError, match="agent-0 may not call observe"):
        served.observe("agent-0", 1)
    with pytest.raises(PermissionError):
        served.observe("agent-1")
