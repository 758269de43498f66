"""PPRL federated: each agent, the dealer and (partitioned by observation) the world a party
of its own (Sakuma et al., Figs. 2-4), meeting over TLS links (docs/federated.md).

Roster order: ``dealer``, (``world``,) then ``agent-0`` ... ``agent-<m-1>``.  This module runs
the Paillier backend; the shares backend's parties are `pprl_shares_parties`.  Every agent
links with every other party.  ``agent-0`` drives the run's trials: for each it has every
party start a fresh trial (`Trials`: fresh agents with fresh keys, a fresh dealer and world),
then plays it with the same driver as the other runtimes (`protocol.play_schedule` by time,
`observation.play_observation` by observation), which passes no ciphertext and no perception
through it unless it is their holder, and has the final table opened (the run's output).  Each
party serves its role to the parties that call it (`ppml.runtime.remote.serve` refuses any
other method), and a method that names an agent (the world's ``observe`` and ``act``, the
dealer's ``key_share``, agent-0's ``place``) serves the calling agent's own index only, and
each call that belongs to one agent at a time (the dealer's for a turn to that turn's owner or
holder, an owner's engine to its holder, a table to its next holder or after the run to its
owner, a chain's block to its neighbours) to that agent only (`RULES`).  Each
engine's seats link up over TLS of their own, each pinning the certificate the other sent over
the parties' authenticated link.

Checkpoints (``checkpoint_every``): each agent and the world keep their own, per trial, by the
plan of their own party's config (`pprl.trial_plan`); agent-0 drives them (`RoleCheckpoints`,
``give_plans=False``) and keeps its own progress.  The dealer keeps none: a resumed trial's
agents keep their own keys (by observation, their key shares), and its engines are made anew.
A restarted run (`checkpointing.with_restarts`) goes on with every trial from the last step its
parties hold: a trial finished before at its end (its last step is always saved).

Outputs, each party's own, one per trial: each agent its report (counts and seconds and,
EVALUATION ONLY, the entropy of its choices, for the reference) and with ``record_views`` its
view of the first trial (EVALUATION ONLY); the world the per-episode
rows and the joint actions taken (EVALUATION ONLY); agent-0 also the opened final tables,
the trials' seconds and the steps each trial replayed.
"""

from __future__ import annotations

import functools
import time

from ppml.experiments.config import RunConfig
from ppml.experiments import pprl_shares_parties as shares_parties
from ppml.experiments.federation import register_parties
from ppml.experiments.pprl import trial_plan
from ppml.protocols.pprl.observation import KeyDealer, play_observation, set_up
from ppml.protocols.pprl.observation_agent import ObservationAgent
from ppml.protocols.pprl.protocol import play_schedule, stores
from ppml.protocols.pprl.roles import EngineDealer, TimeAgent
from ppml.protocols.pprl.world import World
from ppml.runtime import progress
from ppml.runtime.checkpoints import DRIVEN, RoleCheckpoints
from ppml.runtime.federated import Node
from ppml.runtime.roles import LocalRole, gather

ENGINE_CALLS = {"open_engine", "join_engine", "compare", "divide", "close_engine"}
"""The owner's side of an engine, which the holder calls."""
CALLS = {
    "time": {
        "peer": ENGINE_CALLS | {"keys", "hand_over", "prepare_owner", "final_table"},
        "driver": {"begin_clear", "begin_turn", "play", "end_turn", "rejoin", "reveal",
                   *DRIVEN},
        "dealer": {"deal", "owner_box", "corrections", "forget"},
    },
    "observation": {
        "peer": ENGINE_CALLS | {"take_outbox", "share_for_owner", "expect", "place",
                                "maximum_position"},
        "driver": {"take_key_share", "link", "prepare", "perceive", "act", "shift", "coin",
                   "choose_random", "draw_order", "permute_start", "permute_from",
                   "compare_block", "take_place", "take_maximum", "slices", "slices_from",
                   "divide_from", "widen_from", "apply_from", "finish", "reveal", *DRIVEN},
        "dealer": {"deal", "owner_box", "corrections", "forget", "key_share"},
        "world": {"observe", "act"},
        "world_driver": {"reset", "advance", "end_episode", *DRIVEN},
    },
}
"""What each party serves, per partitioning: ``peer`` to every agent, ``driver`` besides to
agent-0, ``dealer`` and ``world`` to every agent, ``world_driver`` besides to agent-0; every
party serves ``start_trial`` to agent-0.  Reports and views never cross during a run: each
party keeps its own for its outputs.  With checkpoints agent-0 drives each agent's and the
world's (`checkpoints.DRIVEN`): each keeps them by the plan of its own config."""


def _agent(caller: str) -> int | None:
    return int(caller[6:]) if caller.startswith("agent-") and caller[6:].isdigit() else None


def _is(index) -> callable:
    """A rule: the caller is the agent ``index(role, args)``."""
    def rule(role, caller, args) -> bool:
        try:
            wanted = index(role, args)
        except (IndexError, TypeError):              # too few arguments: refused
            return False
        return wanted is not None and _agent(caller) == wanted
    return rule


RULES = {
    "world": {m: _is(lambda role, args: args[0]) for m in ("observe", "act")},
    "dealer": {
        "key_share": _is(lambda role, args: args[0]),
        # the holder asks for its turn; the owner it named takes its key and corrections
        "deal": _is(lambda role, args: args[2]), "owner_box": _is(lambda role, args: args[1]),
        "corrections": _is(lambda role, args: role.parties_of(args[0])[0]),
        "forget": _is(lambda role, args: role.parties_of(args[0])[1]),
    },
    "agent": {
        "place": _is(lambda role, args: args[0]),
        # the owner's engine: opened by the holder it names, then that holder's only
        "open_engine": _is(lambda role, args: args[1]),
        **{m: _is(lambda role, args: role.engine_holder)
           for m in ("join_engine", "compare", "divide", "close_engine", "prepare_owner")},
        # the table: to the next holder only, and after the run to its owner
        "hand_over": _is(lambda role, args: args[1]),
        "final_table": _is(lambda role, args: role.owner),
        # by observation: the chain's neighbours, the last agent's position
        "take_outbox": lambda role, caller, args: _agent(caller) in (role.index - 1,
                                                                     role.index + 1),
        "maximum_position": _is(lambda role, args: role.agents - 1),
        "expect": _is(lambda role, args: role.agents - 1),
        "share_for_owner": _is(lambda role, args: 0),
    },
}
"""Who may make a call, beyond `CALLS`, per kind of party: ``rule(role, caller, args)``."""


def names(config: RunConfig) -> list:
    world = ["world"] if config.pprl.partition == "observation" else []
    return ["dealer", *world] + [f"agent-{i}" for i in range(config.parties)]


class Trials:
    """A party across the run's trials: ``make(trial)`` makes its role for each trial (started
    by agent-0), to which every call goes; each finished trial's ``report`` is kept for the
    outputs.  With ``plans`` (``plans(trial)``: the trial's checkpoint plan, or None) each
    trial's role keeps its own checkpoints in the store of party ``name``, by the plan of this
    party's own config (it takes no folder from another party)."""

    def __init__(self, make, report: str | None = "report", plans=None, name: str = ""):
        self.make, self.report_method, self.plans, self.name = make, report, plans, name
        self.role = None
        self.reports, self.views = [], []

    def start_trial(self, trial: int) -> None:
        self.end_trial()
        self.role = self.make(trial)
        plan = self.plans and self.plans(trial)
        if plan:
            self.role.use_checkpoints(plan, self.name)

    def end_trial(self) -> None:
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
    whose method has a rule in `RULES` must meet it."""

    def __init__(self, trials: Trials, kind: str):
        self.trials, self.rules = trials, RULES[kind]

    def __getattr__(self, method: str):
        rule = self.rules.get(method)

        def call(caller: str, *args):
            if rule is not None and not rule(self.trials, caller, args):
                raise PermissionError(f"{caller} may not call {method} with {len(args)} "
                                      f"arguments here now")
            return getattr(self.trials, method)(*args)
        return call


def party(config: RunConfig, name: str, identity, peers) -> dict:
    """What party ``name`` does in a federated PPRL run."""
    roster = names(config)
    if name not in roster:
        raise ValueError(f"party={name} is not a party of {config.experiment} (parties: "
                         f"{roster})")
    if config.pprl.backend == "shares":
        return shares_parties.party(config, name, identity, peers, roster)
    c, calls = config, CALLS[config.pprl.partition]
    by_time = c.pprl.partition == "time"
    agents = [n for n in roster if n.startswith("agent-")]
    node = Node(identity, peers, [p for p in roster if p != name], {}, c.party_timeout_s)
    plans = functools.partial(trial_plan, c)
    try:
        if name == "dealer":
            trials = Trials(lambda trial: EngineDealer(c.seed) if by_time else
                            KeyDealer(c.seed, c.parties, c.key_bits, c.insecure_key_bits_ok),
                            report=None)
            allowed = {a: calls["dealer"] for a in agents}
        elif name == "world":
            trials = Trials(lambda trial: World(c.pprl, c.parties, c.data_seed, trial),
                            plans=plans, name=name)
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

            trials = Trials(make, plans=plans, name=name)
            roles[index] = LocalRole(trials, name, c.party_timeout_s)
            allowed = {a: calls["peer"] | (calls["driver"] if a == "agent-0" else set())
                       for a in agents if a != name}
        for caller in allowed:
            if caller == "agent-0":
                allowed[caller] = allowed[caller] | {"start_trial"}
        kind = name if name in ("dealer", "world") else "agent"
        node.serve(Served(trials, kind), allowed, pass_caller=True)
        with progress.stage("pprl set-up (links)"):    # shown by agent-0's process only
            node.connect()
        out = _drive(config, roles, [node.remote(p) for p in roster if p not in agents]) \
            if name == "agent-0" else {}
        if name != "agent-0":
            node.wait_closed(["agent-0"])
        trials.end_trial()
        return {**out, "reports": trials.reports, "views": trials.views}
    finally:
        node.close()


def _drive(config: RunConfig, roles: list, services: list) -> dict:
    """agent-0: every trial (``services``: the dealer's and the world's roles, which start each
    trial too), and the final tables opened by their owners (EVALUATION ONLY).  With
    checkpoints it drives each trial's (`RoleCheckpoints`, its own store ``driver``): a
    restarted run goes on with each trial from the last step its agents (and world) hold, a
    trial finished before at its end; ``replays`` says, per trial, which steps ran twice."""
    out = {"values": [], "seconds": [], "setup_s": [], "offline_s": [], "replays": []}
    by_time = config.pprl.partition == "time"
    for trial in range(config.pprl.trials):
        start = time.perf_counter()                  # every party makes its keys at once
        gather([role.submit("start_trial", trial) for role in [*services, *roles[1:],
                                                              roles[0]]])
        plan = trial_plan(config, trial)
        saving = plan and RoleCheckpoints(
            plan, stores(roles) if by_time else stores(roles, world=services[1]), gather,
            give_plans=False)
        offline = 0.0
        if by_time:
            out["setup_s"].append(time.perf_counter() - start)
            holder, owner = play_schedule(roles, config.pprl, config.progress, saving)
            out["values"].append(roles[owner].call("reveal", holder))
        else:
            first = set_up(roles, saving)
            out["setup_s"].append(time.perf_counter() - start)
            offline = play_observation(roles, services[1], config.pprl, config.progress,
                                       saving=saving, first=first)
            gather([role.submit("finish") for role in [*roles[1:], roles[0]]])
            out["values"].append(roles[0].call("reveal"))
        out["offline_s"].append(offline)
        out["seconds"].append(time.perf_counter() - start)
        out["replays"].append(saving.replays if saving else [])
    return out


register_parties("pprl", names, party, driver="agent-0")
