"""Dealer material is correct, and the same whoever holds which parties."""

import numpy as np
import pytest

from ppml.mpc import dealer
from ppml.mpc.keys import local_keys
from ppml.mpc.ring import count_wraps, matmul

MATERIALS = [
    dealer.mul_triple((3, 4), (4,)),
    dealer.and_triple((5,), (5,)),
    dealer.matmul_triple((2, 3, 3), (3,)),
    dealer.square_pair((6,)),
    dealer.wrap_pair((7,), signed=False, with_bits=True),
    dealer.wrap_pair((7,), signed=True, with_bits=False),
    dealer.truncation_pair((7,), 20),
    dealer.dabit((9,)),
    dealer.permutation((4,), 5),
    dealer.one_hot_pair((4,), 3),
    dealer.window_pair((4,), 20, 3, 16, ("exp",)),
    dealer.window_pair((3, 2), 30, 4, 20, ("powers", 5)),
    dealer.bernoulli((1000,), 0.2),
    dealer.uniform((1000,), 20),
]


def full_store(parties, seed=1):
    keys, secret = local_keys(parties, seed)
    return dealer.DealerStore(tuple(range(parties)), keys.dealer,
                              dealer.Dealer(keys.dealer, secret)), keys, secret


def value(material, name, pieces):
    field = next(f for f in material.free + material.dependent if f.name == name)
    return field.ring.reconstruct(pieces[name])


@pytest.mark.parametrize("parties", [2, 3, 5])
def test_material_is_correct(parties):
    store, _, _ = full_store(parties)
    for m in MATERIALS:
        for _ in range(2):
            got = store.take(m)
            v = {f.name: value(m, f.name, got) for f in m.free + m.dependent}
            if m.kind == "mul":
                assert np.array_equal(v["c"], v["a"] * v["b"])
            elif m.kind == "and":
                assert np.array_equal(v["c"], v["a"] & v["b"])
            elif m.kind == "matmul":
                assert np.array_equal(v["c"], matmul(v["a"][None], v["b"][None])[0])
            elif m.kind == "square":
                assert np.array_equal(v["c"], v["a"] * v["a"])
            elif m.kind == "wrap":
                signed = m.spec[1]
                assert np.array_equal(v["theta"].view(np.int64), count_wraps(got["r"], signed))
                if "bits" in v:
                    assert np.array_equal(v["bits"], v["r"])
            elif m.kind == "truncpair":
                assert np.array_equal((-v["minus_shifted"].view(np.int64)),
                                      v["r"].view(np.int64) >> 20)
                wrap = (v["r"] >> np.uint64(63)) << np.uint64(44)
                assert np.array_equal(np.uint64(0) - v["minus_wrap"], wrap)
            elif m.kind == "dabit":
                assert set(np.unique(v["b"])) <= {0, 1} and np.array_equal(v["a"], v["b"])
            elif m.kind == "permutation":
                assert np.array_equal(np.sort(v["gamma"], axis=-1), np.tile(np.arange(5), (4, 1)))
            elif m.kind == "onehot":
                low = (v["r"] & np.uint64(7)).astype(np.int64)
                assert np.array_equal(v["onehot"], np.eye(8, dtype=np.uint64)[low])
            elif m.kind == "exp":
                hot = ((v["r"] >> np.uint64(20)) & np.uint64(7)).astype(np.int64)
                rho = (v["r"] & np.uint64(2**20 - 1)).astype(np.float64) / 2**20
                scale = np.rint(np.exp(-rho) * 2**16).astype(np.uint64)
                assert np.array_equal(v["scaled"], np.eye(8, dtype=np.uint64)[hot] * scale[:, None])
            elif m.kind == "bernoulli":
                assert abs(v["y"].mean() - 0.2) < 0.05
            elif m.kind == "uniform":
                assert v["u"].max() < 2**20 and abs(v["u"].mean() / 2**20 - 0.5) < 0.05


def test_a_party_alone_derives_the_same_pieces():
    store, keys, secret = full_store(3)
    alone = dealer.DealerStore((2,), {2: keys.dealer[2]})
    zero = dealer.DealerStore((0,), {0: keys.dealer[0]}, dealer.Dealer(keys.dealer, secret))
    for m in MATERIALS:
        both = store.take(m)
        mine, first = alone.take(m), zero.take(m)
        for name in both:
            assert np.array_equal(both[name][2], mine[name][0])
            assert np.array_equal(both[name][0], first[name][0])


def test_batches_refill_and_are_counted():
    store, _, _ = full_store(2)
    m = dealer.mul_triple((300, 300), (300, 300))
    assert m.batch_count() == 1
    store.take(m)
    store.take(m)
    assert store.generated["mul"] == 2 and store.offline_seconds > 0


def test_bernoulli_probability_bounds():
    with pytest.raises(ValueError, match="probability"):
        dealer.bernoulli((1,), 1.5)




def test_materials_are_rebuilt_from_kind_and_spec():
    for m in MATERIALS:
        assert dealer.material(m.kind, m.spec).key == m.key
    with pytest.raises(ValueError, match="unknown material kind"):
        dealer.material("cake", ())
