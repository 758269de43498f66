"""Theorem 2 on the Samba instances: for every algorithm, on MovieLens, Jester and synthetic
arms and several seeds, the secure run pulls the reference's arm at every step and DC decrypts
the reference's cumulative reward."""

import os

import pytest

from ppml.protocols.samba.reference import run_reference
from ppml.protocols.samba.policies import ALGORITHMS, AlgorithmSpec
from ppml.protocols.samba.config import SambaConfig
from ppml.protocols.samba.protocol import run_samba
from ppml.protocols.samba.keys import SambaKeys
from ppml.data.bernoulli_items import load_bernoulli_arms


def arms_of(name):
    if name != "synthetic" and not os.environ.get("PPML_DATA"):
        pytest.skip(f"{name} needs PPML_DATA")
    return load_bernoulli_arms(name, arms=6, seed=1)


@pytest.mark.parametrize("dataset", ["movielens", "jester", "synthetic"])
@pytest.mark.parametrize("name", ALGORITHMS)
def test_secure_equals_reference(dataset, name):
    data = arms_of(dataset)
    spec = AlgorithmSpec(name, epsilon=0.2, softmax_tau=0.05)
    for seed in (11, 12):
        setup = SambaConfig(50, spec, key_bits=512,
                           insecure_key_bits_ok=True, seed=seed, owners_per_actor=4)
        secure, reference = run_samba(data, setup), run_reference(data, 50, spec,
                                                                 SambaKeys.for_seed(seed))
        assert secure.arms == reference.arms
        assert secure.cumulative_reward == reference.cumulative_reward
