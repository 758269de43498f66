"""The counter-based reward uniforms of the fixed-arm instances are ContextualData's."""

import pytest

from ppml.data.bandit_data import reward_uniform
from ppml.data.rewards import check_step_arm, instance_key
from ppml.data.synthetic import load_synthetic


def test_same_generator_as_contextual_data():
    data = load_synthetic(arms=4, dims=2, horizon=10, data_seed=3)
    key = int(data._key)
    assert [reward_uniform(key, 7, arm) for arm in range(4)] == list(data.uniforms(7))


def test_keys_separate_kinds_names_and_seeds():
    keys = {instance_key(kind, name, seed) for kind in ("linear", "bernoulli")
            for name in ("movielens", "synthetic") for seed in (0, 1)}
    assert len(keys) == 8


def test_step_and_arm_checks():
    assert check_step_arm(2**32 - 1, 3, 4) == (2**32 - 1, 3)
    for step, arm in ((2**32, 0), (-1, 0), (0, 4), (0, True), (1.0, 0)):
        with pytest.raises(IndexError, match=r"(step|arm) must be an integer"):
            check_step_arm(step, arm, 4)
