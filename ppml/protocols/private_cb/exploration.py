"""The exploration randomness of Hannun et al.'s Algorithm 1, as dealer material.

The secure learner draws its private Bernoulli(eps) bit y_t (line 8), its Uniform(0, 1) scores
v_a (line 12) and the tie-breaking permutation of argmax from the dealer.  The plaintext
reference must see the very same draws to be comparable step by step; :class:`ExplorationTape`
replays them by asking the dealer for the *values* of the same material in the same order,
batch by batch, as the parties' store consumes it.  Those materials have no free fields: their
values depend on the dealer's secret key alone, which the harness chose and passed to
``spmd.run(dealer_secret=...)``; nobody else can build the tape.
"""

from __future__ import annotations

import numpy as np

from ppml.runtime import spmd
from ppml.mpc import dealer
from ppml.mpc.dealer import Dealer, Material


def bernoulli(epsilon: float) -> Material:
    return dealer.bernoulli((), float(epsilon))


def uniforms(arms: int, precision_bits: int) -> Material:
    return dealer.uniform((arms,), precision_bits)


def tie_break(arms: int) -> Material:
    return dealer.permutation((), arms)


class ExplorationTape:
    """Reconstructed values of dealer material, taken in the order the online store takes them."""

    def __init__(self, dealer_secret: bytes):
        self.source = Dealer({}, dealer_secret)
        self._buffers = {}

    def take(self, material: Material) -> dict:
        buf = self._buffers.get(material.key)
        if buf is None or buf[1] == buf[2]:
            batch = 0 if buf is None else buf[0] + 1
            count = material.batch_count()
            buf = [batch, 0, count, self.source.values(material, batch, count)]
            self._buffers[material.key] = buf
        index = buf[1]
        buf[1] += 1
        return {name: value[index] for name, value in buf[3].items()}

    def draws(self, epsilon: float, arms: int, precision_bits: int) -> tuple:
        """(y_t, v_t as reals, gamma_t) for one step, as Algorithm 1 lines 8, 12 and argmax use."""
        y = int(self.take(bernoulli(epsilon))["y"])
        v = self.take(uniforms(arms, precision_bits))["u"].astype(np.float64) / 2.0**precision_bits
        gamma = self.take(tie_break(arms))["gamma"].astype(np.int64)
        return y, v, gamma
