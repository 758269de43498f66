"""What the privacy tests of the PPRL protocols compare an agent's view with."""

import pytest

from ppml.protocols.pprl.learners import FixedPointQ


@pytest.fixture
def k_deltas(monkeypatch):
    """The list that every later `FixedPointQ.update` appends its true K dQ (eq. 3) to."""
    true = []
    update = FixedPointQ.update

    def spy(self, s, a, r, s2, a2):
        true.append(self.alpha_k * self.scaled_reward(r) + self.alpha_gamma_k
                    * self.target(s2, a2) - self.alpha_k * self.q[s, a])
        update(self, s, a, r, s2, a2)

    monkeypatch.setattr(FixedPointQ, "update", spy)
    return true
