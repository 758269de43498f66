"""Cryptographic primitives only, no protocol logic: fixed-point codec, CSPRNG streams and the
Paillier layer (``ppml.crypto.paillier``)."""
