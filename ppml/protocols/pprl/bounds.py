"""The bounds on the protocols' plaintexts (Sakuma et al., section 4: sum gamma^t L r_max < N),
which size every statistical mask and comparison of both partitionings."""

from __future__ import annotations

import math
from fractions import Fraction

from ppml.protocols.pprl.config import PPRLOptions
from ppml.protocols.pprl.learners import FixedPointQ


def bounds(rules: FixedPointQ, options: PPRLOptions, reward_bound: float) -> tuple:
    """(bits of 2|Q| scaled by L, bits of |K dQ|), exactly (rational arithmetic).  With the
    rounded alpha' = alpha K / K and gamma' = alpha gamma K / alpha K that ``rules`` use, and
    each update's floor losing less than 1, |Q| <= (L r_max + 1 / alpha') / (1 - gamma');
    then K dQ = alpha K L r + alpha gamma K Q' - alpha K Q."""
    if rules.alpha_gamma_k >= rules.alpha_k:
        raise ValueError(f"pprl.gamma={options.gamma} rounds to 1 at pprl.division_bits="
                         f"{options.division_bits} (alpha gamma K = alpha K = {rules.alpha_k}): "
                         "raise pprl.division_bits")
    alpha = Fraction(rules.alpha_k, 2**options.division_bits)
    gamma = Fraction(rules.alpha_gamma_k, rules.alpha_k)
    reward = Fraction(reward_bound) * 2**options.scale_bits
    q_max = math.ceil((reward + 1 / alpha) / (1 - gamma)) + 1
    k_delta = (rules.alpha_k * math.ceil(reward)
               + (rules.alpha_gamma_k + rules.alpha_k) * q_max)
    return q_max.bit_length() + 1, k_delta.bit_length() + 1
