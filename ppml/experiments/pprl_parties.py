"""PPRL federated: each agent, the dealer and (partitioned by observation) the world a party
of its own (Sakuma et al., Figs. 2-4), meeting over TLS links (docs/federated.md).

Roster order: ``dealer``, (``world``,) then ``agent-0`` ... ``agent-<m-1>``.  Every agent
links with every other party.  ``agent-0`` drives the run's trials: for each it has every
party start a fresh trial (`Trials`: fresh agents with fresh keys, a fresh dealer and world),
then plays it with the same driver as the other runtimes (`protocol.play_schedule` by time,
`observation.play_observation` by observation), which passes no ciphertext and no perception
through it unless it is their holder, and has the final table opened (the run's output).  Each
party serves its role to the parties that call it (`ppml.runtime.remote.serve` refuses any
other method), and a method that names an agent (the world's ``observe`` and ``act``, the
dealer's ``key_share``, agent-0's ``place``) serves the calling agent's own index only.  Each
engine's seats link up over TLS of their own, each pinning the certificate the other sent over
the parties' authenticated link.

Outputs, each party's own, one per trial: each agent its report (counts and seconds and,
EVALUATION ONLY, the entropy of its choices, for the reference) and with ``record_views`` its
view of the first trial (EVALUATION ONLY); the world the per-episode
rows and the joint actions taken (EVALUATION ONLY); agent-0 also the opened final tables and
the trials' seconds.
"""

from __future__ import annotations

import time

from ppml.experiments.config import RunConfig
from ppml.experiments.federation import register_parties
from ppml.protocols.pprl.observation import KeyDealer, play_observation
from ppml.protocols.pprl.observation_agent import ObservationAgent
from ppml.protocols.pprl.protocol import play_schedule
from ppml.protocols.pprl.roles import EngineDealer, TimeAgent
from ppml.protocols.pprl.world import World
from ppml.runtime.federated import Node
from ppml.runtime.roles import LocalRole, gather

ENGINE_CALLS = {"open_engine", "join_engine", "compare", "divide"}
"""The owner's side of an engine, which the holder calls."""
CALLS = {
    "time": {
        "peer": ENGINE_CALLS | {"keys", "hand_over", "prepare_owner", "close_engine",
                                "final_table"},
        "driver": {"begin_clear", "begin_turn", "play", "end_turn", "reveal", "report"},
        "dealer": {"deal", "corrections", "forget"},
    },
    "observation": {
        "peer": ENGINE_CALLS | {"take_outbox", "decryption_share", "place",
                                "maximum_position"},
        "driver": {"take_key_share", "link", "prepare", "perceive", "act", "shift", "coin",
                   "choose_random", "draw_order", "permute_start", "permute_from",
                   "compare_block", "take_place", "take_maximum", "slices", "slices_from",
                   "divide_from", "widen_from", "apply_from", "reveal", "report"},
        "dealer": {"deal", "corrections", "forget", "key_share"},
        "world": {"observe", "act"},
        "world_driver": {"reset", "advance", "end_episode", "report"},
    },
}
"""What each party serves, per partitioning: ``peer`` to every agent, ``driver`` besides to
agent-0, ``dealer`` and ``world`` to every agent, ``world_driver`` besides to agent-0; every
party serves ``start_trial`` to agent-0."""
OWN_INDEX = {"dealer": {"key_share"}, "world": {"observe", "act"}, "agent": {"place"}}
"""Methods whose first argument is an agent's index: only that agent may call them."""


def names(config: RunConfig) -> list:
    world = ["world"] if config.pprl.partition == "observation" else []
    return ["dealer", *world] + [f"agent-{i}" for i in range(config.parties)]


class Trials:
    """A party across the run's trials: ``make(trial)`` makes its role for each trial (started
    by agent-0), to which every call goes; each finished trial's ``report`` is kept for the
    outputs."""

    def __init__(self, make, report: str | None = "report"):
        self.make, self.report_method = make, report
        self.role = None
        self.reports, self.views = [], []

    def start_trial(self, trial: int) -> None:
        self.finish()
        self.role = self.make(trial)

    def finish(self) -> None:
        """The current trial's report kept, its role closed."""
        if self.role is not None:
            if self.report_method is not None:
                self.reports.append(getattr(self.role, self.report_method)())
                view = getattr(self.role, "view", None)          # EVALUATION ONLY
                self.views.append(None if view is None else view.rows)
            if hasattr(self.role, "close"):
                self.role.close()
            self.role = None

    def __getattr__(self, method: str):
        role = self.__dict__.get("role")
        if role is None:
            raise RuntimeError("no trial has been started")
        return getattr(role, method)


class Served:
    """What a party serves, with each caller's name (`remote.serve`'s ``pass_caller``): a call
    of a method of ``own`` (`OWN_INDEX`) must name the caller's own index."""

    def __init__(self, trials: Trials, own: set):
        self.trials, self.own = trials, own

    def __getattr__(self, method: str):
        def call(caller: str, *args):
            if method in self.own and (not args or caller != f"agent-{args[0]}"):
                raise PermissionError(f"{caller} may call {method} for its own index only")
            return getattr(self.trials, method)(*args)
        return call


def party(config: RunConfig, name: str, identity, peers) -> dict:
    """What party ``name`` does in a federated PPRL run."""
    roster = names(config)
    if name not in roster:
        raise ValueError(f"party={name} is not a party of {config.experiment} (parties: "
                         f"{roster})")
    c, calls = config, CALLS[config.pprl.partition]
    by_time = c.pprl.partition == "time"
    agents = [n for n in roster if n.startswith("agent-")]
    node = Node(identity, peers, [p for p in roster if p != name], {}, c.party_timeout_s)
    try:
        if name == "dealer":
            trials = Trials(lambda trial: EngineDealer(c.seed) if by_time else
                            KeyDealer(c.seed, c.parties, c.key_bits, c.insecure_key_bits_ok),
                            report=None)
            allowed = {a: calls["dealer"] for a in agents}
        elif name == "world":
            trials = Trials(lambda trial: World(c.pprl, c.parties, c.data_seed, trial))
            allowed = {a: calls["world"] for a in agents}
            allowed["agent-0"] = allowed["agent-0"] | calls["world_driver"]
        else:
            index = agents.index(name)
            roles = [None if a == name else node.remote(a) for a in agents]
            others = [node.remote(p) for p in roster if not p.startswith("agent-")]

            def make(trial):
                agent = (TimeAgent if by_time else ObservationAgent)(
                    index, c.parties, c.pprl, c.data_seed, trial, c.key_bits,
                    c.insecure_key_bits_ok, c.seed, "federated", c.record_views and trial == 0,
                    c.workers, c.party_timeout_s)
                agent.attach(roles, *others)
                return agent

            trials = Trials(make)
            roles[index] = LocalRole(trials, name, c.party_timeout_s)
            allowed = {a: calls["peer"] | (calls["driver"] if a == "agent-0" else set())
                       for a in agents if a != name}
        for caller in allowed:
            if caller == "agent-0":
                allowed[caller] = allowed[caller] | {"start_trial"}
        own = OWN_INDEX[name if name in OWN_INDEX else "agent"]
        node.serve(Served(trials, own), allowed, pass_caller=True)
        node.connect()
        out = _drive(config, roles, [node.remote(p) for p in roster if p not in agents]) \
            if name == "agent-0" else {}
        if name != "agent-0":
            node.wait_closed(["agent-0"])
        trials.finish()
        return {**out, "reports": trials.reports, "views": trials.views}
    finally:
        node.close()


def _drive(config: RunConfig, roles: list, services: list) -> dict:
    """agent-0: every trial (``services``: the dealer's and the world's roles, which start each
    trial too), and the final tables opened by their owners (EVALUATION ONLY)."""
    out = {"values": [], "seconds": [], "setup_s": [], "offline_s": []}
    for trial in range(config.pprl.trials):
        start = time.perf_counter()                  # every party makes its keys at once
        gather([role.submit("start_trial", trial) for role in [*services, *roles[1:],
                                                              roles[0]]])
        offline = 0.0
        if config.pprl.partition == "time":
            out["setup_s"].append(time.perf_counter() - start)
            holder, owner = play_schedule(roles, config.pprl)
            out["values"].append(roles[owner].call("reveal", holder))
        else:
            gather([role.submit("take_key_share") for role in [*roles[1:], roles[0]]])
            roles[-1].call("link")
            out["setup_s"].append(time.perf_counter() - start)
            offline = play_observation(roles, services[1], config.pprl)
            out["values"].append(roles[0].call("reveal"))
        out["offline_s"].append(offline)
        out["seconds"].append(time.perf_counter() - start)
    return out


register_parties("pprl", names, party)
