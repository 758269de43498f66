"""The protocols' plaintext bounds: exact at any L, and a gamma that rounds to 1 refused."""

import pytest

from ppml.protocols.pprl.bounds import bounds
from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ


def rules(options):
    return FixedPointQ(1, 1, options.alpha, options.gamma, "sarsa", options.scale_bits,
                       options.division_bits)


def test_the_bound_holds_the_q_values_at_l_2_to_the_128():
    options = PPRLOptions()
    q_bits, k_delta_bits = bounds(rules(options), options, 1.0)
    # |Q| <= L / (1 - gamma') + 1 / (alpha' (1 - gamma')), gamma' = 5898 / 6554
    assert 2**(q_bits - 2) < 10.01 * 2**128 < 2**(q_bits - 1)
    assert k_delta_bits == q_bits + 13            # (alpha gamma K + alpha K) |Q| < 2^13.7 |Q|


def test_a_gamma_that_rounds_to_one_is_refused_by_name():
    options = PPRLOptions(gamma=0.99, division_bits=4)
    with pytest.raises(ValueError, match="pprl.gamma=0.99 rounds to 1 at pprl.division_bits=4"):
        bounds(rules(options), options, 1.0)
