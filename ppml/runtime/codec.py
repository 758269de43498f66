"""The bytes of a call between parties in different trust domains: data, never code.

A federated party calls another party's role with arguments and gets a value back, over their
TLS link (`ppml.runtime.remote`).  Nothing received is unpickled: values are MessagePack
(``msgpack``, which Ray itself depends on) with three extension types, so a peer can send data
only:

* numeric numpy arrays: dtype, shape and raw bytes (numpy scalars travel as Python numbers);
* tuples (MessagePack has lists only; keys such as ``(0, 1)`` must come back as tuples);
* exceptions, as (type name, message), rebuilt as that builtin type or as `RemoteError`;
* integers beyond 64 bits and gmpy2 integers (Paillier ciphertexts, moduli), as gmpy2 ``mpz``;
* Paillier public keys, encodings and encrypted arrays (`ppml.crypto.paillier`): their public
  fields, rebuilt through their constructors, which check them (a ciphertext outside (0, n^2)
  is refused); a public key of any size is rebuilt, and the protocol checks its size;
* dataclasses of public parameters that a protocol registered (`register`), rebuilt through
  their constructors.

Everything else that is not None, bool, int, float, str, bytes, list or dict is refused with a
`TypeError` naming its type.
"""

from __future__ import annotations

import builtins
import dataclasses

import gmpy2
import msgpack
import numpy as np

from ppml.crypto.paillier import EncryptedArray, PublicKey
from ppml.crypto.paillier.encoding import Encoding, objects

ARRAY, TUPLE, ERROR, BIGINT, PUBLIC_KEY, ENCODING, ENCRYPTED, RECORD = 1, 2, 3, 4, 5, 6, 7, 8
_RECORDS: dict = {}
"""Dataclasses of public values that may cross (`register`): name -> class."""


def register(cls):
    """Let instances of the dataclass ``cls`` (public parameters, such as a protocol's
    algorithm settings) cross between parties: its fields travel as data and come back
    through its constructor, which checks them.  Only registered classes are ever built."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"only dataclasses can be registered, got {cls!r}")
    name = f"{cls.__module__}.{cls.__qualname__}"
    if _RECORDS.setdefault(name, cls) is not cls:
        raise ValueError(f"another class is registered as {name}")
    return cls
ARRAY_KINDS = "biuf"
"""bool, signed and unsigned integers, floats: never object arrays."""
_ERRORS = {name: getattr(builtins, name) for name in (
    "ValueError", "TypeError", "RuntimeError", "TimeoutError", "KeyError", "IndexError",
    "PermissionError", "ConnectionError", "NotImplementedError", "ArithmeticError",
    "ZeroDivisionError", "OverflowError", "LookupError", "AttributeError")}
"""Errors rebuilt as their own type on the caller's side."""


class RemoteError(RuntimeError):
    """An error of a type the codec does not rebuild (``kind`` is its type's name)."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def _bigint(value) -> bytes:
    value = int(value)
    return bytes([value < 0]) + abs(value).to_bytes((abs(value).bit_length() + 7) // 8, "big")


def _unbigint(data: bytes):
    if not data or data[0] not in (0, 1):
        raise ValueError("malformed integer")
    magnitude = gmpy2.mpz(int.from_bytes(data[1:], "big"))
    return -magnitude if data[0] else magnitude


def _default(value):
    if type(value) is int or isinstance(value, type(gmpy2.mpz(0))):
        return msgpack.ExtType(BIGINT, _bigint(value))
    if isinstance(value, PublicKey):
        return msgpack.ExtType(PUBLIC_KEY, _bigint(value.n))
    if isinstance(value, Encoding):
        return msgpack.ExtType(ENCODING, encode([value.scale_bits, value.max_abs]))
    if isinstance(value, EncryptedArray):
        return msgpack.ExtType(ENCRYPTED, encode(
            [value.public_key, value.encoding, list(value.ciphertexts.ravel()),
             list(value.shape), value.k, value.lo, value.hi]))
    name = f"{type(value).__module__}.{type(value).__qualname__}"
    if _RECORDS.get(name) is type(value):
        return msgpack.ExtType(RECORD, encode([name, {f.name: getattr(value, f.name)
                                                      for f in dataclasses.fields(value)
                                                      if f.init}]))
    if isinstance(value, np.generic) and value.dtype.kind in ARRAY_KINDS:
        return value.item()                               # a numpy scalar: the Python number
    if isinstance(value, np.ndarray):
        array = value if value.flags.c_contiguous else value.copy()
        if array.dtype.kind not in ARRAY_KINDS:
            raise TypeError(f"arrays between parties must be numeric, got dtype {array.dtype}")
        return msgpack.ExtType(ARRAY, msgpack.packb(
            [array.dtype.str, list(array.shape), array.tobytes()], use_bin_type=True))
    if type(value) is tuple:
        return msgpack.ExtType(TUPLE, encode(list(value)))
    if isinstance(value, BaseException):
        kind = type(value).__name__ if type(value).__name__ in _ERRORS else \
            getattr(value, "kind", type(value).__name__)
        return msgpack.ExtType(ERROR, msgpack.packb([kind, str(value)], use_bin_type=True))
    if isinstance(value, (bool, int, float, str, bytes)):       # subclasses: as the base type
        for base in (bool, int, float, str, bytes):
            if isinstance(value, base):
                return base(value)
    raise TypeError(f"a value of type {type(value).__name__} cannot cross between parties "
                    f"(data only: numbers, str, bytes, None, lists, tuples, dicts, numeric "
                    f"arrays)")


def _ext(code: int, data: bytes):
    if code == ARRAY:
        dtype, shape, raw = msgpack.unpackb(data, raw=False)
        dtype = np.dtype(dtype)
        if dtype.kind not in ARRAY_KINDS or any(not isinstance(n, int) or n < 0 for n in shape):
            raise ValueError(f"malformed array: dtype {dtype}, shape {shape}")
        if len(raw) != dtype.itemsize * int(np.prod(shape, dtype=np.int64)):
            raise ValueError("malformed array: its bytes do not match its shape")
        return np.frombuffer(raw, dtype).reshape(shape).copy()
    if code == TUPLE:
        return tuple(decode(data))
    if code == BIGINT:
        return _unbigint(data)
    if code == PUBLIC_KEY:
        return PublicKey(_unbigint(data), insecure_key_bits_ok=True)
    if code == ENCODING:
        scale_bits, max_abs = decode(data)
        return Encoding(scale_bits, max_abs)
    if code == ENCRYPTED:
        key, encoding, ciphertexts, shape, k, lo, hi = decode(data)
        if not isinstance(key, PublicKey) or not isinstance(encoding, Encoding):
            raise ValueError("malformed encrypted array")
        return EncryptedArray(key, encoding, objects(ciphertexts, tuple(shape)), k, lo, hi)
    if code == RECORD:
        name, fields = decode(data)
        if name not in _RECORDS or not isinstance(fields, dict):
            raise ValueError(f"{name!r} is not a registered record")
        return _RECORDS[name](**fields)
    if code == ERROR:
        kind, message = msgpack.unpackb(data, raw=False)
        cls = _ERRORS.get(kind)
        return cls(message) if cls is not None else RemoteError(kind, message)
    raise ValueError(f"unknown extension type {code}")


def encode(value) -> bytes:
    """The bytes of ``value`` (TypeError when it is not data)."""
    return msgpack.packb(value, default=_default, use_bin_type=True, strict_types=True)


def decode(data: bytes):
    """The value of ``encode``'s bytes; ValueError when they are malformed."""
    try:
        return msgpack.unpackb(data, ext_hook=_ext, raw=False, strict_map_key=False)
    except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError,
            TypeError) as exc:
        raise ValueError(f"malformed message: {exc}") from None
