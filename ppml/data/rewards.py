"""Counter-based reward draws for the fixed-arm instances (LinUCB-DS, SpectralUCB-DS, Samba).

The uniforms are `bandit_data.reward_uniform`, the generator of `ContextualData.reward`: arm a at
step t is SplitMix64 of a 64-bit key and the counter ``t * 2^32 + a``, its top 53 bits scaled to
[0, 1).  The key is `reward_key` of the instance's name and seed.  Any (t, a) costs O(1), asking
again gives the same value, and the arms are independent draws: a secure run and its plaintext
reference that pull the same arm at the same step receive the same reward (Ciucanu et al.,
LinUCB-DS section 3 "Correctness"; Samba section 5, Theorem 2), and in Samba every data owner's
rewards come from its own counter (its arm index), independent of the other owners'.
"""

from __future__ import annotations

import numpy as np

from ppml.data.bandit_data import reward_key

MAX_STEP = 2**32 - 1
"""Steps are packed above the arm index in a 64-bit counter."""


def instance_key(kind: str, name: str, seed: int) -> int:
    """The reward key of an instance: `reward_key` of ``kind/name`` and the seed (``kind`` keeps
    e.g. the linear and the Bernoulli MovieLens instances apart)."""
    return int(reward_key(f"{kind}/{name}", seed))


def check_step_arm(step, arm, arms: int) -> tuple[int, int]:
    """(step, arm) as ints; IndexError unless step is in [0, 2^32) and arm in [0, arms)."""
    for label, value, high in (("step", step, MAX_STEP + 1), ("arm", arm, arms)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 0 <= value < high:
            raise IndexError(f"{label} must be an integer in [0, {high}), got {value!r}")
    return int(step), int(arm)
