"""Frames between parties: arrays and literals round-trip; anything else is refused."""

import io

import numpy as np
import pytest

from ppml.runtime import wire


def roundtrip(frame: bytes):
    stream = io.BytesIO(frame)
    message = wire.read_message(stream.read)
    assert stream.read() == b""
    return message


def test_arrays_round_trip_with_dtype_and_shape():
    arrays = [np.arange(12, dtype=np.uint64).reshape(3, 4), np.array(7, dtype=np.int64),
              np.zeros((0, 2), dtype=np.uint64), np.linspace(0, 1, 5)[::2], np.array([True])]
    round_, tag, body = roundtrip(wire.encode_arrays(17, "beaver-mul", arrays))
    assert (round_, tag) == (17, "beaver-mul")
    assert len(body) == len(arrays)
    for got, sent in zip(body, arrays):
        assert got.dtype == sent.dtype and got.shape == sent.shape
        np.testing.assert_array_equal(got, sent)


def test_no_arrays_is_a_valid_message():
    assert roundtrip(wire.encode_arrays(1, "open", [])) == (1, "open", [])


@pytest.mark.parametrize("value", [(3, 4), (), None, 5, "text", {"a": [1, 2.5]}])
def test_broadcast_literals_round_trip(value):
    assert roundtrip(wire.encode_value(2, "shape", value)) == (2, "shape", value)


def test_non_literal_broadcast_values_are_refused():
    with pytest.raises(ValueError, match="broadcast value must be a Python literal"):
        wire.encode_value(1, "shape", np.int64(3))
    with pytest.raises(ValueError, match="broadcast value must be a Python literal"):
        wire.encode_value(1, "shape", object())


def test_object_arrays_are_refused_on_both_ends():
    with pytest.raises(ValueError, match="numeric"):
        wire.encode_arrays(1, "open", [np.array([object()])])
    spec = b"|O8 1"  # dtype text of an object array
    frame = wire.HEAD.pack(1, wire.ARRAYS, 4, len(spec), 8) + b"open" + spec + bytes(8)
    with pytest.raises(ValueError, match="malformed array spec"):
        roundtrip(frame)


def test_data_that_does_not_match_its_spec_is_refused():
    frame = bytearray(wire.encode_arrays(1, "open", [np.arange(4, dtype=np.uint64)]))
    short = bytes(frame[:-8])
    head = wire.HEAD.unpack(short[:wire.HEAD.size])
    short = wire.HEAD.pack(*head[:4], head[4] - 8) + short[wire.HEAD.size:]
    with pytest.raises(ValueError, match="shorter"):
        roundtrip(short)
    code = b"__import__('os').system('true')"
    frame = wire.HEAD.pack(1, wire.VALUE, 4, len(code), 0) + b"open" + code
    with pytest.raises(ValueError, match="malformed broadcast value"):
        roundtrip(frame)
