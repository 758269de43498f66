"""PPRL's shares backend federated: each agent a party of its own and an engine rank, the
engine's dealer a party of its own (docs/pprl.md, docs/federated.md).

Roster (`pprl_parties.names`): ``dealer``, then ``agent-0`` ... ``agent-<m-1>``.  The agents
link with each other (the engine's rounds) and with the dealer, which hands each its own dealer
key over its link and answers agent-0's requests for corrections (`federated.serve_dealer`).
Each agent runs the same SPMD program (`shares_time.time_trials`): it plays its own turn of
every trial and follows the others' turns with no inputs of its own; its perceptions and its
generator never leave it.

Outputs, each party's own: each agent, per trial, what `shares_time.play_trial` returns for it
(the final table, opened to every agent, its own actions and, EVALUATION ONLY, the entropy of
its choices and its view); the dealer its secret (EVALUATION ONLY).
"""

from __future__ import annotations

from ppml.experiments.config import RunConfig
from ppml.mpc.context import EngineConfig
from ppml.protocols.pprl.shares_time import check_options, time_trials
from ppml.runtime.federated import Node, serve_dealer

DEALER = "dealer"


def party(config: RunConfig, name: str, identity, peers, roster: list) -> dict:
    """What party ``name`` of ``roster`` (`pprl_parties.names`, which holds it) does in a
    federated run of the shares backend."""
    options = config.pprl
    if options.partition != "time":
        raise ValueError("runtime=federated runs pprl.backend=shares partitioned by time "
                         "(pprl.partition=time); by observation it runs runtime=local")
    check_options(options)
    agents = [n for n in roster if n.startswith("agent-")]
    ranks = {agent: rank for rank, agent in enumerate(agents)}
    talks = {agent: [a for a in agents if a != agent] + [DEALER] for agent in agents}
    talks[DEALER] = agents                     # the roster by time: the caller checked name
    node = Node(identity, peers, talks[name], ranks if name in ranks else {},
                config.party_timeout_s)
    try:
        if name == DEALER:
            return {"audit_dealer_secret": serve_dealer(node, ranks, config.seed)}
        node.connect()
        engine = EngineConfig(config.parties, config.precision_bits, config.mpc.truncation,
                              config.seed, record_views=config.record_views)
        ctx = node.context(engine, DEALER)
        return {"trials": time_trials(ctx, options, config.parties, config.data_seed,
                                      list(range(options.trials)), config.seed is not None,
                                      config.record_views)}
    finally:
        node.close()
