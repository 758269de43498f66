"""The holder's side of an encrypted turn partitioned by time (Sakuma et al., section 4.1, Fig.
2; section 5), in the holder's own agent (`roles.TimeAgent`).

The holder keeps c(s, a) = e_o(Q(s, a)) under the owner o's key and updates it by eq. 3,

    e(K dQ) = e(alpha K L r) c(s', a')^(alpha gamma K) c(s, a)^(-alpha K),

divides it by K with the owner (`division`), and adds the quotient (eq. 4).  The reward term
e(alpha K L r), the same plaintext as e(L r)^(alpha K), rides in the division's mask
encryption (the holder knows r), so a step costs the holder two encryptions and the owner two
encryptions and one decryption, whatever the reward (a skipped encryption would time the
reward).  Greedy choices (greedy and epsilon-greedy selection) and Q-learning's max,
max_a Q(s', a) = Q(s', a*), are the holder's private greedy selection with the owner (`greedy`):
the holder learns a* (Statement 2), the owner nothing, not even how many a step needed (each
step runs the same number, `EncryptedTurn`).

Each exchange with the owner is one call to the owner's role (``divide``, ``compare``), during
which both run their side of the same engine program in their own seats
(`division.borrow_program`, `greedy.first_maximum_program`), the owner as rank
`division.OWNER`, the holder as `division.HOLDER`.
"""

from __future__ import annotations

import time

import numpy as np
from gmpy2 import mpz

from ppml.crypto.paillier import ops
from ppml.protocols.pprl.division import DivisionHolder, HOLDER, borrow_program
from ppml.protocols.pprl.greedy import GreedyHolder, first_maximum_program
from ppml.protocols.pprl.learners import FixedPointQ, PrivateRows

OPENED, HANDED_OVER, ENGINE, COMPARED = 0, 1, 2, 3
"""The ``l`` of an agent's view rows: a division's masked value, a key switch's masked table
entry, a value the engine opened to it, a greedy selection's masked difference."""


class Holding:
    """The holder's state in one turn: the table under the owner's key ``public_key``, and the
    holder's sides of the division and of greedy selection (their masks come from the holder's
    OS CSPRNG).  ``q_bound_bits``: |Q| < 2^(q_bound_bits - 1), so differences of Q-values lie
    within 2^q_bound_bits."""

    def __init__(self, encryptor, public_key, table: list, bound_bits: int, q_bound_bits: int,
                 division_bits: int):
        self.encryptor, self.public_key, self.table = encryptor, public_key, table
        self.q_bound_bits = q_bound_bits
        self.division = DivisionHolder(public_key, bound_bits, division_bits, encryptor)
        self.greedy = GreedyHolder(public_key, q_bound_bits, encryptor)


class EncryptedTurn:
    """The holder's view of one turn, as `reference.TurnPlayer` reads it (``q`` and
    ``update``): `update` is eqs. 3-4 with a private division, greedy selection and
    Q-learning's max a private comparison (`greedy`), each an exchange with ``owner`` (its role)
    beside ``seat`` (the holder's engine seat).

    The owner sees every comparison and every division, so the number of comparisons between
    two divisions must not depend on the holder's perceptions: an exploring step of
    epsilon-greedy makes none, a step that ends an episode makes one more (the new episode's
    first action).  Each step therefore runs exactly ``per_step`` of them
    (`roles.comparisons_per_step`), filling up with blind ones: the same masked pairs of
    differences over ciphertexts of 0 (the owner's y = 0 + o is distributed as any other,
    within 2^-kappa), whose result the holder drops."""

    def __init__(self, holding: Holding, actions: int, rules: FixedPointQ, owner, seat,
                 reward_bound: float, per_step: int, view, first_step: int = 0):
        self.holding, self.actions, self.rules = holding, actions, rules
        self.owner, self.seat, self.view = owner, seat, view
        self.reward_bound, self.per_step = reward_bound, per_step
        self.q = PrivateRows(self)
        self.divisions = self.comparisons = 0
        self.step = first_step
        """The run's steps before this one (the views' ``t``)."""
        self.seconds = {"division": 0.0, "comparison": 0.0}
        """Online time in the private divisions and comparisons (their encryptions,
        decryptions and engine rounds, on both sides, included)."""
        self._since = 0
        """Comparisons since the last division."""

    def counts(self) -> dict:
        """Its counts and seconds (the agent's report), and where it stands: the run's step and
        the comparisons since the last division (what a checkpoint of the turn keeps)."""
        return {"divisions": self.divisions, "comparisons": self.comparisons,
                "seconds": dict(self.seconds), "step": self.step, "since": self._since}

    def restore_counts(self, counts: dict) -> None:
        """Go on from `counts` of a checkpoint."""
        self.divisions, self.comparisons = counts["divisions"], counts["comparisons"]
        self.seconds, self.step, self._since = dict(counts["seconds"]), counts["step"], \
            counts["since"]

    def _compare(self, ciphertexts: list) -> int:
        began = time.perf_counter()
        greedy = self.holding.greedy
        masked = greedy.mask(ciphertexts)
        public = (len(ciphertexts), greedy.compared_bits)
        answer = self.owner.submit("compare", self.step + 1, masked, greedy.slots,
                                   len(greedy.offsets), *public)
        position = self.seat.run(first_maximum_program, greedy.offsets, *public, HOLDER)
        answer.result()
        self.seconds["comparison"] += time.perf_counter() - began
        self.comparisons += 1
        self._since += 1
        return position

    def first_maximum(self, state: int, order) -> int:
        """The position in ``order`` of the first maximum of Q(state, .), which the holder
        learns (Statement 2)."""
        if self.actions == 1:
            return 0
        table = self.holding.table
        return self._compare([table[state * self.actions + int(a)] for a in order])

    def _target(self, s2: int, a2: int) -> int:
        """The table index of Q(s', a') (SARSA) or of max_a Q(s', a) (Q-learning)."""
        if self.rules.learner == "sarsa":
            return s2 * self.actions + a2
        return s2 * self.actions + self.first_maximum(s2, np.arange(self.actions))

    def update(self, s: int, a: int, r: float, s2: int, a2: int) -> None:
        if not abs(r) <= self.reward_bound:
            raise ValueError(f"a reward of {r!r} is outside pprl.reward_bound="
                             f"{self.reward_bound}")
        holding, f = self.holding, self.rules
        table, public_key = holding.table, holding.public_key
        here, there = s * self.actions + a, self._target(s2, a2)
        if self._since > self.per_step:
            raise RuntimeError(f"a step ran {self._since} comparisons, more than the "
                               f"{self.per_step} that every step shows the owner")
        while self._since < self.per_step:
            self._compare([mpz(1)] * self.actions)                     # blind: e(0), r = 1
        self._since = 0
        k_delta = ops.dot(public_key, [table[there], table[here]],
                          [f.alpha_gamma_k, -f.alpha_k])                    # eq. 3, and below
        step = self.step = self.step + 1
        began = time.perf_counter()
        division = holding.division
        masked = division.mask([k_delta], [f.alpha_k * f.scaled_reward(r)])  # its reward term
        answer = self.owner.submit("divide", step, masked)
        borrows = self.seat.run(borrow_program, division.low_bits(), division.division_bits)
        (delta,) = division.finish(*answer.result(), borrows)
        self.seconds["division"] += time.perf_counter() - began
        (table[here],) = ops.add(public_key, [table[here]], [delta])      # eq. 4
        if self.view.enabled:
            self.view.record(step, ENGINE, self.seat.received())
        self.divisions += 1
