"""Packing: slot layout, exact unpacking, and no spill between slots at the bounds."""

import numpy as np
import pytest

from ppml.crypto.paillier import Encoding, EncryptedArray, ObfuscatorPool, SlotLayout, pack


def encrypt_ints(values, pool, value_max):
    return EncryptedArray.encrypt(np.asarray(values, dtype=object), pool, Encoding(), k=0,
                                  bounds=(0, value_max))


def test_slot_layout(small_key):
    layout = SlotLayout.for_key(small_key[0], value_max=2**20 - 1, terms=4)
    assert (layout.key_bits, layout.slot_bits, layout.slots) == (512, 22, 510 // 22)
    assert layout.weight(3) == 1 + 2**22 + 2**44
    with pytest.raises(ValueError, match=r"does not fit below 2\^510 in a 512-bit key"):
        SlotLayout(512, value_max=2**511)
    with pytest.raises(ValueError, match="terms must be an integer >= 1"):
        SlotLayout(512, value_max=3, terms=0)


@pytest.mark.parametrize("slot_bits", [1, 10, 64])
def test_values_at_the_slot_maximum_never_spill(small_key, pool, slot_bits):
    """Full slots (all ones) next to empty ones and to other full ones unpack exactly."""
    _, private_key = small_key
    value_max = 2**slot_bits - 1
    layout = SlotLayout.for_key(small_key[0], value_max)
    assert layout.slot_bits == slot_bits
    count = layout.slots + 3  # a full ciphertext and a partial one
    values = [value_max if i % 3 else 0 for i in range(count)]
    packed = pack(encrypt_ints(values, pool, value_max), layout)
    assert packed.data.size == 2
    assert list(packed.decrypt_integers(private_key)) == values
    full = pack(encrypt_ints([value_max] * count, pool, value_max), layout)
    assert list(full.decrypt_integers(private_key)) == [value_max] * count


def test_sums_of_the_maximum_number_of_packed_values_fill_slots_exactly(small_key, pool):
    _, private_key = small_key
    layout = SlotLayout.for_key(small_key[0], value_max=5, terms=3)  # 3 * 5 = 15 = 0b1111
    assert layout.slot_bits == 4
    count = layout.slots + 1
    packed = [pack(encrypt_ints([5] * count, pool, 5), layout) for _ in range(4)]
    total = packed[0] + packed[1] + packed[2]
    assert total.terms == 3 and list(total.decrypt_integers(private_key)) == [15] * count
    with pytest.raises(ValueError, match="sum of 4 packed values, but the layout reserves "
                                         "headroom for terms=3"):
        total + packed[3]


def test_inputs_wider_than_a_slot_are_refused(small_key, pool):
    layout = SlotLayout.for_key(small_key[0], value_max=255)
    with pytest.raises(ValueError, match=r"width 256\) at scale exponent 0, more than a slot "
                                         r"input may: value_max=255"):
        pack(encrypt_ints([1, 2], pool, 256), layout)
    with pytest.raises(ValueError, match="layout made for a 1024-bit key"):
        pack(encrypt_ints([1, 2], pool, 255), SlotLayout(1024, 255))


def test_signed_reals_pack_through_their_lower_bound(small_key, pool, encoding):
    _, private_key = small_key
    x = np.array([[-1.0, 0.75, -0.125], [1.0, 0.0, -0.999]])
    encrypted = EncryptedArray.encrypt(x, pool, encoding, bounds=(-1.0, 1.0))
    layout = SlotLayout.for_key(small_key[0], value_max=encrypted.hi - encrypted.lo, terms=2)
    packed = pack(encrypted, layout)
    assert packed.shape == (2, 3) and packed.data.size == 1
    assert np.array_equal(packed.decrypt_integers(private_key),
                          encrypted.decrypt_integers(private_key))
    plain = encrypted.decrypt(private_key)
    assert np.array_equal((packed + packed).decrypt(private_key), 2 * plain)
    assert np.array_equal(packed.rerandomize(pool).decrypt(private_key), plain)


def test_linucb_scores_pack_at_a_2048_bit_key(key_2048, encoding):
    """B_i at scale exponent 3 (theta, A^-1, arm) in 2048-bit slots, as Comp would decrypt them."""
    public_key, private_key = key_2048
    theta = EncryptedArray.encrypt([0.5, -0.25], ObfuscatorPool(public_key, 2), encoding,
                                   bounds=(-1.0, 1.0))
    arms = np.array([[1.0, 0.5], [-0.5, 1.0], [0.25, 0.25], [0.0, -1.0], [1.0, 1.0]])
    theta_hat = (np.eye(2) * 3.0) @ theta
    scores = theta_hat.rmatmul(arms)
    layout = SlotLayout.for_key(public_key, value_max=scores.hi - scores.lo)
    packed = pack(scores, layout)
    assert packed.data.size == 1 and layout.slots >= 10
    assert np.array_equal(packed.decrypt(private_key), arms @ (3.0 * np.array([0.5, -0.25])))
