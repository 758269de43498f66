"""Private greedy selection partitioned by time: the first maximum of encrypted Q-values under
the holder's order, exactly, ties included; the owner's openings say nothing of the values."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.crypto.paillier import generate_keypair
from ppml.protocols.pprl.division import DivisionOwner, Encryptor
from ppml.protocols.pprl.greedy import GreedyHolder, first_maximum

BOUND = 150
"""Q-values of 149 bits: L = 2^128 and more; y and o have 192 bits, four limbs."""


@pytest.fixture(scope="module")
def agents():
    public_key, private_key = generate_keypair(512, insecure_key_bits_ok=True, seed=8)
    encryptor = Encryptor()
    return (public_key, encryptor, DivisionOwner(private_key, 16, encryptor),
            GreedyHolder(public_key, BOUND, encryptor))


@pytest.mark.parametrize("actions", [1, 2, 3, 4, 6])
def test_the_first_maximum_of_encrypted_values(agents, actions):
    public_key, encryptor, owner, holder = agents
    ctx = mpc.local_context(2, seed=2)
    rng = np.random.default_rng(actions)
    for case in range(12):
        values = [int.from_bytes(rng.bytes(19), "big") % 2**149 - 2**148
                  for _ in range(actions)]
        if case % 3 == 0:
            values[-1] = values[0]                               # a tie: the first one wins
        if case % 4 == 1:
            values[-1] = values[0] + 1                           # one apart
        if case == 2:
            values = [-(2**148) + 1] * actions
        position = first_maximum(owner, holder, ctx, encryptor.encrypt(public_key, values))
        assert position == int(np.argmax(values)), values


def test_the_owners_openings_do_not_follow_the_differences(agents):
    """Owner A opens y = d + 2^b + r for each pair, with the bound as tight as the values
    allow: the ranks of y do not follow d's."""
    public_key, encryptor, owner, _ = agents
    holder = GreedyHolder(public_key, 42, encryptor)
    ctx = mpc.local_context(2, seed=3)
    rng = np.random.default_rng(9)
    seen, true = [], []
    for _ in range(1500):
        values = [int(v) for v in rng.integers(-2**40, 2**40, 2)]
        first_maximum(owner, holder, ctx, encryptor.encrypt(public_key, values))
        seen.append(float(owner.opened()[0]))
        true.append(values[0] - values[1])
    ranks = lambda a: np.argsort(np.argsort(np.array(a)))          # noqa: E731
    assert abs(np.corrcoef(ranks(seen), ranks(true))[0, 1]) < 0.12    # 4.6 sigma


def test_the_difference_bound_must_leave_room_in_the_key(agents):
    public_key, encryptor, _, _ = agents
    with pytest.raises(ValueError, match="must be at most the key's 512 bits - 2 = 510"):
        GreedyHolder(public_key, 480, encryptor)


def test_the_masked_pairs_are_packed_into_as_few_decryptions_as_fit(agents):
    """Six pairs of 192-bit masked differences, two to a 512-bit plaintext: three decryptions."""
    public_key, encryptor, owner, holder = agents
    assert (holder.compared_bits, holder.slots) == (BOUND + 42, 2)
    before = owner.decryptions
    values = [5, -7, 5, 3]
    position = first_maximum(owner, holder, mpc.local_context(2, seed=4),
                             encryptor.encrypt(public_key, values))
    assert position == 0 and owner.decryptions - before == 3
    assert [y - o for y, o in zip(owner.opened(), holder.offsets)] == [12, 0, 2, -12, -10, 2]
