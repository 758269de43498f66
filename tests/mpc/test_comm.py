"""Comm's accounting: rounds and the bytes each party sends, by operation."""

import numpy as np

import ppml.mpc as mpc
from ppml.mpc.ring import ARITHMETIC


def test_bytes_sent_count_every_receiver_but_the_sender():
    ctx = mpc.local_context(3, seed=1)
    x = ctx.share(np.arange(4.0), owner=0, shape=(4,))              # 4 words = 32 bytes a piece
    with ctx.comm.operation("to-all"):
        ctx.open([x.data], ARITHMETIC)
    with ctx.comm.operation("to-one"):
        ctx.open([x.data, x.data], ARITHMETIC, to=1)
    stats = ctx.comm.stats
    for party in range(3):
        by_op = stats[party].by_op
        assert by_op["to-all"] == {"rounds": 1, "bytes_sent": 32 * 2}     # to the two others
        assert by_op["to-one"]["rounds"] == 1
        assert by_op["to-one"]["bytes_sent"] == (0 if party == 1 else 64)
    assert stats[0].bytes_sent == 64 + 64 and stats[1].bytes_sent == 64


def test_a_broadcast_counts_arrays_and_bytes_by_their_length():
    from ppml.mpc.comm import payload_bytes
    assert payload_bytes(np.zeros((1000, 7), dtype=np.uint8)) == 7000     # not its short repr
    assert payload_bytes(b"k" * 32) == 32
    assert payload_bytes([np.zeros(4), b"ab"]) == 34
    assert payload_bytes((3, 4)) == len(b"(3, 4)")                        # a shape: its text
