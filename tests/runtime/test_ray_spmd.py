"""runtime="ray" against runtime="local": same seed, bit-identical values, stats and views.

Actors are expensive on 2 cores, so each run below checks as much as it can.
"""

import os
import signal
import time

import numpy as np
import pytest

from ppml.runtime import spmd
import ppml.mpc as mpc
from ppml.runtime.ray_spmd import PartyError
from ppml.runtime.roles import RoleError, spawn, teardown

pytestmark = pytest.mark.ray

A = np.array([1.5, -2.0, 3.25, 0.5])
B = np.array([2.0, 1.0, -0.5, 4.0])
TOLERANCE = 1e-3


def everything(ctx, a=None, b=None):
    """share (given shape and broadcast shape), +, *, @, >=, reciprocal, exp, argmax, reveals."""
    x = ctx.share(a, 0, shape=A.shape)
    y = ctx.share(b, 1)
    product = x * y
    return {
        "sum": (x + y).reveal(),
        "product": product.reveal(),
        "matmul": (x.reshape(2, 2) @ y.reshape(2, 2)).reveal(),
        "geq": (x >= y).reveal(),
        "reciprocal": (y + 2.0).reciprocal().reveal(),
        "exp": (x * 0.25).exp().reveal(),
        "argmax": mpc.argmax(x).reveal(),
        "to_1": product.reveal(to=1),
        "stats": ctx.stats(),
        "view": ctx.view(),
    }


def plain():
    return {"sum": A + B, "product": A * B, "matmul": A.reshape(2, 2) @ B.reshape(2, 2),
            "geq": (A >= B).astype(int), "reciprocal": 1 / (B + 2.0), "exp": np.exp(A / 4),
            "argmax": np.eye(4, dtype=int)[np.argmax(A)]}


def cheap(ctx, a=None, b=None):
    x = ctx.share(a, 0, shape=A.shape)
    y = ctx.share(b, 4, shape=B.shape)
    return {"product": (x * y).reveal(), "to_1": x.reveal(to=1), "stats": ctx.stats(),
            "view": ctx.view()}


def run_both(program, parties, inputs):
    kwargs = dict(parties=parties, seed=11, inputs=inputs, record_views=True)
    return spmd.run(program, runtime="local", **kwargs), spmd.run(program, runtime="ray", **kwargs)


def assert_identical(local: list, ray_: list):
    """Every party's outputs bit for bit, rounds and bytes by operation, and views."""
    assert len(local) == len(ray_)
    for party, (mine, theirs) in enumerate(zip(local, ray_)):
        assert mine.keys() == theirs.keys()
        for name in mine:
            if name == "stats":
                for key in ("rounds", "bytes_sent", "by_op"):
                    assert theirs[name][key] == mine[name][key], (party, key)
            elif name == "view":
                assert_same_view(theirs[name], mine[name])
            elif mine[name] is None:
                assert theirs[name] is None, (party, name)
            else:
                assert theirs[name].dtype == mine[name].dtype, (party, name)
                np.testing.assert_array_equal(theirs[name], mine[name], err_msg=f"{party} {name}")


def assert_same_view(got: list, expected: list):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g[:4] == e[:4]
        if isinstance(e[4], list):
            assert all(np.array_equal(x, y) for x, y in zip(g[4], e[4], strict=True))
        else:
            assert g[4] == e[4]


@pytest.mark.parametrize("parties", [2, 3])
def test_same_seed_gives_bit_identical_outputs_stats_and_views(ray_cluster, parties):
    local, ray_ = run_both(everything, parties, {0: {"a": A}, 1: {"b": B}})
    assert_identical(local, ray_)
    for name, value in plain().items():
        np.testing.assert_allclose(ray_[0][name], value, atol=TOLERANCE, rtol=0, err_msg=name)
    np.testing.assert_allclose(ray_[1]["to_1"], A * B, atol=TOLERANCE)
    assert all(ray_[p]["to_1"] is None for p in range(parties) if p != 1)


def test_five_parties_are_bit_identical_too(ray_cluster):
    local, ray_ = run_both(cheap, 5, {0: {"a": A}, 4: {"b": B}})
    assert_identical(local, ray_)
    np.testing.assert_allclose(ray_[3]["product"], A * B, atol=TOLERANCE)


def secure(ctx, a=None, b=None):
    x = ctx.share(a, 0, shape=A.shape)
    y = ctx.share(b, 1, shape=B.shape)
    return (x * y).reveal(), (x >= y).reveal(), (y + 2.0).reciprocal().reveal()


def test_secure_mode_gives_correct_values(ray_cluster):
    outs = spmd.run(secure, 2, runtime="ray", inputs={0: {"a": A}, 1: {"b": B}})
    for product, geq, reciprocal in outs:
        np.testing.assert_allclose(product, A * B, atol=TOLERANCE)
        np.testing.assert_array_equal(geq, (A >= B).astype(int))
        np.testing.assert_allclose(reciprocal, 1 / (B + 2.0), atol=TOLERANCE)


def fails_at_party_1(ctx, a=None):
    x = ctx.share(a, 0, shape=(2,))
    if 1 in ctx.held:
        raise ValueError("bad input")
    return x.reveal()  # party 0 waits here for party 1 until the driver stops the run


def test_an_error_in_one_party_surfaces_with_its_index(ray_cluster):
    with pytest.raises(PartyError, match="party 1 failed: ValueError: bad input") as info:
        spmd.run(fails_at_party_1, 2, runtime="ray", inputs={0: {"a": np.ones(2)}})
    assert info.value.party == 1
    assert "ValueError" in str(info.value.__cause__)


class Idle:
    """A role outside the engine that the run calls only before and after it (Masked LARK's
    ad network)."""

    def pid(self):
        return os.getpid()


def sleeps(ctx, seconds=0.0):
    time.sleep(seconds)
    return ctx.party


def test_a_role_killed_while_the_engine_runs_is_named_before_the_engine_ends(ray_cluster):
    idle = spawn(Idle, "ray", name="ad network", timeout_s=60.0)
    try:
        pid = idle.call("pid")
        idle.timeout_s = 1.0
        os.kill(pid, signal.SIGKILL)
        start = time.monotonic()
        with pytest.raises(RoleError, match="ad network died during its idle time"):
            spmd.run(sleeps, 2, runtime="ray", inputs={p: {"seconds": 30.0} for p in (0, 1)})
        assert time.monotonic() - start < 25.0
    finally:
        teardown([idle], close=None)


@pytest.mark.parametrize("options, match", [
    ({"timeout_s": 0}, "timeout_s must be a positive number"),
    ({"placement": {7: "party_7"}}, "placement keys must be party indices 0..1"),
    ({"retries": 3}, r"unknown options for the ray runtime: \['retries'\]"),
])
def test_bad_options_are_refused_before_any_actor_starts(ray_cluster, options, match):
    with pytest.raises(ValueError, match=match):
        spmd.run(secure, 2, runtime="ray", **options)


def test_view_needs_record_views():
    with pytest.raises(ValueError, match="record_views=True"):
        spmd.run(lambda ctx: ctx.view(), 2)


def test_dealer_keys_travel_sealed_to_the_one_party_that_opens_them(ray_cluster):
    """The driver passes on public keys, certificates and boxes only: an altered dealer box or
    another party's is refused, and the dealer seals its keys once.  (The pair keys are agreed
    over the TLS links: tests/runtime/test_links.py.)"""
    import ray
    from ppml.crypto.aead import MessageRejected
    from ppml.mpc.keys import dealer_party_key
    from ppml.runtime.dealer_actor import DealerActor
    from ppml.runtime.party import PartyActor

    from ppml.mpc.context import EngineConfig
    members = [PartyActor.remote(p, EngineConfig(2, seed=7), 30.0) for p in range(2)]
    dealer = DealerActor.remote(2, 7)
    try:
        addresses = ray.get([m.address.remote() for m in members])
        certificates = ray.get([m.certificate.remote() for m in members])
        publics = ray.get([m.public.remote() for m in members])
        dealer_public, dealer_boxes = ray.get(dealer.hand_out_keys.remote(publics))
        assert dealer_party_key(7, 1) not in dealer_boxes[1]
        box = dealer_boxes[1]
        for wrong in (box[:-1] + bytes([box[-1] ^ 1]), dealer_boxes[0]):
            with pytest.raises(MessageRejected, match="failed authentication"):
                ray.get(members[1].connect.remote(addresses, certificates, dealer_public, wrong))
        with pytest.raises(RuntimeError, match="already been handed out"):
            ray.get(dealer.hand_out_keys.remote(publics))
    finally:
        for actor in members + [dealer]:
            ray.kill(actor)


def share_from_party_0(ctx, a=None):
    return ctx.share(a, owner=0).reveal()


def test_a_secret_given_by_another_party_is_refused_as_in_the_local_runtime(ray_cluster):
    with pytest.raises(PartyError, match="party 0 owns the input but passed value=None"):
        spmd.run(share_from_party_0, 2, runtime="ray", inputs={1: {"a": np.ones(2)}})
    with pytest.raises(ValueError, match="party 0 owns the input but passed value=None"):
        spmd.run(share_from_party_0, 2, runtime="local", inputs={1: {"a": np.ones(2)}})
