"""PPRL's shares backend federated: each agent a party of its own and an engine rank, the
engine's dealer a party of its own and, by observation, the world (docs/pprl.md,
docs/federated.md).

Roster (`pprl_parties.names`): ``dealer``, (``world``,) then ``agent-0`` ... ``agent-<m-1>``.
The agents link with each other (the engine's rounds), with the dealer, which hands each its
own dealer key over its link and answers agent-0's requests for corrections
(`federated.serve_dealer`), and with the world, which steps the joint task once every agent has
sent its own part (`shared_world.SharedWorlds`) and answers each with its own state and reward;
an agent may send its own part only.  Each agent runs the same SPMD program as in one process
(`shares_time.time_trials`, `shares_observation.observation_program`): by time it plays its own
turn and follows the others' with no inputs of its own; by observation it chooses from its own
generator and perceives through the world.  Its perceptions and its generator never leave it.

Outputs, each party's own: each agent what its program returns for it (per trial or group: the
final tables, opened to every agent, its costs and, EVALUATION ONLY, the entropy of its
choices and its view); the world, EVALUATION ONLY, each trial's rows and joint actions; the
dealer its secret (EVALUATION ONLY).

With ``checkpoint_every`` the run has one checkpoint plan (`pprl.trial_plan` of trial 0: the
learning steps are counted across all its trials, by observation across its groups of
``trials_together``), and each party takes the plan from its own config: each agent checkpoints its own state, the world its
own (`shared_world.SharedWorlds`); the dealer saves nothing (its secret is made again, from
the seed in seeded mode, fresh otherwise: the agents' stores go on where they stood, and the
shares do not depend on it).
"""

from __future__ import annotations

from ppml.experiments.config import RunConfig
from ppml.experiments.pprl import trial_plan
from ppml.mpc.context import EngineConfig
from ppml.protocols.pprl.shared_world import SharedWorlds
from ppml.protocols.pprl.shares_observation import observation_program
from ppml.protocols.pprl.shares_time import check_options, time_trials
from ppml.runtime.federated import Node, serve_dealer

DEALER, WORLD = "dealer", "world"
WORLD_CALLS = {"start", "reset", "step", "end_episode", "checkpoints", "resume"}


class WorldService:
    """The world as the agents call it: each call's parts must be the caller's own only."""

    def __init__(self, world: SharedWorlds, agents: list):
        self.world, self.agents = world, agents

    def __getattr__(self, method: str):
        if method not in WORLD_CALLS:
            raise AttributeError(method)

        def call(caller: str, parts: list):
            index = self.agents.index(caller)
            if not isinstance(parts, list) or \
                    [i for i, part in enumerate(parts) if part is not None] != [index]:
                raise PermissionError(f"{caller} may send its own part of {method} only")
            return getattr(self.world, method)(parts)
        return call


def party(config: RunConfig, name: str, identity, peers, roster: list) -> dict:
    """What party ``name`` of ``roster`` (`pprl_parties.names`, which holds it) does in a
    federated run of the shares backend."""
    options = config.pprl
    by_time = options.partition == "time"
    if by_time:
        check_options(options)
    agents = [n for n in roster if n.startswith("agent-")]
    ranks = {agent: rank for rank, agent in enumerate(agents)}
    services = [DEALER] if by_time else [DEALER, WORLD]
    talks = {agent: [a for a in agents if a != agent] + services for agent in agents}
    talks.update({service: agents for service in services})
    node = Node(identity, peers, talks[name], ranks if name in ranks else {},
                config.party_timeout_s)
    plan = trial_plan(config, 0)               # every trial on one set of parties: one group
    try:
        if name == DEALER:
            return {"audit_dealer_secret": serve_dealer(node, ranks, config.seed)}
        if name == WORLD:
            world = SharedWorlds(options, config.parties, config.data_seed,
                                 config.party_timeout_s, plan)
            node.serve(WorldService(world, agents), {a: WORLD_CALLS for a in agents},
                       pass_caller=True, workers=len(agents) + 1)
            node.connect()
            node.wait_closed(agents)
            return {"report": world.report()}
        # the table holds integers only: the engine's default scale, as in the other runtimes
        engine = EngineConfig(config.parties, seed=config.seed, record_views=config.record_views)
        ctx = node.join(engine, DEALER, "pprl")
        trials, seeded = list(range(options.trials)), config.seed is not None
        if by_time:
            return {"trials": time_trials(ctx, options, config.parties, config.data_seed,
                                          trials, seeded, config.record_views, plan)}
        groups = [trials[k:k + options.trials_together]
                  for k in range(0, len(trials), options.trials_together)]
        return {"groups": observation_program(
            ctx, options, config.parties, config.data_seed, groups, seeded,
            node.remote(WORLD), config.record_views,
            config.progress and ranks[name] == 0, plan)}
    finally:
        node.close()
