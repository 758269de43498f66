"""ppml/runtime/codec.py: what crosses between parties is data, rebuilt and checked."""

import gmpy2
import msgpack
import numpy as np
import pytest

from ppml.crypto.paillier import Encoding, EncryptedArray, ObfuscatorPool, generate_keypair
from ppml.runtime.codec import ENCRYPTED, RemoteError, decode, encode


def test_data_round_trips():
    value = {"a": (1, 2), (0, 1): np.arange(3, dtype=np.uint64), "f": np.float64(2.5),
             "b": b"x", "n": None, "l": [True, 1.5, "s"], "big": 2**100, "neg": -(2**70),
             "mpz": gmpy2.mpz(7), "empty": np.zeros((2, 0))}
    back = decode(encode(value))
    assert back["a"] == (1, 2) and back["f"] == 2.5 and type(back["f"]) is float
    assert back[(0, 1)].dtype == np.uint64 and back[(0, 1)].tolist() == [0, 1, 2]
    assert back["big"] == 2**100 and back["neg"] == -(2**70) and back["mpz"] == 7
    assert back["empty"].shape == (2, 0) and back["l"] == [True, 1.5, "s"]


def test_errors_come_back_as_their_builtin_type_or_as_remote_errors():
    assert isinstance(decode(encode(ValueError("bad x"))), ValueError)

    class Strange(Exception):
        pass
    err = decode(encode(Strange("odd")))
    assert isinstance(err, RemoteError) and err.kind == "Strange" and "odd" in str(err)


@pytest.mark.parametrize("value", [object(), np.array([object()]), lambda: 1, {1, 2}])
def test_code_and_objects_are_refused(value):
    with pytest.raises(TypeError):
        encode(value)


def test_paillier_values_are_rebuilt_and_checked():
    public, private = generate_keypair(1024, insecure_key_bits_ok=True)
    array = EncryptedArray.encrypt([1.5, -2.0], ObfuscatorPool(public, 2), Encoding(20))
    back = decode(encode({"key": public, "array": array}))
    assert back["key"].n == public.n
    assert private.decrypt_raw(list(back["array"].ciphertexts)) == \
        private.decrypt_raw(list(array.ciphertexts))
    forged = msgpack.ExtType(ENCRYPTED, encode([public, Encoding(20), [public.nsquare + 1],
                                                [1], 1, -1, 1]))
    with pytest.raises(ValueError, match=r"ciphertexts must lie in \(0, n\^2\)"):
        decode(msgpack.packb(forged))


@pytest.mark.parametrize("data", [b"\xc1", msgpack.packb(msgpack.ExtType(1, b"\x00")),
                                  msgpack.packb(msgpack.ExtType(99, b""))])
def test_malformed_bytes_are_refused(data):
    with pytest.raises(ValueError, match="malformed"):
        decode(data)
