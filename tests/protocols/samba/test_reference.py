"""The plaintext reference (Fig. 3 with Fig. 4) on a small stand-in of BernoulliArms."""

from types import SimpleNamespace

import numpy as np
import pytest

from ppml.protocols.samba.reference import run_reference
from ppml.protocols.samba.policies import ALGORITHMS, AlgorithmSpec
from ppml.protocols.samba.keys import SambaKeys


def toy_arms(means, horizon, seed=0):
    """A minimal BernoulliArms stand-in: means and reward(t, arm)."""
    draws = np.random.default_rng(seed).random((horizon, len(means)))
    return SimpleNamespace(means=np.asarray(means),
                           reward=lambda t, arm: int(draws[t, arm] < means[arm]))


@pytest.mark.parametrize("name", ALGORITHMS)
def test_reference_pulls_every_arm_first_and_learns(name):
    data = toy_arms([0.1, 0.2, 0.9, 0.3], 600)
    trace = run_reference(data, 600, AlgorithmSpec(name, softmax_tau=0.05), SambaKeys.for_seed(1))
    assert trace.arms[:4] == [0, 1, 2, 3] and len(trace.arms) == 600
    assert trace.cumulative_reward == sum(data.reward(t, a) for t, a in enumerate(trace.arms))
    assert np.bincount(trace.arms).argmax() == 2


def test_same_keys_same_trace_and_other_keys_differ():
    data = toy_arms([0.4, 0.5, 0.6], 300)
    spec = AlgorithmSpec("thompson")
    a = run_reference(data, 300, spec, SambaKeys.for_seed(2))
    assert a.arms == run_reference(data, 300, spec, SambaKeys.for_seed(2)).arms
    assert a.arms != run_reference(data, 300, spec, SambaKeys.for_seed(3)).arms


def test_horizon_below_arms_is_refused():
    with pytest.raises(ValueError, match="horizon must be >= arms"):
        run_reference(toy_arms([0.5] * 5, 5), 3, AlgorithmSpec("ucb"), SambaKeys.for_seed(0))
