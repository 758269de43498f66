"""Cryptographic primitives only, no protocol logic: fixed-point codec, CSPRNG streams."""
