"""Clients run as actors too and give the same results as in the local runtime."""

import numpy as np
import pytest

from ppml.runtime import spmd

pytestmark = pytest.mark.ray


def program(ctx, secret=None):
    p = ctx.parties
    x = ctx.share(secret, owner=p, shape=(3,))
    z = (x * x + 1.0)
    return z.reveal(to=p + 1), z.reveal(to=0), ctx.stats()


def test_clients_in_ray_match_local(ray_cluster):
    secret = np.array([1.5, -2.0, 0.25])
    kwargs = dict(parties=2, clients=2, seed=5, inputs={2: {"secret": secret}})
    local = spmd.run(program, runtime="local", **kwargs)
    remote = spmd.run(program, runtime="ray", **kwargs)
    assert np.array_equal(local[3][0], remote[3][0])
    assert np.allclose(remote[3][0], secret**2 + 1, atol=1e-5)
    assert remote[0][0] is None and remote[2][0] is None and remote[2][1] is None
    assert [o[2]["rounds"] for o in local] == [o[2]["rounds"] for o in remote]
    assert [o[2]["bytes_sent"] for o in local] == [o[2]["bytes_sent"] for o in remote]
