"""LinkComm without Ray: parties in threads, frames handed straight to the peers' mailboxes.

Counting and views must be exactly LocalComm's; duplicate deliveries must change nothing.
"""

import io
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ppml.mpc.comm import LocalComm
from ppml.runtime import wire
from ppml.runtime.mailbox import Mailbox
from ppml.runtime.link_comm import LinkComm


def comms(parties: int, copies: int = 1, timeout_s: float = 5.0) -> list:
    """One LinkComm per party; every frame is delivered ``copies`` times (at-least-once)."""
    boxes = [Mailbox() for _ in range(parties)]

    def sender(rank):
        def send(peer, frame):
            round_, tag, body = wire.read_message(io.BytesIO(frame).read)
            for _ in range(copies):
                boxes[peer].deliver(round_, rank, tag, body)
        return send

    return [LinkComm(r, parties, sender(r), boxes[r], timeout_s, record_views=True)
            for r in range(parties)]


def spmd(parties: list, step) -> list:
    """``step(comm)`` in one thread per party; the results in party order."""
    with ThreadPoolExecutor(len(parties)) as pool:
        return list(pool.map(step, parties))


PIECES = [np.arange(6, dtype=np.uint64).reshape(2, 3) * (p + 1) for p in range(3)]
OTHER = [np.array([p, 10 + p], dtype=np.uint64) for p in range(3)]


def steps(comm):
    """A few rounds under operation labels, as protocol code makes them."""
    held = list(comm.held)
    out = []
    with comm.operation("mul"):
        out.append(comm.exchange([np.stack([PIECES[p] for p in held]),
                                  np.stack([OTHER[p] for p in held])], tag="beaver-mul"))
    with comm.operation("reveal"):
        out.append(comm.exchange([np.stack([OTHER[p] for p in held])], to=1, tag="reveal"))
    out.append(comm.broadcast((2, 3) if 2 in held else None, owner=2, tag="shape"))
    return out


def test_duplicated_deliveries_give_localcomm_results_stats_and_views():
    local = LocalComm(3, record_views=True)
    expected = steps(local)
    link_comms = comms(3, copies=2)
    results = spmd(link_comms, steps)
    for rank, (comm, got) in enumerate(zip(link_comms, results)):
        for k in range(2):
            np.testing.assert_array_equal(got[0][k], expected[0][k])
        if rank == 1:
            np.testing.assert_array_equal(got[1][0], expected[1][0])
        else:
            assert got[1] is None
        assert got[2] == (2, 3)
        assert comm.stats[rank].as_dict() == local.stats[rank].as_dict()
        assert_same_view(comm.views[rank], local.views[rank])


def assert_same_view(got: list, expected: list):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g[:4] == e[:4]
        if isinstance(e[4], list):
            assert len(g[4]) == len(e[4])
            for a, b in zip(g[4], e[4]):
                np.testing.assert_array_equal(a, b)
        else:
            assert g[4] == e[4]


def test_a_peer_that_never_sends_times_out_naming_it():
    parties = comms(2, timeout_s=0.2)
    with pytest.raises(TimeoutError, match=r"no message from party 1 for round 1 within 0.2 s"):
        parties[0].exchange([np.zeros((1, 2), dtype=np.uint64)])


def test_parties_out_of_step_fail_clearly():
    parties = comms(2)
    tags = {0: "beaver-mul", 1: "truncate"}

    def step(comm):
        try:
            comm.exchange([np.zeros((1, 2), dtype=np.uint64)], tag=tags[comm.rank])
        except RuntimeError as exc:
            return str(exc)

    messages = spmd(parties, step)
    assert "out of step with party 1 in round 1: it sent 'truncate@1'" in messages[0]
    assert "out of step with party 0 in round 1: it sent 'beaver-mul@1'" in messages[1]


def test_a_frame_of_another_round_is_caught_even_with_the_same_tag_and_shapes():
    """Party 1 skips a round: its next frame has the tag and shape party 0 expects, but the
    round it carries is not party 0's."""
    parties = comms(2)

    def step(comm):
        piece = [np.zeros((1, 2), dtype=np.uint64)]
        try:
            if comm.rank == 1:
                comm._count_round()                    # a round party 0 has not taken
            comm.exchange(piece, tag="beaver-mul")
        except (RuntimeError, TimeoutError) as exc:
            return str(exc)

    message = spmd(parties, step)[0]
    assert "out of step with party 1 in round 1: it sent 'beaver-mul@2'" in message


def test_pieces_of_another_shape_fail_clearly():
    parties = comms(2)
    shapes = {0: (1, 2), 1: (1, 3)}

    def step(comm):
        try:
            comm.exchange([np.zeros(shapes[comm.rank], dtype=np.uint64)])
        except RuntimeError as exc:
            return str(exc)

    assert "out of step with party 1 in round 1" in spmd(parties, step)[0]
