"""Bulk work on Ray: decryptor actors and tasks pinned to this node give the in-process results."""

import os
import pickle

import numpy as np
import pytest
import ray
from gmpy2 import mpz

from ppml.crypto.paillier import Decryptor, EncryptedArray, ObfuscatorPool
from ppml.crypto.paillier.bulk import PartialDecryptor
from ppml.crypto.paillier.threshold import combine, deal
from ppml.parallel import Resident, pinned_here, run_batches, split


def test_split_gives_contiguous_near_equal_chunks():
    assert split(range(7), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert split(range(2), 5) == [[0], [1]] and split([], 2) == [[]]


def test_the_in_process_decryptor_needs_no_ray(small_key, pool, encoding):
    X = EncryptedArray.encrypt([1.0, -2.0], pool, encoding)
    with Decryptor(small_key[1]) as decryptor:
        assert np.array_equal(X.decrypt(decryptor), [1.0, -2.0])
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(decryptor)


@pytest.mark.ray
def test_bulk_decryption_on_pinned_actors_equals_in_process(ray_cluster, small_key, pool, encoding):
    public_key, private_key = small_key
    assert pinned_here().node_id == ray.get_runtime_context().get_node_id()
    X = EncryptedArray.encrypt(np.linspace(-5, 5, 11), pool, encoding)
    decryptor = Decryptor(private_key, workers=2)
    try:
        assert np.array_equal(X.decrypt_integers(decryptor), X.decrypt_integers(private_key))
        assert np.array_equal(X[:1].decrypt(decryptor), [-5.0])  # fewer values than actors
        with pytest.raises(ValueError, match="not coprime with n"):
            decryptor.decrypt_raw([public_key.n])
    finally:
        decryptor.close()
    with pytest.raises(RuntimeError, match="closed"):
        decryptor.decrypt_raw(list(X.ciphertexts))


@pytest.mark.ray
def test_chunked_products_as_ray_tasks_equal_in_process(ray_cluster, small_key, pool, encoding):
    _, private_key = small_key
    rng = np.random.default_rng(2)  # test data, not cryptographic values
    arms, theta = rng.uniform(-1, 1, (7, 3)), rng.uniform(-1, 1, 3)
    T = EncryptedArray.encrypt(theta, pool, encoding)
    M = EncryptedArray.encrypt(arms, pool, encoding)
    for one, two in ((T.rmatmul(arms), T.rmatmul(arms, workers=2)),
                     (M.matmul(theta), M.matmul(theta, workers=2))):
        assert np.array_equal(one.decrypt_integers(private_key), two.decrypt_integers(private_key))


@pytest.mark.ray
@pytest.mark.parametrize("obfuscator", ["full", "djn"])
def test_a_pool_fills_in_ray_tasks(ray_cluster, small_key, encoding, obfuscator):
    public_key, private_key = small_key
    pool = ObfuscatorPool(public_key, 6, workers=2, obfuscator=obfuscator)
    values = pool.take(6)
    assert len(set(values)) == 6 and private_key.decrypt_raw(values) == [0] * 6


def _tag(value):
    return value, os.getpid()


class _Where:
    """Reports the process that ran a batch."""

    def tag(self, value):
        return _tag(value)


@pytest.mark.ray
def test_a_resident_maps_its_first_share_here_and_the_rest_in_one_call_per_actor(ray_cluster):
    resident = Resident(_Where(), workers=2)
    try:
        out = resident.map("tag", [(v,) for v in range(5)])
        assert [value for value, _ in out] == list(range(5))
        assert [pid == os.getpid() for _, pid in out] == [True] * 3 + [False] * 2
        assert len({pid for _, pid in out[3:]}) == 1
        assert [pid == os.getpid() for _, pid in run_batches(_tag, [(0,), (1,)], 2)] == [
            True, False]
    finally:
        resident.close()
    with pytest.raises(RuntimeError, match="closed"):
        resident.map("tag", [(0,)])


def test_bulk_decryption_shares_on_pinned_actors_equal_in_process(ray_cluster, small_key):
    public_key, private_key = small_key
    shares = deal(private_key, 2, seed=3)
    ciphertexts = public_key.encrypt_raw([mpz(v) for v in range(7)],
                                         ObfuscatorPool(public_key, 7).take(7))
    bulk = PartialDecryptor(shares[0], workers=2)
    try:
        mine = bulk.partial_decrypt(ciphertexts)
    finally:
        bulk.close()
    assert mine == shares[0].partial_decrypt(ciphertexts)
    assert combine(public_key, [mine, shares[1].partial_decrypt(ciphertexts)]) == list(range(7))
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(PartialDecryptor(shares[1]))
