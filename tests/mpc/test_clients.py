"""Clients (Hannun et al.'s p' and p''): ranks that hold no shares, input secrets, get reveals."""

import numpy as np
import pytest

from ppml.runtime import spmd
import ppml.mpc as mpc


def client_program(ctx, secret=None):
    p = ctx.parties
    x = ctx.share(secret, owner=p, shape=(3,))          # a client inputs a secret
    y = (x * 2).reveal(to=p + 1)                          # revealed to the other client only
    assert ctx.value_at(y, p) is None
    return y, ctx.stats()


@pytest.mark.parametrize("parties", [2, 3])
def test_client_input_and_reveal(parties):
    secret = np.array([1.5, -2.0, 0.25])
    outs = spmd.run(client_program, parties=parties, clients=2, seed=3,
                   inputs={parties: {"secret": secret}})
    assert len(outs) == parties + 2
    assert np.allclose(outs[parties + 1][0], 2 * secret, atol=1e-5)
    assert all(out[0] is None for out in outs[:parties + 1])
    # the input costs one message, from the client to party 0
    assert outs[parties][1]["bytes_sent"] == 3 * 8
    assert outs[parties + 1][1]["bytes_sent"] == 0


def test_client_input_sends_one_uniform_share_to_party_0():
    ctx = mpc.local_context(2, seed=None, record_views=True, clients=1)
    x = ctx.share(np.array([5.0]), owner=2, shape=(1,))
    assert [len(ctx.comm.views[p]) for p in (0, 1, 2)] == [1, 0, 0]
    assert np.allclose(x.reveal(), [5.0])


def test_clients_must_be_a_non_negative_integer():
    with pytest.raises(ValueError, match="clients"):
        spmd.run(client_program, parties=2, clients=-1)
