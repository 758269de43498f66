"""ppml/protocols/samba/selection.py: the DOs' keys, SelectArm on shares against the same rule
in the clear, and the refusals."""

import math

import numpy as np
import pytest

from ppml.crypto.aead import MessageRejected
from ppml.crypto.rng import Stream, seeded_key
from ppml.mpc.local import local_context
from ppml.protocols.samba.policies import ARGMAX, MATCH, AlgorithmSpec, select_arm
from ppml.protocols.samba.selection import (MATCH_BITS, MAX_MATCH_ARMS, MIN_SOFTMAX_TAU,
                                            SHARE_BLOCK_WORDS, U_BITS, check_policy,
                                            comp_shares, match_position, score_key,
                                            select_on_shares, share_words, unpack_shares)
from ppml.protocols.samba.wire import SCORE_BYTES


def test_argmax_keys_order_exactly_like_the_scores():
    rng = np.random.default_rng(1)
    xs = list(rng.choice([0.0, -0.0, 1e-300, 0.5, 0.5 + 2**-53, 3.0, 1e300], 200))
    keys = [score_key(ARGMAX, x, 1.0) for x in xs]
    assert all(0 <= k < 2**63 for k in keys)
    assert score_key(ARGMAX, -0.0, 1.0) == score_key(ARGMAX, 0.0, 1.0) == 0
    assert np.argsort(keys, kind="stable").tolist() == np.argsort(xs, kind="stable").tolist()
    assert keys.index(max(keys)) == xs.index(max(xs))


def test_match_keys_are_fixed_point_of_the_score_over_its_bound():
    assert score_key(MATCH, 1.0, 1.0) == 2**MATCH_BITS
    assert score_key(MATCH, 0.25, 1.0) == 2**(MATCH_BITS - 2)
    with pytest.raises(ValueError, match="exceeds its bound"):
        score_key(MATCH, 1.5, 1.0)
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="finite and >= 0"):
            score_key(ARGMAX, bad, 1.0)


def test_a_share_reader_reads_its_stream_in_small_blocks_and_resumes_mid_block():
    """K readers on each side: each holds at most SHARE_BLOCK_WORDS words read ahead (342 MiB of
    blocks at K = 1,000 before), with the stream's words in order, and resumes from its state."""
    key = seeded_key(3, "shares", 0)
    reader = share_words(key)
    drawn = [reader.word() for _ in range(SHARE_BLOCK_WORDS + 5)]
    assert drawn == Stream(key).uint64(SHARE_BLOCK_WORDS + 5).tolist()
    state = reader.state()
    assert reader._stream.position - state[1] == 8 * (SHARE_BLOCK_WORDS - 5)
    resumed = share_words(*state)
    assert [resumed.word() for _ in range(SHARE_BLOCK_WORDS)] == \
        [reader.word() for _ in range(SHARE_BLOCK_WORDS)]


def test_match_position_is_the_float_rule_on_the_keys():
    rng = np.random.default_rng(2)
    for _ in range(300):
        keys = rng.integers(0, 2**MATCH_BITS, rng.integers(1, 9)).tolist()
        u = int(rng.integers(0, 2**U_BITS))
        if sum(keys):
            expected = select_arm(MATCH, [k / 2**MATCH_BITS for k in keys], u / 2**U_BITS)
            assert match_position(keys, u) == expected
    assert match_position([0, 0, 0], 5) == 2                 # no rise: the last position


def shared_selection(kind, keys, u=None):
    """Both parties in one context: the position Comp (party 1) learns."""
    ctx = local_context(2, seed=3)
    words = np.random.default_rng(4).integers(0, 2**63, len(keys), dtype=np.uint64)
    comp = np.array([(k - int(w)) % 2**64 for k, w in zip(keys, words)], dtype=np.uint64)
    out = select_on_shares(ctx, {0: (kind, words, u), 1: (kind, comp, None)})
    assert out[0] is None
    return out[1]


@pytest.mark.parametrize("arms", [2, 5, 41, 45])        # pairwise, and the tournament above 40
def test_selection_on_shares_takes_the_plaintext_decision(arms):
    rng = np.random.default_rng(arms)
    for _ in range(3):
        xs = rng.choice([0.1, 0.5, 0.9, 2.5], arms).tolist()          # many ties
        keys = [score_key(ARGMAX, x, 1.0) for x in xs]
        assert shared_selection(ARGMAX, keys) == select_arm(ARGMAX, xs)
        ps = rng.random(arms)
        keys = [score_key(MATCH, p, 1.0) for p in ps]
        u = int(rng.integers(0, 2**U_BITS))
        assert shared_selection(MATCH, keys, u) == match_position(keys, u)


def test_comps_shares_travel_fixed_width_and_padding_is_checked():
    words = iter(range(10, 20))
    plain = comp_shares(ARGMAX, [0.5, 2.0], [words.__next__] * 2, 1.0)
    assert {len(p) for p in plain} == {SCORE_BYTES}
    shares = unpack_shares(plain)
    assert [(int(s) + w) % 2**64 for s, w in zip(shares, (10, 11))] == [
        score_key(ARGMAX, 0.5, 1.0), score_key(ARGMAX, 2.0, 1.0)]
    with pytest.raises(MessageRejected, match="score share has non-zero padding"):
        unpack_shares([bytes(8) + b"\x01" + bytes(SCORE_BYTES - 9)])


def test_policies_the_keys_cannot_carry_are_refused():
    with pytest.raises(ValueError, match=f"at most {MAX_MATCH_ARMS} arms"):
        check_policy(AlgorithmSpec("pursuit").policy(MAX_MATCH_ARMS + 1))
    with pytest.raises(ValueError, match="samba.softmax_tau must be >= 0.048"):
        check_policy(AlgorithmSpec("softmax", softmax_tau=0.02).policy(4))
    check_policy(AlgorithmSpec("softmax", softmax_tau=MIN_SOFTMAX_TAU).policy(4))
    check_policy(AlgorithmSpec("ucb").policy(MAX_MATCH_ARMS + 1))      # argmax: no such bound
