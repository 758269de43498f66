"""The private contextual bandit federated: each role of Algorithm 1 a party of its own.

Parties, in roster order, and whom each talks to over its TLS links:

* ``party-0`` ... ``party-<P-1>``: the feature parties (engine ranks 0..P-1); each loads its
  own block of the contexts and holds its shares;
* ``puller`` (p', rank P) and ``rewarder`` (p'', rank P + 1): clients of the engine;
* all of the above talk to each other (the engine's rounds);
* ``dealer``: makes every dealer key and hands each compute party its own over its link; party
  0 asks it for corrections;
* ``world``: the environment; p' calls its ``pull``, p'' its ``reward``, nobody else anything.

The outputs of each party are its own: p' the arms it pulled, p'' the rewards it received, each
feature party its communication stats and (for the membership audit) its own checkpoints, the
dealer its secret (EVALUATION ONLY: the harness replays the dealer's draws in the plaintext
reference; the seeded mode derives it anyway).
"""

from __future__ import annotations

import functools

from ppml.data import load_contextual
from ppml.experiments.config import RunConfig
from ppml.experiments.federation import register_parties
from ppml.experiments import checkpointing
from ppml.experiments.private_cb import bandit_config, checkpoint_steps, engine_names
from ppml.mpc.context import EngineConfig
from ppml.mpc.keys import dealer_secret_key
from ppml.protocols.private_cb.protocol import program
from ppml.protocols.private_cb.world import World
from ppml.runtime.federated import Node, serve_dealer

WORLD, DEALER = "world", "dealer"


def names(config: RunConfig) -> list:
    """The run's parties in roster order."""
    return engine_names(config.parties) + [DEALER, WORLD]


def _layout(config: RunConfig) -> tuple:
    """(engine rank of each engine party, whom each party talks to)."""
    engine = names(config)[:config.parties + 2]
    ranks = {name: rank for rank, name in enumerate(engine)}
    compute = engine[:config.parties]
    talks = {name: [n for n in engine if n != name] for name in engine}
    for name in compute:
        talks[name].append(DEALER)
    for name in ("puller", "rewarder"):
        talks[name].append(WORLD)
    talks[DEALER], talks[WORLD] = compute, ["puller", "rewarder"]
    return ranks, talks


def party(config: RunConfig, name: str, identity, peers) -> dict:
    """What party ``name`` does in a federated run; returns its own outputs."""
    bandit = bandit_config(config)
    ranks, talks = _layout(config)
    if name not in talks:
        raise ValueError(f"party={name} is not a party of private_cb (parties: "
                         f"{names(config)})")
    node = Node(identity, peers, talks[name], ranks if name in ranks else {},
                config.party_timeout_s)
    try:
        if name == DEALER:
            compute = {n: r for n, r in ranks.items() if r < config.parties}
            secret = checkpointing.kept_key(config, DEALER,
                                            lambda: dealer_secret_key(config.seed))
            return {"audit_dealer_secret": serve_dealer(node, compute, config.seed, secret)}
        data = load_contextual(config.dataset, arms=config.arms, dims=config.dims,
                               horizon=config.horizon, data_seed=config.data_seed,
                               data_dir=config.data_dir)
        if name == WORLD:
            node.serve(World(data, config.party_timeout_s),
                       {"puller": {"pull"}, "rewarder": {"reward"}})
            node.connect()
            node.wait_closed(["puller", "rewarder"])
            return {}
        rank = ranks[name]
        engine = EngineConfig(config.parties, config.precision_bits, config.mpc.truncation,
                              config.seed, clients=2, workers=config.workers,
                              split_min_elements=config.mpc.split_min_elements)
        ctx = node.join(engine, DEALER, "private_cb")
        if rank < config.parties:
            inputs = {f"features_{rank}": data.contexts[:bandit.horizon,
                                                        bandit.feature_blocks[rank]]}
        else:
            inputs = {"world": node.remote(WORLD)}
        body = functools.partial(program, config=bandit, progress=config.progress,
                                 checkpoint_steps=checkpoint_steps(bandit.horizon,
                                                                   bandit.checkpoints),
                                 checkpoints=checkpointing.plan(config, engine_names(
                                     config.parties)))
        return body(ctx, **inputs)
    finally:
        node.close()


register_parties("private_cb", names, party, driver="party-0")
