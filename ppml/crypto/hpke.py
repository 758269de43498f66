"""Hybrid public-key encryption (HPKE, RFC 9180) of small messages to a party's own key, as
the IETF's DAP reports seal each input share to its aggregator: base mode, DHKEM(X25519,
HKDF-SHA256), HKDF-SHA256, AES-128-GCM (DAP's mandatory suite), from the `cryptography`
package.

A party makes its `HpkeKey` itself and hands out only ``public``; a sender `seal`s to that
public key with an ``info`` string that binds the message to its context (a report's public
parts), so a ciphertext moved to another context, or altered, fails to `open`
(`MessageRejected`).  The sealing randomness is the library's own (the OS CSPRNG), whatever a
run's seed: a ciphertext never needs to be reproduced.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ppml.crypto.aead import MessageRejected

SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_128_GCM)
PUBLIC_KEY_BYTES = 32
OVERHEAD_BYTES = 32 + 16
"""A sealed message's length beyond its plaintext: the encapsulated key and the GCM tag."""


def public_key(raw: bytes) -> X25519PublicKey:
    """A recipient's public key from its 32 raw bytes; ValueError naming the length."""
    if not isinstance(raw, bytes) or len(raw) != PUBLIC_KEY_BYTES:
        raise ValueError(f"an HPKE public key is {PUBLIC_KEY_BYTES} raw bytes, got "
                         f"{len(raw) if isinstance(raw, bytes) else type(raw).__name__}")
    return X25519PublicKey.from_public_bytes(raw)


def seal(recipient: X25519PublicKey, plaintext: bytes, info: bytes) -> bytes:
    """``plaintext`` sealed to ``recipient`` (a `public_key`) under the context ``info``."""
    if not isinstance(recipient, X25519PublicKey):
        raise TypeError(f"recipient must be an X25519 public key (hpke.public_key(raw)), got "
                        f"{type(recipient).__name__}")
    return SUITE.encrypt(plaintext, recipient, info=info)


class HpkeKey:
    """A party's own HPKE key pair, made from the OS CSPRNG where it is used; only `public`
    leaves the party."""

    def __init__(self):
        self._private = X25519PrivateKey.generate()
        self.public = self._private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def open(self, sealed: bytes, info: bytes, what: str = "a message") -> bytes:
        """The plaintext of ``sealed`` under ``info``; `MessageRejected` naming ``what`` if it
        was altered, sealed to another key or under another context."""
        if not isinstance(sealed, bytes):
            raise TypeError(f"sealed must be bytes, got {type(sealed).__name__}")
        try:
            return SUITE.decrypt(sealed, self._private, info=info)
        except (InvalidTag, ValueError) as exc:
            raise MessageRejected(f"{what} failed to open (altered, sealed to another key or "
                                  f"for another context)") from exc

    def __reduce__(self):
        raise TypeError("an HpkeKey stays with the party that made it")
