"""AES-GCM channels: round trip, fixed width, and refusal of tampered, replayed, reordered
messages with the (run, t, l, kind) named."""

import pytest

from ppml.crypto.aead import NONCE_BLOCK, Channel, MessageRejected, ReplayGuard
from ppml.crypto.rng import Stream, seeded_key

KEY = seeded_key(1, "aead-test")


def channel(run=b"run-1", width=8):
    return Channel(KEY, run, width)


def test_round_trip_and_fixed_length():
    ch = channel()
    a, b = ch.seal(bytes(8), 3, 1, "score"), ch.seal(b"\xff" * 8, 3, 1, "score")
    assert len(a) == len(b) == ch.message_bytes == 12 + 8 + 16
    assert a != b                                        # fresh nonces
    assert ch.open(b, 3, 1, "score") == b"\xff" * 8
    assert (ch.encryptions, ch.decryptions) == (2, 1)


def test_wrong_width_is_refused():
    with pytest.raises(ValueError, match="exactly 8 bytes"):
        channel().seal(b"short", 1, 1, "score")


@pytest.mark.parametrize("t, l, kind, run", [(4, 1, "score", b"run-1"), (3, 2, "score", b"run-1"),
                                             (3, 1, "bit", b"run-1"), (3, 1, "score", b"run-2")])
def test_other_step_iteration_kind_or_run_is_rejected(t, l, kind, run):
    message = channel().seal(bytes(8), 3, 1, "score")
    with pytest.raises(MessageRejected, match=f"t={t}, l={l}, kind={kind}"):
        channel(run).open(message, t, l, kind)


def test_tampered_message_is_rejected():
    message = bytearray(channel().seal(bytes(8), 3, 1, "score"))
    message[15] ^= 1
    with pytest.raises(MessageRejected, match="tampered"):
        channel().open(bytes(message), 3, 1, "score")


def test_duplicate_in_list_and_wrong_count_are_rejected():
    ch = channel()
    m = ch.seal(bytes(8), 5, 1, "score")
    with pytest.raises(MessageRejected, match="replayed within the list"):
        ch.open_batch([m, m], 5, 1, "score", 2)
    with pytest.raises(MessageRejected, match="expected 3"):
        ch.open_batch([m], 5, 1, "score", 3)


def test_replay_guard_refuses_old_steps():
    guard = ReplayGuard("Comp")
    guard.advance(4, 1)
    guard.advance(4, 2)
    with pytest.raises(MessageRejected, match="already accepted"):
        guard.advance(4, 2)
    with pytest.raises(MessageRejected, match="replayed or reordered"):
        guard.advance(3, 1)


def test_seeded_nonces_are_reproducible():
    a = Channel(KEY, b"r", 8, Stream(seeded_key(2, "n"))).seal(bytes(8), 1, 1, "score")
    b = Channel(KEY, b"r", 8, Stream(seeded_key(2, "n"))).seal(bytes(8), 1, 1, "score")
    assert a == b


def test_bad_key_length():
    with pytest.raises(ValueError, match="32 bytes"):
        Channel(b"x" * 16, b"r", 8)


def test_seal_many_and_nonces_across_blocks_are_distinct():
    ch = channel()
    sealed = ch.seal_many([bytes([i % 256]) * 8 for i in range(NONCE_BLOCK + 5)], 9, 2, "bit")
    assert len({m[:12] for m in sealed}) == NONCE_BLOCK + 5
    assert ch.open_batch(sealed[-3:], 9, 2, "bit", 3)[0] == bytes([(NONCE_BLOCK + 2) % 256]) * 8
    assert ch.encryptions == NONCE_BLOCK + 5


def test_associated_data_fields_do_not_run_into_each_other():
    message = Channel(KEY, b"run-1", 8).seal(bytes(8), 3, 1, "score")
    with pytest.raises(MessageRejected, match="tampered"):
        Channel(KEY, b"run-1s", 8).open(message, 3, 1, "core")




def test_a_restored_channel_keeps_its_counts_and_repeats_no_nonce():
    """A checkpoint keeps the nonce stream past every nonce read (used or read ahead): the
    channel restored from it under the same key draws none of them again."""
    nonces = Stream(seeded_key(3, "n"))
    ch = Channel(KEY, b"r", 8, nonces)
    used = ch.seal_many([bytes(8)] * 5, 1, 1, "score")
    ch.open_batch(used[:2], 1, 1, "score", 2)
    again = Channel(KEY, b"r", 8, Stream(seeded_key(3, "n")))
    again.restore(ch.state())
    assert (again.encryptions, again.decryptions) == (5, 2)
    later = again.seal_many([bytes(8)] * (NONCE_BLOCK + 1), 2, 1, "score")
    assert not {m[:12] for m in used} & {m[:12] for m in later}
    assert again.open(later[0], 2, 1, "score") == bytes(8)
