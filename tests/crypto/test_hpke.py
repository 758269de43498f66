"""HPKE sealing to a party's own key: round trip, context binding, tampering, no pickling."""

import pickle

import pytest

from ppml.crypto import hpke
from ppml.crypto.aead import MessageRejected


def test_a_sealed_message_opens_only_with_its_key_and_context():
    key, other = hpke.HpkeKey(), hpke.HpkeKey()
    box = hpke.seal(hpke.public_key(key.public), b"share", b"report 1")
    assert len(box) == len(b"share") + hpke.OVERHEAD_BYTES
    assert key.open(box, b"report 1") == b"share"
    with pytest.raises(MessageRejected, match="report 7 failed to open"):
        key.open(box, b"report 2", "report 7")               # moved to another report
    with pytest.raises(MessageRejected):
        other.open(box, b"report 1")                          # sealed to another helper
    tampered = bytearray(box)
    tampered[-1] ^= 1
    with pytest.raises(MessageRejected):
        key.open(bytes(tampered), b"report 1")
    with pytest.raises(MessageRejected):
        key.open(box[:10], b"report 1")                       # truncated


def test_public_keys_are_checked_and_private_keys_never_pickled():
    with pytest.raises(ValueError, match="an HPKE public key is 32 raw bytes, got 31"):
        hpke.public_key(bytes(31))
    with pytest.raises(TypeError, match="stays with the party"):
        pickle.dumps(hpke.HpkeKey())
