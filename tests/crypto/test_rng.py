import logging

import numpy as np
import pytest

from ppml.crypto.rng import Stream, derive_key, fresh_key, seeded_key, warn_insecure


def test_same_key_same_draws_and_children_differ():
    key = seeded_key(3)
    a, b = Stream(key), Stream(key)
    assert np.array_equal(a.uint64(100), b.uint64(100))
    assert not np.array_equal(Stream(key).child("x").uint64(10), Stream(key).child("y").uint64(10))
    assert derive_key(key, "a", 1) != derive_key(key, "a", 2)


def test_fresh_keys_differ():
    assert fresh_key() != fresh_key()


def test_draws_are_uniform():
    s = Stream(seeded_key(1))
    bits = s.bits(100_000)
    assert set(np.unique(bits)) == {0, 1} and abs(bits.mean() - 0.5) < 0.01
    u = s.uniform(100_000)
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    below = s.below(5, 100_000)
    assert below.max() == 31 and abs(below.mean() - 15.5) < 0.2


def test_permutations_are_uniform():
    s = Stream(seeded_key(2))
    perms = s.permutation(3, (60_000,))
    assert all(sorted(p) == [0, 1, 2] for p in perms[:100])
    _, counts = np.unique(perms @ np.array([9, 3, 1]), return_counts=True)
    assert len(counts) == 6
    chi2 = ((counts - 10_000) ** 2 / 10_000).sum()
    assert chi2 < 25  # 5 degrees of freedom, p ~ 1e-4


def test_seed_must_be_a_non_negative_integer():
    with pytest.raises(ValueError, match="seed"):
        seeded_key(-1)


def test_seeded_mode_says_it_is_insecure(caplog):
    with caplog.at_level(logging.WARNING):
        warn_insecure(5)
    assert "INSECURE" in caplog.text


def test_uniform_integers_are_uniform_below_any_bound():
    from ppml.crypto.rng import Stream, UniformIntegers
    source = UniformIntegers(Stream(bytes(32)))
    draws = [source.below(3) for _ in range(3000)]
    assert set(draws) == {0, 1, 2} and all(abs(draws.count(v) - 1000) < 120 for v in range(3))
    big = 3 * 2**200 + 1
    assert all(0 <= source.below(big) < big for _ in range(300))       # past a refill
    assert source.below(1) == 0
    with pytest.raises(ValueError, match="below needs n >= 1"):
        source.below(0)


def test_a_stream_resumes_at_its_position():
    """A checkpoint keeps a stream as (key, position): Stream(key, position) goes on with the
    very bytes the uninterrupted stream would give, at any offset within a block."""
    key = seeded_key(5, "resume")
    whole = Stream(key).bytes(100)
    for cut in (0, 1, 15, 16, 17, 63, 99):
        first = Stream(key)
        first.bytes(cut)
        assert first.position == cut
        assert Stream(key, first.position).bytes(100 - cut) == whole[cut:]
    with pytest.raises(ValueError, match="position"):
        Stream(key, -1)
