"""Pairwise key agreement and sealed hand-over of a shared secret through an untrusted relay.

Two roles that must share a secret the relay between them may not see (Samba's data owners and
Comp agree on Enc's AES key, and the data owners on seed_alpha, through the Controller; Ciucanu
et al., Samba section 4, "keys shared before starting the actual protocol") each hold an X25519
key pair (RFC 7748).  The relay carries only public keys and sealed boxes: the sender derives
a one-use key from the X25519 shared secret with HKDF-SHA256 (RFC 5869), bound to a context
(run, purpose, sender, receiver), and seals the secret with AES-256-GCM.  A tampered, misrouted
or replayed box fails authentication (`MessageRejected`).
"""

from __future__ import annotations

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ppml.crypto.aead import MessageRejected
from ppml.crypto.rng import KEY_BYTES

PUBLIC_BYTES = 32
_NONCE = bytes(12)
"""Every derived key seals exactly one box (its context names one purpose, sender and
receiver), so a fixed nonce never repeats under a key."""


def _check_bytes(name: str, value) -> None:
    if not isinstance(value, bytes):
        raise TypeError(f"{name} must be bytes, got {type(value).__name__}")


class KeyAgreement:
    """A role's X25519 key pair: its public half travels, the private half never leaves it."""

    __slots__ = ("_private", "public")

    def __init__(self, private_bytes: bytes):
        if not isinstance(private_bytes, bytes) or len(private_bytes) != KEY_BYTES:
            raise ValueError(f"private_bytes must be {KEY_BYTES} bytes from the role's own CSPRNG"
                             " (or its seeded INSECURE key)")
        self._private = X25519PrivateKey.from_private_bytes(private_bytes)
        self.public = self._private.public_key().public_bytes_raw()

    def agree(self, peer_public: bytes, context: bytes) -> bytes:
        """The key this role shares with the holder of ``peer_public`` for ``context`` (X25519,
        then HKDF-SHA256): both ends derive it, nobody else can."""
        if not isinstance(peer_public, bytes) or len(peer_public) != PUBLIC_BYTES:
            raise ValueError(f"peer_public must be {PUBLIC_BYTES} bytes, got {peer_public!r:.40}")
        _check_bytes("context", context)
        shared = self._private.exchange(X25519PublicKey.from_public_bytes(peer_public))
        return HKDF(hashes.SHA256(), KEY_BYTES, salt=None, info=context).derive(shared)

    def _box_key(self, peer_public: bytes, context: bytes) -> AESGCM:
        return AESGCM(self.agree(peer_public, context))

    def seal(self, peer_public: bytes, secret: bytes, context: bytes) -> bytes:
        """``secret`` sealed to the holder of ``peer_public`` under ``context``."""
        _check_bytes("secret", secret)
        return self._box_key(peer_public, context).encrypt(_NONCE, secret, context)

    def open(self, peer_public: bytes, box: bytes, context: bytes) -> bytes:
        """The secret in ``box`` from the holder of ``peer_public``; `MessageRejected` if the
        box was altered, or sealed by another key or for another context."""
        _check_bytes("box", box)
        try:
            return self._box_key(peer_public, context).decrypt(_NONCE, box, context)
        except InvalidTag:
            raise MessageRejected(f"sealed box for {context!r} failed authentication") from None

    def __reduce__(self):
        raise TypeError("a KeyAgreement holds a private key and cannot be pickled; make it "
                        "inside the role that uses it")
