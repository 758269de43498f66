"""A browser's report: additive shares that add up to the value and look uniform, sealed to
each helper under the report's public parts; batches joined in order."""

import numpy as np

from ppml.crypto import hpke
from ppml.crypto.rng import Stream, fresh_key
from ppml.protocols.masked_lark.reports import (ID_BYTES, Reports, info, key_index,
                                                make_reports, split)


def test_shares_add_up_to_the_value_modulo_2_64_and_look_uniform():
    values = np.array([[0, 1], [5, -3], [2**40, 7]], dtype=np.int64)
    shares = split(values, 3, Stream(fresh_key()))
    assert shares.shape == (3, 3, 2) and shares.dtype == np.uint64
    assert np.array_equal(shares.sum(axis=0, dtype=np.uint64).view(np.int64), values)
    many = split(np.zeros((4000, 1), np.int64), 2, Stream(fresh_key()))[0, :, 0]
    assert abs(np.mean(many >> np.uint64(63)) - 0.5) < 0.05       # the top bit: a fair coin


def test_a_share_opens_only_under_its_own_report_and_helper():
    keys = [hpke.HpkeKey(), hpke.HpkeKey()]
    made = make_reports(np.array([[3], [4]], np.int64), np.zeros((2, 8), np.uint8),
                        [[k.public] for k in keys], seed=None, batch=0)
    assert made.public.shape == (2, ID_BYTES + 8)
    assert len(set(map(bytes, made.public[:, :ID_BYTES]))) == 2           # random ids
    share = keys[1].open(made.sealed[1][0].tobytes(), info(1, made.public[0].tobytes()))
    assert len(share) == 8
    for wrong in (info(1, made.public[1].tobytes()), info(0, made.public[0].tobytes())):
        try:
            keys[1].open(made.sealed[1][0].tobytes(), wrong)
        except Exception as exc:                                     # noqa: BLE001
            assert "failed to open" in str(exc)
        else:
            raise AssertionError("a share opened under another context")


def test_the_seeded_mode_repeats_its_shares_and_ids():
    keys = [[hpke.HpkeKey().public] for _ in range(2)]
    one, two = (make_reports(np.ones((3, 2), np.int64), np.zeros((3, 4), np.uint8), keys, 7, 1)
                for _ in range(2))
    assert np.array_equal(one.public, two.public)


def test_batches_join_in_order_and_a_report_names_its_key():
    a = Reports(np.zeros((2, 3), np.uint8), [np.zeros((2, 5), np.uint8)])
    b = Reports(np.ones((1, 3), np.uint8), [np.ones((1, 5), np.uint8)])
    joined = Reports.joined([a, b])
    assert joined.public[:, 0].tolist() == [0, 0, 1] and joined.sealed[0].shape == (3, 5)
    public = np.array([[0], [1], [5], [255]], np.uint8)
    assert key_index(public, 1).tolist() == [0, 0, 0, 0]
    assert key_index(public, 2).tolist() == [0, 1, 1, 1]
