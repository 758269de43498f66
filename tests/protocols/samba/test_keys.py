"""Who holds which key after setup, role by role; the evaluation mode replays a fresh run."""

import numpy as np
import pytest

from ppml.data.bernoulli_items import BernoulliArms
from ppml.experiments.config import RunConfig
from ppml.experiments.samba import samba
from ppml.protocols.samba.config import MASKS, SambaConfig, SambaOptions
from ppml.protocols.samba.keys import SambaKeys, role_key
from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.protocols.samba.protocol import Controller, run_samba
from ppml.protocols.samba.roles import Comp, DataCustomer, DataOwnerGroup
from ppml.runtime import roles
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S

SEED, ARMS = 8, 3


def keys_in(obj) -> set:
    """Every 32-byte key held directly by ``obj`` (its attributes and slots)."""
    names = list(getattr(obj, "__dict__", {})) + [
        n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ())]
    return {getattr(obj, n) for n in names
            if isinstance(getattr(obj, n, None), bytes) and len(getattr(obj, n)) == 32}


def set_up_roles(mask: str = "mpc"):
    """The roles after setup, all in this process; their seats are those of the Ray runtime
    (each its own party on links: the local runtime's seats share one in-process table,
    which simulates both parties)."""
    setup = SambaConfig(10, AlgorithmSpec("ucb"), key_bits=512, insecure_key_bits_ok=True,
                        seed=SEED, mask=mask, runtime="ray")
    data = BernoulliArms("toy", np.array([0.2, 0.5, 0.8]), np.arange(1, 4), seed=1)
    customer = roles.spawn(DataCustomer, "local", 512, True, SEED, True,
                           timeout_s=DEFAULT_TIMEOUT_S)
    groups = [roles.spawn(DataOwnerGroup, "local", timeout_s=DEFAULT_TIMEOUT_S)
              for _ in range(2)]
    controller = Controller(setup, ARMS, groups, [range(0, 2), range(2, 3)], customer)
    controller.comp = roles.spawn(Comp, "local", ARMS, setup.spec, controller.run_id, True, SEED,
                                  False, mask, "ray", background=True,
                                  timeout_s=DEFAULT_TIMEOUT_S)
    controller.set_up(data)
    return controller


def engine_keys(seat) -> tuple:
    """(pair keys, dealer keys) of a seat of the selection on shares."""
    return seat.ctx.keys.pairs, seat.ctx.keys.dealer


@pytest.mark.parametrize("mask", MASKS)
def test_each_role_holds_only_its_own_keys(mask):
    controller = set_up_roles(mask)
    key = lambda *label: role_key(SEED, *label)              # noqa: E731
    aes, alpha, explore = key("aes-gcm"), key("masks"), key("explore")
    comp = controller.comp.obj
    customer = controller.customer.obj
    owners = [o for g in controller.groups for o in g.obj.owners]
    try:
        assert keys_in(controller) == {key("controller"), explore}
        assert keys_in(comp) == {key("comp"), aes}
        for group in controller.groups:         # Enc's key, seed_alpha, seed_eps: in its channel
            assert not keys_in(group.obj)       # and readers, which every DO opened alike
        assert all(aes not in keys_in(o) for o in owners)
        if mask == "paper":
            assert keys_in(owners[0]) == {key("owner", 0), alpha}   # DO 0 made seed_alpha
            assert controller.seat is None and comp.seat is None and customer._dealer is None
        else:                                       # no seed_alpha; the engine's keys, each its own
            assert keys_in(owners[0]) == {key("owner", 0)}
            assert controller._share_keys == [key("shares", i) for i in range(ARMS)]
            pair = {(0, 1): key("engine-pair")}
            assert engine_keys(controller.seat) == (pair, {0: key("dealer", 0)})
            assert engine_keys(comp.seat) == (pair, {1: key("dealer", 1)})
            assert customer._dealer.party_keys == {0: key("dealer", 0), 1: key("dealer", 1)}
            assert not keys_in(customer) and not hasattr(comp, "_share_keys")
        for owner in owners[1:]:
            assert keys_in(owner) == {key("owner", owner.index)}
    finally:
        if controller.seat is not None:
            controller.seat.close()
        roles.teardown([controller.comp, controller.customer, *controller.groups])


def test_the_shared_keys_reach_every_data_owner_sealed():
    controller = set_up_roles("paper")
    owners = [o for g in controller.groups for o in g.obj.owners]
    words = [g.obj.mask.word() for g in controller.groups]          # the same seed_alpha
    assert len(set(words)) == 1 and len(words) == 2
    sealed = controller.comp.obj.share_enc_key({0: owners[0].agreement.public})
    assert role_key(SEED, "aes-gcm") not in sealed[0]
    roles.teardown([controller.comp])


def test_each_data_owner_shares_its_stream_with_the_controller_alone():
    controller = set_up_roles("mpc")
    try:
        owners = [o for g in controller.groups for o in g.obj.owners]
        assert [o.share.word() for o in owners] == [s.word() for s in controller.shares]
        assert len({o.share.word() for o in owners}) == ARMS           # one stream per DO
    finally:
        controller.seat.close()
        roles.teardown([controller.comp])


@pytest.mark.parametrize("algorithm", ["thompson", "softmax"])
def test_a_fresh_run_is_replayed_from_the_keys_collected_after_it(algorithm):
    data = BernoulliArms("toy", np.array([0.2, 0.5, 0.8, 0.4]), np.arange(1, 5), seed=2)
    setup = SambaConfig(40, AlgorithmSpec(algorithm), key_bits=512, insecure_key_bits_ok=True,
                        collect_keys=True)
    run = run_samba(data, setup)
    assert isinstance(run.replay_keys, SambaKeys) and run.replay_keys.seed is None
    out = samba(RunConfig(experiment="samba", dataset="synthetic", arms=4, horizon=40,
                          key_bits=512, insecure_key_bits_ok=True, progress=False,
                          samba=SambaOptions(algorithm=algorithm)))
    assert out.summary["arm_agreement"] == 1.0
