"""Keys for the Paillier tests: one 2048-bit key per session (CSPRNG, as in production) and
small seeded INSECURE keys that make the unit tests fast."""

import pytest

from ppml.crypto.paillier import Encoding, ObfuscatorPool, generate_keypair


@pytest.fixture(scope="session")
def key_2048():
    """A 2048-bit key pair from the OS CSPRNG, generated once per session."""
    return generate_keypair()


@pytest.fixture(scope="session")
def small_key():
    """A 512-bit INSECURE key pair (seeded, reproducible), for fast unit tests."""
    return generate_keypair(512, insecure_key_bits_ok=True, seed=512)


@pytest.fixture(scope="session")
def key_1024():
    """A 1024-bit INSECURE key pair (seeded), where 512 bits hold too few slots or products."""
    return generate_keypair(1024, insecure_key_bits_ok=True, seed=1024)


@pytest.fixture
def pool(small_key):
    """A fresh obfuscator pool for the small key."""
    return ObfuscatorPool(small_key[0], 64)


@pytest.fixture
def encoding():
    return Encoding()
