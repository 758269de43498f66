"""The bytes of one message between parties: a binary head, a text spec, raw arrays; no pickle.

A message is (number, tag, body) where the number counts the messages of one pair of parties
(`ppml.runtime.link_comm`), and the body is either a list of numeric numpy arrays (the
pieces of one exchange round) or a public Python literal (a broadcast, e.g. a shape).  A frame is

    HEAD (number, kind, tag length, spec length, data length) | tag | spec | data

where, for arrays, the spec lists each array's dtype and shape (``"<u8 3 4;<u8 5"``) and the
data is their bytes; for a broadcast the spec is ``repr(value)``, read back with
:func:`ast.literal_eval`.  Nothing received is unpickled, so a peer can send data, never code.
"""

from __future__ import annotations

import ast
import math
import struct

import numpy as np

#: number, kind, tag bytes, spec bytes, data bytes
HEAD = struct.Struct("<QBHIQ")
ARRAYS, VALUE = 0, 1
ARRAY_KINDS = "biuf"  # bool, signed and unsigned integers, floats: never objects


def check_literal(value, name: str = "value") -> None:
    """ValueError unless ``value`` survives ``repr`` -> ``ast.literal_eval`` unchanged."""
    try:
        same = ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        same = False
    if not same:
        raise ValueError(f"{name} must be a Python literal (numbers, str, None, tuples, lists, "
                         f"dicts), got {type(value).__name__} {value!r}")


def encode_value(number: int, tag: str, value) -> bytes:
    """The frame of a broadcast of a public literal ``value``."""
    check_literal(value, "a broadcast value")
    tag_bytes, spec = tag.encode(), repr(value).encode()
    return HEAD.pack(number, VALUE, len(tag_bytes), len(spec), 0) + tag_bytes + spec


def encode_arrays(number: int, tag: str, arrays: list) -> bytes:
    """The frame of one exchange round carrying ``arrays`` (numeric numpy arrays)."""
    arrays = [np.asarray(a, order="C") for a in arrays]
    for a in arrays:
        if a.dtype.kind not in ARRAY_KINDS:
            raise ValueError(f"payload arrays must be numeric, got dtype {a.dtype}")
    tag_bytes = tag.encode()
    spec = ";".join(" ".join([a.dtype.str, *map(str, a.shape)]) for a in arrays).encode()
    head = HEAD.pack(number, ARRAYS, len(tag_bytes), len(spec), sum(a.nbytes for a in arrays))
    return b"".join([head, tag_bytes, spec, *(memoryview(a).cast("B") for a in arrays if a.size)])


def read_message(read) -> tuple:
    """(number, tag, body) of the next frame; ``read(n)`` returns exactly n bytes.

    ValueError when the frame is malformed.
    """
    number, kind, tag_len, spec_len, data_len = HEAD.unpack(read(HEAD.size))
    text = read(tag_len + spec_len)
    data = read(data_len)
    try:
        tag, spec = text[:tag_len].decode(), text[tag_len:].decode()
    except UnicodeDecodeError:
        raise ValueError("malformed message: tag or spec is not UTF-8") from None
    if kind == VALUE and not data:
        try:
            return number, tag, ast.literal_eval(spec)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise ValueError("malformed broadcast value") from None
    if kind != ARRAYS:
        raise ValueError(f"malformed message of kind {kind}")
    return number, tag, _arrays(spec, data)


def _arrays(spec: str, data: bytes) -> list:
    arrays, offset = [], 0
    for item in spec.split(";") if spec else ():
        dtype, shape = _array_spec(item)
        count = math.prod(shape)
        if offset + count * dtype.itemsize > len(data):
            raise ValueError("message data is shorter than its spec says")
        arrays.append(np.frombuffer(data, dtype, count, offset).reshape(shape) if count
                      else np.zeros(shape, dtype))
        offset += count * dtype.itemsize
    if offset != len(data):
        raise ValueError("message data is longer than its spec says")
    return arrays


def _array_spec(item: str) -> tuple:
    try:
        dtype_text, *dims = item.split(" ")
        dtype, shape = np.dtype(dtype_text), tuple(int(n) for n in dims)
    except (TypeError, ValueError):
        raise ValueError(f"malformed array spec {item!r}") from None
    if dtype.kind not in ARRAY_KINDS or any(n < 0 for n in shape):
        raise ValueError(f"malformed array spec {item!r}")
    return dtype, shape
