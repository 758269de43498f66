"""The pprl group refuses what cannot run, naming the key and its bound."""

import pytest

from ppml.protocols.pprl.config import PPRLOptions


@pytest.mark.parametrize("keys, message", [
    ({"partition": "space"}, "pprl.partition must be one of time, observation"),
    ({"learner": "td0"}, "pprl.learner must be one of sarsa, qlearning"),
    ({"selection": "softmax"}, "pprl.selection must be one of random, greedy, epsilon_greedy"),
    ({"methods": ["crl", "sfe"]}, "pprl.methods must be one of crl, crl_fixed, idrl, rdrl, pprl"),
    ({"methods": ["rdrl"]}, "rdrl shares the global reward"),
    ({"partition": "observation"}, "pprl.partition=observation needs a task"),
    ({"task": "load_balancing"}, "set pprl.partition=observation"),
    ({"alpha": 0.0}, r"pprl.alpha must be in \(0, 1\]"),
    ({"gamma": 1.0}, r"pprl.gamma must be in \[0, 1\)"),
    ({"epsilon": 1.5}, r"pprl.epsilon must be in \[0, 1\]"),
    ({"trials": 0}, "pprl.trials must be >= 1"),
    ({"scale_bits": 600}, "pprl.scale_bits must be <= 512"),
])
def test_bad_values_are_refused_by_name(keys, message):
    with pytest.raises(ValueError, match=message):
        PPRLOptions(**keys)
