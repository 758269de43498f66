"""The ad network's opaque keys and release, the browsers' records and decoys, the model
owner's plan and steps."""

import numpy as np
import pytest

from ppml.crypto import hpke
from ppml.crypto.aead import MessageRejected
from ppml.protocols.masked_lark.config import MaskedLarkOptions
from ppml.protocols.masked_lark.roles import (KEY_BYTES, AdNetwork, Browsers, ModelOwner,
                                              pack_release, release_info, unpack_release)


def test_opaque_keys_are_equal_for_equal_pairs_and_readable_by_the_ad_network_alone():
    adnet = AdNetwork(3, 2, seed=1)
    catalog = adnet.catalog()
    assert catalog.shape == (6, KEY_BYTES) and len({row.tobytes() for row in catalog}) == 6
    assert np.array_equal(catalog, adnet.catalog())                  # deterministic
    assert adnet.pair(catalog[3].tobytes()) == (1, 1)
    other = AdNetwork(3, 2, seed=2)                                   # another key
    assert not np.array_equal(catalog, other.catalog())
    with pytest.raises(Exception):
        other.pair(catalog[3].tobytes())


def test_the_release_adds_the_helpers_shares_and_refuses_different_keys():
    adnet = AdNetwork(2, 2, seed=1)
    keys = adnet.catalog()[[0, 3]]
    recipient = hpke.public_key(adnet.public_key())
    sums = [np.array([[5, 1], [2, 2]], np.uint64), np.array([[1, 2**64 - 3], [0, 1]], np.uint64)]
    boxes = [np.frombuffer(hpke.seal(recipient, pack_release(keys, s), release_info(j)),
                           np.uint8) for j, s in enumerate(sums)]
    assert adnet.release(boxes, 2) == [[0, 0, [6, -2]], [1, 1, [2, 3]]]
    assert np.array_equal(unpack_release(np.frombuffer(pack_release(keys, sums[0]), np.uint8),
                                         2)[1], sums[0])
    with pytest.raises(MessageRejected, match="helper 0's release failed to open"):
        adnet.release(boxes[::-1], 2)                     # each sealed for its own helper
    moved = np.frombuffer(hpke.seal(recipient, pack_release(keys[::-1], sums[1]),
                                    release_info(1)), np.uint8)
    with pytest.raises(ValueError, match="released different keys"):
        adnet.release([boxes[0], moved], 2)


def test_the_browsers_need_the_catalog_and_name_a_wrong_one():
    browsers = Browsers(MaskedLarkOptions(reports=50, queries=3, advertisers=2), 0, seed=1)
    with pytest.raises(RuntimeError, match="call start\\(catalog\\) first"):
        browsers.reports([[hpke.HpkeKey().public]] * 2)
    with pytest.raises(ValueError, match="catalog must be \\(6, 24\\)"):
        browsers.start(np.zeros((5, KEY_BYTES), np.uint8))


def test_decoys_are_zeros_under_keys_other_than_their_browsers():
    options = MaskedLarkOptions(reports=200, queries=5, advertisers=4, fake_records=2)
    browsers, keys, values = Browsers(options, 3, seed=1).records()
    assert len(browsers) == 3 * 200
    for b in range(200):
        mine = keys[browsers == b]
        assert len(set(mine.tolist())) == 3                          # its key and two decoys
        assert (values[browsers == b] != 0).any(axis=1).sum() <= 1
    with pytest.raises(ValueError, match="fake_records must be below the catalog's 6 keys"):
        Browsers(MaskedLarkOptions(reports=20, queries=3, advertisers=2, fake_records=6), 0,
                 seed=1).records()


def test_the_model_owner_steps_on_the_released_sum_over_the_batch():
    options = MaskedLarkOptions(task="train", epochs=1, batch_size=100, learning_rate=0.5)
    owner = ModelOwner(options, "breast_cancer", None, 0, precision_bits=20)
    features, wired, theta = owner.setup()
    assert wired[0] == "logistic" and len(theta) == features.shape[1] + 1
    recipient = hpke.public_key(owner.public_key())
    gradient = np.full(len(theta), 2**20 * 100, dtype=np.uint64)     # 100.0 per coordinate
    halves = [gradient // np.uint64(2), gradient - gradient // np.uint64(2)]
    new = owner.step([np.frombuffer(hpke.seal(recipient, h.tobytes(), release_info(j, 0)),
                                    np.uint8) for j, h in enumerate(halves)], 0)
    assert np.allclose(new, -0.5 * 100 / len(owner.plan.batches[0]))
