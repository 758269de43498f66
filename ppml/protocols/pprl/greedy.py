"""Private greedy action selection partitioned by time (Sakuma et al., section 5: "readily
solved by using private comparison"), for greedy and epsilon-greedy selection and for
Q-learning's max (eq. 1).

The holder B has c_a = e_A(Q(s, a)) for the n actions of its state s under the owner A's key,
and an order of the actions (its random permutation, Fig. 4's pi, so that ties are broken
uniformly).  It learns the first maximum under that order, a* (Statement 2 lets every agent
learn the greedy actions); A learns nothing.

1. For every pair of positions i < j, B computes e(d_ij) = c_pi(i) / c_pi(j), |d_ij| < 2^b,
   and masks it (`masking.mask`): A gets e(d_ij + o_ij).
2. A decrypts y_ij = d_ij + o_ij, several to a plaintext: y_ij < 2^(b + 2 + kappa), so B packs
   floor((|n| - 2) / (b + 2 + kappa)) of them into one ciphertext (five at 1024 bits and
   L = 2^128, eleven at 2048) and A makes one decryption for them (`packing`).
3. On the engine, [Q_pi(j) > Q_pi(i)] = [d_ij < 0] = [y_ij < o_ij], A's integer against B's
   (`comparison.less_than`, limb by limb: y and o have b + 2 + kappa bits), XOR-shared.
4. The engine combines the n(n-1)/2 bits into the one-hot of the first maximum (Algorithm 2's
   AND tree, `ppml.mpc.protocols.argmax.first_maximum_bits`) and opens it to B alone.

Cost per selection: n(n-1)/2 encryptions by B, ceil(n(n-1)/2 / slots) decryptions by A (one
each for the random walk's two actions), one comparison batch and one opening on the engine.

What each learns: A sees the y_ij, each within statistical distance 2^-kappa of independent of
the Q-values (`masking`), and masked openings on the engine; B sees ciphertexts under A's key,
masked openings, and a*.
"""

from __future__ import annotations

import os

import numpy as np

from ppml.crypto.paillier import ops
from ppml.crypto.paillier.packing import pack_ciphertexts
from ppml.mpc.protocols.argmax import first_maximum_bits, pairs
from ppml.mpc.ring import BINARY
from ppml.protocols.pprl.comparison import less_than
from ppml.protocols.pprl.division import HOLDER, OWNER
from ppml.protocols.pprl.masking import STATISTICAL_BITS, check_room, mask


class GreedyHolder:
    """B's side: the differences it masks under A's key, its offsets, its reading of a*."""

    def __init__(self, public_key, bound_bits: int, encryptor,
                 statistical_bits: int = STATISTICAL_BITS, random_bytes=os.urandom):
        """``bound_bits`` b: every Q-value's difference lies in (-2^b, 2^b)."""
        check_room(public_key, bound_bits, statistical_bits)
        self.public_key, self.encryptor = public_key, encryptor
        self.bound_bits, self.statistical_bits = bound_bits, statistical_bits
        self._random_bytes = random_bytes
        self.offsets: list = []

    @property
    def compared_bits(self) -> int:
        """The width of the compared integers y and o: b + 2 + kappa."""
        return self.bound_bits + 2 + self.statistical_bits

    @property
    def slots(self) -> int:
        """Masked differences packed into one plaintext: y < 2^(b + 2 + kappa) each."""
        return (self.public_key.bits - 2) // self.compared_bits

    def mask(self, ciphertexts: list) -> list:
        """Step 1: e(d_ij + o_ij) for the pairs i < j of ``ciphertexts`` (already in B's
        order), in `pairs` order, packed `slots` to a ciphertext (`packing.pack_ciphertexts`),
        so that A makes one decryption per `slots` pairs."""
        i, j = pairs(len(ciphertexts))
        negated = ops.negate(self.public_key, ciphertexts)
        differences = ops.add(self.public_key, [ciphertexts[a] for a in i],
                              [negated[b] for b in j])
        masked, self.offsets = mask(self.encryptor, self.public_key, differences,
                                    self.bound_bits, self.statistical_bits,
                                    random_bytes=self._random_bytes)
        return pack_ciphertexts(self.public_key, masked, self.compared_bits, self.slots)


def first_maximum_program(ctx, inputs: dict) -> dict:
    """Steps 3-4, the program of both engine parties (`ppml.runtime.seat`): ``inputs`` =
    {OWNER: (A's y_ij, n, width, to), HOLDER: (B's o_ij, n, width, to)} for the parties held
    here, n the number of compared values and width b + 2 + kappa; returns {party: the
    position of the first maximum at party ``to``, None at the other}."""
    _, count, bits, to = inputs[ctx.held[0]]
    mine = {p: inputs[p][0] for p in ctx.held}
    j_wins = less_than(ctx, mine.get(OWNER), mine.get(HOLDER), bits, OWNER, HOLDER)
    with ctx.comm.operation("argmax"):
        one_hot = first_maximum_bits(ctx, j_wins, count)
        opened = ctx.open([one_hot], BINARY, to=to, tag="reveal")
    return {p: int(np.flatnonzero(opened[0])[0]) if p == to else None for p in ctx.held}


def first_maximum(owner, holder: GreedyHolder, ctx, ciphertexts: list,
                  to: int = HOLDER) -> int:
    """Steps 1-4 with both sides and a context holding both engine parties in this process
    (what the protocols run with each side in its own agent, `roles.EngineSeats.compare` and
    the holders': here for the tests): the position of the first maximum of the Q-values under
    ``ciphertexts`` (B's order), which the engine party ``to`` learns (B by default; by
    observation A, Fig. 4).  ``owner`` is A's `division.DivisionOwner`."""
    if len(ciphertexts) == 1:
        return 0
    owner.open(holder.mask(ciphertexts), holder.compared_bits, holder.slots,
               len(holder.offsets))
    public = (len(ciphertexts), holder.compared_bits, to)
    return first_maximum_program(ctx, {OWNER: (owner.opened(), *public),
                                       HOLDER: (holder.offsets, *public)})[to]
