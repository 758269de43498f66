"""LinUCB-DS and SpectralUCB-DS federated: DO, DC, P and Comp each a party of its own
(Ciucanu et al., Fig. 3), meeting over TLS links (docs/federated.md).

Roster order and links: ``comp``, ``dc`` and ``do`` serve their roles; ``p`` connects to all
three and drives Fig. 3's messages as calls: DO answers ``outsource`` to P only (step 1), DC
``budget``, ``key`` and ``receive_sum`` (steps 1 and 7), Comp ``key``, ``argmax`` and ``switch``
(steps 3.ii-4.i, 5-6).  Each party makes its own keys: Comp's and DC's Paillier key pairs in
their processes (their private keys never leave), P its coins.  P checks the size of every
public key it receives against ``key_bits``.

Checkpoints: each party builds the plan from its own config (`checkpointing.plan`) and keeps
its own store; P drives them and may call comp, dc and do's `CHECKPOINT_METHODS` but for
``use_checkpoints`` (a party takes no folder from another).

Outputs, each party's own: P the arms it pulled, the slot layout, its stats and the steps
replayed after a resume; DC the sum it decrypted; each party its stats.  P also reports its coin
key (``audit_coin_key``, EVALUATION ONLY: the harness replays P's coins in the references; the
seeded mode derives it anyway).
"""

from __future__ import annotations

import time

from ppml.crypto.paillier.keys import check_key_bits
from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig
from ppml.experiments.federation import register_parties
from ppml.experiments.linucb_ds import coins_key, instance, make_policy, norm_bound
from ppml.protocols.linucb_ds.protocol import PARTIES, Comp, Principal, public_keys
from ppml.protocols.linucb_ds.roles import DataClient, DataOwner
from ppml.runtime.checkpoints import DRIVEN
from ppml.runtime.federated import Node

SERVED = {"comp": {"key", "argmax", "switch", *DRIVEN},
          "dc": {"budget", "key", "receive_sum", *DRIVEN}, "do": {"outsource", *DRIVEN}}
"""What P may call on each party (nobody else calls anything)."""


def names(config: RunConfig) -> list:
    return list(PARTIES)


def party(config: RunConfig, name: str, identity, peers) -> dict:
    """What party ``name`` does in a federated LinUCB-DS or SpectralUCB-DS run."""
    if name not in names(config):
        raise ValueError(f"party={name} is not a party of {config.experiment} (parties: "
                         f"{names(config)})")
    talks = names(config)[:3] if name == "p" else ["p"]
    node = Node(identity, peers, talks, {}, config.party_timeout_s)
    spectral = config.experiment == "spectral_ucb_ds"
    try:
        if name == "p":
            return _principal(config, node, spectral)
        if name == "comp":
            role = Comp(config.key_bits, config.insecure_key_bits_ok, config.seed,
                        config.workers)
        elif name == "dc":
            role = DataClient(config.horizon, config.key_bits, config.insecure_key_bits_ok,
                              config.seed)
        else:
            data = instance(config, spectral)
            role = DataOwner()
            role.load(data["theta"], data["arms"], data["noise"], norm_bound(data["theta"]))
        plan = checkpointing.plan(config, names(config))
        if plan:
            role.use_checkpoints(plan, name)
        node.serve(role, {"p": SERVED[name]})
        try:
            node.connect()
            node.wait_closed(["p"])
        finally:
            if name == "comp":
                role.close()
        out = {"stats": role.stats()}
        if name == "dc":
            out["sum_int"] = role.result()
        return out
    finally:
        node.close()


def _principal(config: RunConfig, node: Node, spectral: bool) -> dict:
    data = instance(config, spectral)
    options = config.linucb_ds
    p = Principal(make_policy(data, config.horizon), options.scale_bits, config.workers,
                  options.obfuscator, options.split_min_work)
    keys_start = time.perf_counter()

    def reach() -> tuple:                 # Comp and DC serve once their key pairs exist
        node.connect()
        return tuple(node.remote(n) for n in ("comp", "dc", "do"))

    comp, dc, do, comp_key, dc_key = public_keys(reach)
    check_key_bits(comp_key.bits, config.insecure_key_bits_ok)
    check_key_bits(dc_key.bits, config.insecure_key_bits_ok)
    p.connect(do, dc, comp, comp_key, dc_key, coins_key(config),
              checkpointing.plan(config, names(config)), give_plans=False)
    try:
        start = time.perf_counter()
        layout = p.setup()
        online = time.perf_counter()
        arms = p.run()
        p.key_switch()
        end = time.perf_counter()
    finally:
        p.close()
    return {"arms": arms, "layout": layout, "stats": p.stats(), "wall_s": end - start,
            "online_s": end - online, "offline_s": online - start,
            "keygen_s": start - keys_start, "replays": p.replays(),
            "audit_coin_key": p.audit_coin_key()}


for _experiment in ("linucb_ds", "spectral_ucb_ds"):
    register_parties(_experiment, names, party, driver="p")
