"""Masked LARK federated: each helper, the ad network, the browsers and the engine's dealer a
party of its own, meeting over TLS links (docs/masked-lark.md, docs/federated.md).

Roster order: ``dealer``, ``adnet``, ``browsers``, then ``helper-0`` ... ``helper-<h-1>``.  The
helpers run the same SPMD program as in one process (`aggregation.aggregation_program`,
`training.training_program`) over their links, with the dealer's corrections for the range
check; helper-0, the leader, is the only helper that calls the ad network and the browsers,
as a DAP leader relays the reports (sealed to each helper, so the leader opens its own only).
The browsers fetch the ad network's opaque keys themselves (``catalog``), as they get them with
its ads, and make their reports in their own domain (Ray tasks on their own Ray instance with
``workers`` > 1).

What each party serves, and to whom (`SERVED`): the ad network ``catalog`` to the browsers and
its release key and ``release`` (``setup`` and ``step`` when training) to helper-0; the
browsers their ``reports`` (``label_shares``) to helper-0; the dealer each helper its own
dealer key and helper-0 its corrections.  Nothing else may be called.

Outputs, each party's own: each helper what its program returns for it (counts, the kept keys'
users, at helper-0 the released rows, its seconds and, EVALUATION ONLY, its noise and, with
``record_views``, its view); the browsers, EVALUATION ONLY, their records and the seconds
spent making reports; the ad network, when training, its models and released gradients.
"""

from __future__ import annotations

import threading
import time

from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig
from ppml.experiments.federation import register_parties
from ppml.experiments.masked_lark import refuse_checkpoints
from ppml.mpc.context import EngineConfig
from ppml.protocols.masked_lark.aggregation import aggregation_program
from ppml.protocols.masked_lark.noise import noise_scale
from ppml.protocols.masked_lark.reports import Reports
from ppml.protocols.masked_lark.roles import AdNetwork, Browsers, LabelHolders, ModelOwner
from ppml.protocols.masked_lark.training import ADNET, helper_names, training_program
from ppml.runtime import codec
from ppml.runtime.checkpoints import DRIVEN
from ppml.runtime.cluster import ensure_ray
from ppml.runtime.federated import Node, serve_dealer

DEALER, BROWSERS, LEADER = "dealer", "browsers", "helper-0"
"""What helper-0 may ask of the ad network's checkpoints: which steps it holds, save, restore;
where they are kept the ad network's own process decides (its plan, `use_checkpoints`)."""
SERVED = {
    "aggregate": {ADNET: {BROWSERS: {"catalog"}, LEADER: {"public_key", "release"}},
                  BROWSERS: {LEADER: {"reports"}}},
    "train": {ADNET: {LEADER: {"setup", "public_key", "step"} | DRIVEN},
              BROWSERS: {LEADER: {"label_shares"}}},
}
"""Per task, what the ad network and the browsers serve to whom: when training, the ad
network's checkpoints' steps too (`DRIVEN`)."""

codec.register(Reports)


def names(config: RunConfig) -> list:
    return [DEALER, ADNET, BROWSERS] + helper_names(config.parties)


def party(config: RunConfig, name: str, identity, peers) -> dict:
    """What party ``name`` does in a federated Masked LARK run."""
    roster = names(config)
    if name not in roster:
        raise ValueError(f"party={name} is not a party of {config.experiment} (parties: "
                         f"{roster})")
    refuse_checkpoints(config)
    task = config.masked_lark.task
    helpers = roster[3:]
    ranks = {helper: j for j, helper in enumerate(helpers)}
    talks = {DEALER: helpers, ADNET: [LEADER] + ([BROWSERS] if task == "aggregate" else []),
             BROWSERS: [LEADER] + ([ADNET] if task == "aggregate" else []),
             **{h: [DEALER] + [o for o in helpers if o != h]
                + ([ADNET, BROWSERS] if h == LEADER else []) for h in helpers}}
    node = Node(identity, peers, talks[name], ranks if name in ranks else {},
                config.party_timeout_s)
    try:
        if name == DEALER:
            serve_dealer(node, ranks, config.seed)
            return {}
        if name == ADNET:
            return _ad_network(config, node, talks[name])
        if name == BROWSERS:
            return _browsers(config, node)
        return _helper(config, node, name)
    finally:
        node.close()


def _ad_network(config: RunConfig, node: Node, callers: list) -> dict:
    options = config.masked_lark
    if options.task == "aggregate":
        role = AdNetwork(options.queries, options.advertisers, config.seed)
    else:
        role = ModelOwner(options, config.dataset, config.data_dir, config.data_seed,
                          config.precision_bits)
        plan = checkpointing.plan(config, helper_names(config.parties))
        if plan:
            role.use_checkpoints(plan, ADNET)           # its own store, from its own plan
    node.serve(role, SERVED[options.task][ADNET])
    node.connect()
    node.wait_closed(callers)
    if options.task == "aggregate":
        return {}
    thetas, released = role.history()
    return {"thetas": thetas, "released": released}


class _Started:
    """The browsers as helper-0 calls them: reports only once they hold the ad network's
    opaque keys (``started``), which they fetch after linking up; each wait bounded."""

    def __init__(self, browsers: Browsers, timeout_s: float):
        self.browsers, self.timeout_s = browsers, timeout_s
        self.started = threading.Event()

    def reports(self, public_keys: list) -> Reports:
        if not self.started.wait(self.timeout_s):
            raise TimeoutError(f"the browsers got no opaque keys from the ad network within "
                               f"{self.timeout_s} s")
        return self.browsers.reports(public_keys)


def _browsers(config: RunConfig, node: Node) -> dict:
    options = config.masked_lark
    if config.workers > 1:
        ensure_ray()                    # the browsers' own Ray instance, for their tasks
    if options.task == "train":
        role = LabelHolders(config.dataset, config.data_dir, config.data_seed, config.seed,
                            config.workers)
        node.serve(role, SERVED["train"][BROWSERS])
        node.connect()
        node.wait_closed([LEADER])
        return {}
    browsers = Browsers(options, config.data_seed, config.seed, config.workers)
    served = _Started(browsers, config.party_timeout_s)
    node.serve(served, SERVED["aggregate"][BROWSERS])
    node.connect()
    start = time.perf_counter()
    browsers.start(node.remote(ADNET).call("catalog"))
    served.started.set()
    setup_s = time.perf_counter() - start
    node.wait_closed([LEADER])
    return {"audit_truth": browsers.truth(), "seconds": browsers.seconds(), "setup_s": setup_s}


def _helper(config: RunConfig, node: Node, name: str) -> dict:
    options = config.masked_lark
    if config.workers > 1:
        ensure_ray()                    # the helper's own Ray instance, for its workers
    engine = EngineConfig(config.parties, seed=config.seed, record_views=config.record_views)
    ctx = node.join(engine, DEALER, "masked_lark")
    leader = name == LEADER
    roles = {"browsers": node.remote(BROWSERS) if leader else None,
             "adnet": node.remote(ADNET) if leader else None}
    start = time.perf_counter()
    if options.task == "aggregate":
        out = aggregation_program(ctx, options, noise_scale(options), config.seed,
                                  workers=config.workers, **roles)
    else:
        out = training_program(ctx, options, config.precision_bits, config.seed,
                               workers=config.workers, **roles,
                               checkpoints=checkpointing.plan(config,
                                                              helper_names(config.parties)))
    return {"out": out, "protocol_s": time.perf_counter() - start}


register_parties("masked_lark", names, party, driver="helper-0")   # the leader
