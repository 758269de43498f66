"""Private division by K = 2^k: exactly floor(x / K) for every x within the bound, negative
ones too; what the key owner opens says nothing of x."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.crypto.paillier import ObfuscatorPool, generate_keypair
from ppml.protocols.pprl.division import DivisionHolder, DivisionOwner, Encryptor, divide


@pytest.fixture(scope="module")
def keys():
    return generate_keypair(512, insecure_key_bits_ok=True, seed=5)


def encrypt(public_key, values):
    return public_key.encrypt_raw([v % public_key.n for v in values],
                                  ObfuscatorPool(public_key, len(values)).take(len(values)))


def signed(public_key, residues):
    n = int(public_key.n)
    return [int(r) - n if r > n // 2 else int(r) for r in residues]


def test_the_quotient_is_the_floor_for_every_sign_and_boundary(keys):
    public_key, private_key = keys
    bound, k = 60, 16
    rng = np.random.default_rng(1)
    values = [0, 1, -1, 2**16, -2**16, 2**16 - 1, -(2**16) - 1, 2**60 - 1, -(2**60) + 1,
              *[int(v) for v in rng.integers(-2**59, 2**59, 40)]]
    holder = DivisionHolder(public_key, bound, k, Encryptor())
    owner = DivisionOwner(private_key, k, Encryptor())
    ctx = mpc.local_context(2, seed=3)
    out = divide(owner, holder, ctx, encrypt(public_key, values))
    assert signed(public_key, private_key.decrypt_raw(out)) == [v >> k for v in values]


def test_what_the_owner_opens_is_uncorrelated_with_the_values(keys):
    """The owner's view y = x + 2^b + r: its correlation with x vanishes (r is 41 bits wider)."""
    public_key, private_key = keys
    rng = np.random.default_rng(2)
    values = [int(v) for v in rng.integers(-2**20, 2**20, 4000)]
    holder = DivisionHolder(public_key, 21, 8, Encryptor())
    owner = DivisionOwner(private_key, 8, Encryptor())
    owner.open(holder.mask(encrypt(public_key, values)))
    seen = np.array([float(y) for y in owner._opened])
    ranks = lambda a: np.argsort(np.argsort(a))                     # noqa: E731
    assert abs(np.corrcoef(ranks(seen), ranks(np.array(values)))[0, 1]) < 0.07   # 4.4 sigma


def test_bounds_are_checked(keys):
    public_key, _ = keys
    with pytest.raises(ValueError, match="must be at most the key's 512 bits - 2 = 510"):
        DivisionHolder(public_key, 480, 16, Encryptor())
    with pytest.raises(ValueError, match="statistical_bits must be >= 40"):
        DivisionHolder(public_key, 60, 16, Encryptor(), statistical_bits=20)
