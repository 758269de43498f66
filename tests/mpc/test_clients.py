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


@pytest.mark.ray
@pytest.mark.parametrize("method,arms", [("pairwise", 5), ("tournament", 7), ("auto", 1)])
def test_a_client_that_follows_only_its_own_round_receives_the_argmax(ray_cluster, method,
                                                                       arms):
    """pairwise opens XOR-shared bits, tournament the winner's index, one arm an arithmetic
    one-hot: a client that takes only the opening round decodes each as the full program
    would."""
    values = np.linspace(-1.0, 1.0, arms)[::-1].copy()
    values[arms // 2] = 2.0

    def program(ctx, secret=None):
        client = ctx.parties
        if not ctx.comm.held:
            return mpc.receive_argmax(ctx, (arms,), to=client, method=method)
        x = ctx.share(secret, owner=0, shape=(arms,))
        return ctx.value_at(mpc.reveal_argmax(x, to=client, method=method), client)

    outs = spmd.run(program, parties=2, clients=1, runtime="ray", seed=5,
                    inputs={0: {"secret": values}})
    assert list(outs[2]) == list(np.eye(arms, dtype=np.int64)[np.argmax(values)])


def test_receive_argmax_refuses_an_unknown_method_and_a_party_holding_shares():
    ctx = mpc.local_context(2, seed=1, clients=1)
    with pytest.raises(ValueError, match="holds no shares"):
        mpc.receive_argmax(ctx, (3,), to=2)
    with pytest.raises(ValueError, match="argmax method must be one of"):
        mpc.receive_argmax(ctx, (3,), to=2, method="bubble")
