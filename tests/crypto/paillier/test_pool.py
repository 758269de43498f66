"""The obfuscator pool: every r^n is fresh, handed out once; a dry pool refills or raises; a
pool cannot be copied."""

import copy
import pickle

import pytest

from ppml.crypto.paillier import ObfuscatorPool, PoolExhaustedError, fresh_obfuscators


def test_obfuscators_are_nth_residues_that_decrypt_to_zero(small_key):
    public_key, private_key = small_key
    values = fresh_obfuscators(public_key, 8)
    assert len(set(values)) == 8
    assert private_key.decrypt_raw(values) == [0] * 8  # r^n = Enc(0) with randomness r


def test_values_leave_the_pool_once_and_never_repeat(small_key):
    pool = ObfuscatorPool(small_key[0], 10, on_empty="raise")
    first, second = pool.take(4), pool.take(6)
    assert len(pool) == 0 and pool.take(0) == []
    assert len(set(first) | set(second)) == 10


def test_a_dry_pool_raises_with_on_empty_raise(small_key):
    pool = ObfuscatorPool(small_key[0], 3, on_empty="raise")
    pool.take(2)
    with pytest.raises(PoolExhaustedError,
                       match=r"1 precomputed r\^n left but 2 are needed \(size=3\)"):
        pool.take(2)
    assert len(pool) == 1  # a refused request takes nothing
    pool.fill(5)
    assert len(pool.take(6)) == 6


def test_a_dry_pool_refills_with_fresh_values_by_default(small_key):
    pool = ObfuscatorPool(small_key[0], 4)
    seen = pool.take(3)
    seen += pool.take(5)  # 1 left: refills the shortfall plus a fresh size
    assert pool.refills == 1 and len(pool) == 4
    seen += pool.take(4)
    assert len(seen) == len(set(seen)) == 12


def test_made_hears_every_value_asked_for_once(small_key):
    made = []
    pool = ObfuscatorPool(small_key[0], 40, made=made.append)
    assert sum(made) == 40 and len(made) == 3          # in chunks of STREAM_CHUNK
    pool.take(45)                                      # a refill: the shortfall and a fresh 40
    assert sum(made) == 85


def test_a_pool_cannot_be_pickled_or_copied(small_key):
    pool = ObfuscatorPool(small_key[0], 2)
    for duplicate in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match="same r\\^n twice"):
            duplicate(pool)


def test_pool_parameters_are_checked(small_key):
    with pytest.raises(ValueError, match="on_empty must be one of"):
        ObfuscatorPool(small_key[0], 1, on_empty="reuse")
    with pytest.raises(ValueError, match="size must be an integer >= 0"):
        ObfuscatorPool(small_key[0], -1)
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        ObfuscatorPool(small_key[0], 1, workers=0)


@pytest.mark.parametrize("obfuscator", ["full", "djn", "multibase"])
def test_a_streamed_pool_hands_out_fresh_values_as_they_arrive(ray_cluster, small_key,
                                                               obfuscator):
    public_key, private_key = small_key
    made = []
    pool = ObfuscatorPool(public_key, 40, on_empty="raise", workers=2, obfuscator=obfuscator,
                          stream=True, made=made.append)
    assert len(pool) == 40                       # promised, made by the task or on demand
    seen = []
    for _ in range(20):
        seen += pool.take(2)
        assert len(seen) <= sum(made) <= 40      # a bar's count: ahead of the takes, never over
    assert len(seen) == len(set(seen)) == 40 == sum(made)
    assert private_key.decrypt_raw(seen) == [0] * 40
    with pytest.raises(PoolExhaustedError, match="needed"):
        pool.take(len(pool) + 1)              # values that arrived unasked are fresh too
    pool.close()
    assert len(pool._streams) == 0 and len(pool) == 0
