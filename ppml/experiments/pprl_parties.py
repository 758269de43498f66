"""PPRL partitioned by time federated: each agent and the engines' dealer a party of its own
(Sakuma et al., Fig. 2), meeting over TLS links (docs/federated.md).

Roster order: ``dealer``, then ``agent-0`` ... ``agent-<m-1>``.  Every agent links with every
other agent and with the dealer.  ``agent-0`` drives the run's trials (`Trials`): for each it
starts a fresh `roles.TimeAgent` at every agent (fresh keys), plays the turns
(`protocol.play_schedule`, which passes no ciphertext through it) and has the last owner open
the final table (the run's output).  Each party serves its agent: agent-0 may call the turn
methods; every agent the owner's side, the hand-over and the public keys
(`ppml.runtime.remote.serve` refuses anything else).  Each engine's seats link up over TLS of
their own, each pinning the certificate the other sent over the agents' authenticated link.

Outputs, each party's own: each agent its reports, one per trial (counts and seconds, its
actions and, EVALUATION ONLY, the entropy of its choices, for the reference); agent-0 also the
opened final tables and the trials' seconds.
"""

from __future__ import annotations

import time

from ppml.experiments.config import RunConfig
from ppml.experiments.federation import register_parties
from ppml.protocols.pprl.protocol import play_schedule
from ppml.protocols.pprl.roles import EngineDealer, TimeAgent
from ppml.runtime.federated import Node
from ppml.runtime.roles import LocalRole, gather

PEER_CALLS = {"keys", "hand_over", "open_engine", "join_engine", "compare", "divide",
              "close_engine", "final_table"}
"""What any agent may call on another: the owner's side, the hand-over, the public keys."""
DRIVER_CALLS = PEER_CALLS | {"start_trial", "begin_clear", "begin_turn", "play", "end_turn",
                             "reveal"}
"""What agent-0, which drives the turns, may call besides."""
DEALER_CALLS = {"deal", "corrections", "forget"}


def names(config: RunConfig) -> list:
    return ["dealer"] + [f"agent-{i}" for i in range(config.parties)]


class Trials:
    """An agent's party across the run's trials: a fresh `TimeAgent` for each trial (started
    by agent-0), to which every other call goes; its reports kept for the outputs."""

    def __init__(self, config: RunConfig, index: int, peers: list, dealer):
        self.config, self.index, self.peers, self.dealer = config, index, peers, dealer
        self.agent = None
        self.reports = []

    def start_trial(self, trial: int) -> None:
        self.finish()
        c = self.config
        self.agent = TimeAgent(self.index, c.parties, c.pprl, c.data_seed, trial, c.key_bits,
                               c.insecure_key_bits_ok, c.seed, "federated", False, c.workers,
                               c.party_timeout_s)
        self.agent.attach(self.peers, self.dealer)

    def finish(self) -> None:
        """The current trial's report, kept, and its agent closed."""
        if self.agent is not None:
            self.reports.append(self.agent.report())
            self.agent.close()
            self.agent = None

    def __getattr__(self, method: str):
        agent = self.__dict__.get("agent")
        if agent is None:
            raise RuntimeError(f"agent-{self.index} has no trial started")
        return getattr(agent, method)


def party(config: RunConfig, name: str, identity, peers) -> dict:
    """What party ``name`` does in a federated PPRL run."""
    roster = names(config)
    if name not in roster:
        raise ValueError(f"party={name} is not a party of {config.experiment} (parties: "
                         f"{roster})")
    agents = roster[1:]
    node = Node(identity, peers, [p for p in roster if p != name], {}, config.party_timeout_s)
    try:
        if name == "dealer":
            node.serve(EngineDealer(config.seed), {a: DEALER_CALLS for a in agents})
            node.connect()
            node.wait_closed(agents)
            return {}
        index = agents.index(name)
        roles = [None if a == name else node.remote(a) for a in agents]
        trials = Trials(config, index, roles, node.remote("dealer"))
        roles[index] = LocalRole(trials, name, config.party_timeout_s)
        node.serve(trials, {a: DRIVER_CALLS if a == "agent-0" else PEER_CALLS
                            for a in agents if a != name})
        node.connect()
        out = _drive(config, roles) if index == 0 else {}
        if index:
            node.wait_closed(["agent-0"])
        trials.finish()
        return {**out, "reports": trials.reports}
    finally:
        node.close()


def _drive(config: RunConfig, roles: list) -> dict:
    """agent-0: every trial's turns, and the final tables opened by their last owners."""
    values, seconds, setups = [], [], []
    for trial in range(config.pprl.trials):
        start = time.perf_counter()                   # each agent makes its keys at once
        gather([role.submit("start_trial", trial) for role in roles[1:] + roles[:1]])
        setups.append(time.perf_counter() - start)
        holder, owner = play_schedule(roles, config.pprl)
        values.append(roles[owner].call("reveal", holder))            # EVALUATION ONLY
        seconds.append(time.perf_counter() - start)
    return {"values": values, "seconds": seconds, "setup_s": setups}


register_parties("pprl", names, party)
