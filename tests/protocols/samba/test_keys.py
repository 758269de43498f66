"""Who holds which key after setup, role by role; the evaluation mode replays a fresh run."""

import numpy as np

from ppml.data.bernoulli_items import BernoulliArms
from ppml.experiments.config import RunConfig
from ppml.experiments.samba import samba
from ppml.protocols.samba.config import SambaConfig, SambaOptions
from ppml.protocols.samba.keys import SambaKeys, role_key
from ppml.protocols.samba.policies import AlgorithmSpec
from ppml.protocols.samba.protocol import Controller, run_samba
from ppml.protocols.samba.roles import Comp, DataCustomer, DataOwnerGroup
from ppml.runtime import roles

SEED, ARMS = 8, 3


def keys_in(obj) -> set:
    """Every 32-byte key held directly by ``obj`` (its attributes and slots)."""
    names = list(getattr(obj, "__dict__", {})) + [
        n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ())]
    return {getattr(obj, n) for n in names
            if isinstance(getattr(obj, n, None), bytes) and len(getattr(obj, n)) == 32}


def set_up_roles():
    setup = SambaConfig(10, AlgorithmSpec("ucb"), key_bits=512, insecure_key_bits_ok=True,
                        seed=SEED)
    data = BernoulliArms("toy", np.array([0.2, 0.5, 0.8]), np.arange(1, 4), seed=1)
    customer = roles.spawn(DataCustomer, "local", 512, True, SEED, True)
    groups = [roles.spawn(DataOwnerGroup, "local") for _ in range(2)]
    controller = Controller(setup, ARMS, groups, [range(0, 2), range(2, 3)], customer)
    controller.comp = roles.spawn(Comp, "local", ARMS, setup.spec, controller.run_id, True, SEED)
    controller.set_up(data)
    return controller


def test_each_role_holds_only_its_own_keys():
    controller = set_up_roles()
    key = lambda *label: role_key(SEED, *label)              # noqa: E731
    aes, alpha, explore = key("aes-gcm"), key("masks"), key("explore")
    assert keys_in(controller) == {key("controller"), explore}
    comp = controller.comp.obj
    assert keys_in(comp) == {key("comp"), aes}
    owners = [o for g in controller.groups for o in g.obj.owners]
    assert keys_in(owners[0]) == {key("owner", 0), alpha}          # DO 0 made seed_alpha
    for owner in owners[1:]:
        assert keys_in(owner) == {key("owner", owner.index)}
    for group in controller.groups:
        assert not keys_in(group.obj)
    assert all(aes not in keys_in(o) for o in owners)               # Enc's key: in the endpoint


def test_the_shared_keys_reach_every_data_owner_sealed():
    controller = set_up_roles()
    owners = [o for g in controller.groups for o in g.obj.owners]
    words = [o.mask() for o in owners]                               # the same seed_alpha
    assert len(set(words)) == 1
    sealed = controller.comp.obj.share_enc_key({0: owners[0].agreement.public})
    assert role_key(SEED, "aes-gcm") not in sealed[0]


def test_a_fresh_run_is_replayed_from_the_keys_collected_after_it():
    data = BernoulliArms("toy", np.array([0.2, 0.5, 0.8, 0.4]), np.arange(1, 5), seed=2)
    setup = SambaConfig(40, AlgorithmSpec("thompson"), key_bits=512, insecure_key_bits_ok=True,
                        collect_keys=True)
    run = run_samba(data, setup)
    assert isinstance(run.replay_keys, SambaKeys) and run.replay_keys.seed is None
    out = samba(RunConfig(experiment="samba", dataset="synthetic", arms=4, horizon=40,
                          key_bits=512, insecure_key_bits_ok=True, progress=False,
                          samba=SambaOptions(algorithm="thompson")))
    assert out.summary["arm_agreement"] == 1.0
