"""Sealed hand-over through a relay: the receiver opens, anything else is refused."""

import os
import pickle

import pytest

from ppml.crypto.aead import MessageRejected
from ppml.crypto.agreement import KeyAgreement


def test_the_receiver_opens_what_the_sender_sealed():
    sender, receiver = KeyAgreement(os.urandom(32)), KeyAgreement(os.urandom(32))
    box = sender.seal(receiver.public, b"k" * 32, b"run/aes/comp->0")
    assert box != b"k" * 32 and receiver.open(sender.public, box, b"run/aes/comp->0") == b"k" * 32


def test_a_tampered_misrouted_or_replayed_box_is_refused():
    sender, receiver, other = (KeyAgreement(os.urandom(32)) for _ in range(3))
    box = sender.seal(receiver.public, b"secret", b"run/masks/0->1")
    tampered = bytes([box[0] ^ 1]) + box[1:]
    for peer, data, context in [(sender.public, tampered, b"run/masks/0->1"),
                                (other.public, box, b"run/masks/0->1"),
                                (sender.public, box, b"run/masks/0->2")]:
        with pytest.raises(MessageRejected, match="failed authentication"):
            receiver.open(peer, data, context)
    with pytest.raises(MessageRejected):
        other.open(sender.public, box, b"run/masks/0->1")


def test_keys_are_checked_and_never_pickled():
    with pytest.raises(ValueError, match="private_bytes must be 32 bytes"):
        KeyAgreement(b"short")
    with pytest.raises(ValueError, match="peer_public must be 32 bytes"):
        KeyAgreement(os.urandom(32)).seal(b"x", b"s", b"c")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(KeyAgreement(os.urandom(32)))
