"""Samba federated: the Controller, Comp, DC and each group of data owners a party of its own
(Ciucanu et al., Fig. 6), meeting over TLS links (docs/federated.md).

Roster order: ``comp``, ``dc``, ``do-0`` ... ``do-<G-1>`` (the DO groups of `owner_groups`, at
most `GROUPS` by default), then ``controller``, which connects to every other party and drives
the run as in the other runtimes (`ppml.protocols.samba.protocol.Controller`, its roles reached
as `RemoteRole`s).  Each served role answers the Controller only, and only the methods it
calls.  Each DO group loads its own arms' rewards and nothing else; the Controller holds no
data.  Under mask=mpc the Controller's and Comp's seats link up over their own TLS links, each
pinning the certificate the other sent over its federation link, and DC deals their material.

With ``checkpoint_every`` the Controller drives the checkpoints: Comp and each DO group save
their own state in their own party's storage, by the plan of their own config (they take no
folder from another party: `checkpoints.DRIVEN`); DC keeps none (it makes its keys again at
step 0).

Outputs: the Controller's report (arms by step, EVALUATION ONLY: they come from the DOs'
reports; the seconds and counts; DC's decrypted total) and, unseeded, each role's own keys
collected after the run (`collected_keys`, EVALUATION ONLY: the reference replays the draws).
"""

from __future__ import annotations

import dataclasses
import time

from ppml.data.bernoulli_items import load_bernoulli_arms
from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig
from ppml.experiments.federation import register_parties
from ppml.protocols.samba.config import SambaConfig
from ppml.protocols.samba.keys import SambaKeys
from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.protocols.samba.protocol import Controller, key_generation, owner_groups, play
from ppml.protocols.samba.roles import Comp, DataCustomer, DataOwnerGroup
from ppml.runtime import codec
from ppml.runtime.checkpoints import DRIVEN
from ppml.runtime.federated import Node

GROUPS = 4
"""DO groups (one process each) unless ``samba.owners_per_actor`` says otherwise."""
SERVED = {
    "comp": {"start", "public", "share_enc_key", "engine_address", "join_engine", "select",
             "report", "replay_key", *DRIVEN},
    "dc": {"public", "deal", "corrections", "report", "cumulative_reward"},
    "do": {"join", "share_alpha", "setup", "exchange", "reward_shares", "report",
           "replay_keys", *DRIVEN},
}
"""What the Controller may call on each kind of party (nobody else calls anything)."""

codec.register(AlgorithmSpec)
codec.register(SambaKeys)


def layout(config: RunConfig) -> list:
    return owner_groups(config.arms, config.samba.owners_per_actor, GROUPS)


def names(config: RunConfig) -> list:
    return ["comp", "dc", *[f"do-{g}" for g in range(len(layout(config)))], "controller"]


def setup_of(config: RunConfig) -> SambaConfig:
    options = config.samba
    return SambaConfig(config.horizon, options.spec(), runtime="federated", mask=options.mask,
                       owners_per_actor=options.owners_per_actor, key_bits=config.key_bits,
                       insecure_key_bits_ok=config.insecure_key_bits_ok, seed=config.seed,
                       collect_keys=config.seed is None, timeout_s=config.party_timeout_s,
                       checkpoints=checkpointing.plan(config, []))


def load(config: RunConfig):
    options = config.samba
    return load_bernoulli_arms(config.dataset, arms=config.arms, threshold=options.threshold,
                               denominator=options.denominator, min_ratings=options.min_ratings,
                               seed=config.data_seed, data_dir=config.data_dir)


class CompParty:
    """Comp, made once the Controller says the run's id (`start`); its other methods are
    Comp's own."""

    def __init__(self, config: RunConfig):
        self.config, self.comp = config, None

    def start(self, run_id: bytes) -> None:
        if self.comp is not None:
            raise RuntimeError("Comp has already started")
        setup = setup_of(self.config)
        self.comp = Comp(self.config.arms, setup.spec, run_id, setup.crypto, setup.seed,
                         False, setup.mask, "federated", setup.timeout_s)
        plan = checkpointing.plan(self.config, names(self.config))
        if plan:
            self.comp.use_checkpoints(plan, "comp")

    def __getattr__(self, method: str):
        if method.startswith("_") or self.__dict__.get("comp") is None:
            raise AttributeError(method)
        return getattr(self.comp, method)


class OwnerGroupParty(DataOwnerGroup):
    """A group of DOs holding its own arms' rewards: the Controller sends none."""

    def __init__(self, config: RunConfig, group: int, rewards: list):
        super().__init__()
        self._rewards = rewards
        plan, owners = checkpointing.plan(config, names(config)), layout(config)[group]
        if plan:                            # its store named as the Controller names it
            self.use_checkpoints(plan, f"do-{owners.start}-{owners.stop - 1}")

    def join(self, rewards, seed, record_views: bool = False, mask: str = "mpc") -> dict:
        if rewards is not None:
            raise PermissionError("a federated DO group holds its own rewards; the Controller "
                                  "sends none")
        return super().join(self._rewards, seed, record_views, mask)


def party(config: RunConfig, name: str, identity, peers) -> dict:
    """What party ``name`` does in a federated Samba run."""
    everyone = names(config)
    if name not in everyone:
        raise ValueError(f"party={name} is not a party of samba (parties: {everyone})")
    node = Node(identity, peers, everyone[:-1] if name == "controller" else ["controller"], {},
                config.party_timeout_s)
    try:
        if name == "controller":
            return _controller(config, node, everyone[2:-1])
        if name == "comp":
            role = CompParty(config)
        elif name == "dc":
            setup = setup_of(config)
            role = DataCustomer(setup.key_bits, setup.insecure_key_bits_ok, setup.seed,
                                setup.crypto, False)
        else:
            data, group = load(config), int(name[3:])
            role = OwnerGroupParty(config, group, [data.arm(i) for i in layout(config)[group]])
        node.serve(role, {"controller": SERVED["do" if name.startswith("do-") else name]})
        try:
            node.connect()
            node.wait_closed(["controller"])
        finally:
            if name == "comp" and role.comp is not None:
                role.comp.close()
        return {}
    finally:
        node.close()


def _controller(config: RunConfig, node: Node, groups: list) -> dict:
    setup = setup_of(config)
    with key_generation(setup):          # DC serves, so the links are up, once its pair exists
        node.connect()
    comp, customer = node.remote("comp"), node.remote("dc")
    controller = Controller(setup, config.arms, [node.remote(g) for g in groups],
                            layout(config), customer)
    try:
        comp.call("start", controller.run_id)
        controller.comp = comp
        run = play(None, setup, time.perf_counter(), controller)
    finally:
        if controller.seat is not None:
            controller.seat.close()
    return {"run": {f.name: getattr(run, f.name) for f in dataclasses.fields(run)
                    if f.name not in ("views",)}}


register_parties("samba", names, party, driver="controller")
