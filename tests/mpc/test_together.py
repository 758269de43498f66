"""Independent computations in shared rounds (`ppml.mpc.together`)."""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.mpc.together import together
from ppml.runtime import spmd

VALUES = np.array([0.5, -1.25, 3.0, 2.0, -0.75])


def _chain(x, depth: int):
    """x^(2^depth) by ``depth`` squarings (two rounds each: the product and its truncation)."""
    for _ in range(depth):
        x = x * x
    return x


def _rounds(ctx) -> int:
    return ctx.stats()[0]["rounds"] if isinstance(ctx.stats(), list) else ctx.stats()["rounds"]


@pytest.mark.parametrize("parties", [2, 3])
def test_two_strands_take_the_longer_strands_rounds_and_give_the_sequential_results(parties):
    def program(ctx, secret=None):
        x = ctx.share(secret, owner=0, shape=VALUES.shape)
        y = x * x + 1.0                                       # in the reciprocal's domain

        def rounds_of(work):
            before = _rounds(ctx)
            return work(), _rounds(ctx) - before

        merged, merged_rounds = rounds_of(lambda: together(
            ctx, lambda: _chain(x * 0.5, 3).reveal(), lambda: y.reciprocal().reveal()))
        chained, chain_rounds = rounds_of(lambda: _chain(x * 0.5, 3).reveal())
        inverse, inverse_rounds = rounds_of(lambda: y.reciprocal().reveal())
        return merged, [chained, inverse], merged_rounds, chain_rounds, inverse_rounds

    merged, alone, merged_rounds, chain_rounds, inverse_rounds = spmd.run(
        program, parties=parties, seed=4, inputs={0: {"secret": VALUES}})[0]
    assert merged_rounds == max(chain_rounds, inverse_rounds)
    for got, want in zip(merged, alone):
        assert np.allclose(got, want, atol=1e-3)
    assert np.allclose(merged[0], (VALUES / 2) ** 8, atol=1e-3)
    assert np.allclose(merged[1], 1 / (VALUES ** 2 + 1), atol=1e-3)


def test_rounds_to_different_receivers_stay_apart_and_clients_get_theirs():
    """An opening to a client and an exchange among the parties cannot share a frame: each is
    its own round; the client still gets exactly what it would alone."""
    def program(ctx, secret=None):
        client = ctx.parties
        x = ctx.share(secret, owner=0, shape=VALUES.shape)
        opened, product = together(ctx, lambda: mpc.reveal_argmax(x, to=client),
                                   lambda: (x * x).reveal())
        return ctx.value_at(opened, client), product

    outs = spmd.run(program, parties=2, clients=1, seed=2, inputs={0: {"secret": VALUES}})
    assert list(outs[2][0]) == list(np.eye(len(VALUES), dtype=np.int64)[np.argmax(VALUES)])
    assert np.allclose(outs[0][1], VALUES ** 2, atol=1e-3)


def test_each_strand_keeps_its_own_operation_labels():
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(VALUES, owner=0)

    def labelled(name, depth):
        with ctx.comm.operation(name):
            return _chain(x, depth).reveal()

    together(ctx, lambda: labelled("first", 3), lambda: labelled("second", 1))
    by_op = ctx.stats()[0]["by_op"]
    assert by_op["first"]["rounds"] == 7          # 3 products of 2 rounds and the opening
    assert "second" not in by_op or by_op["second"]["rounds"] == 0
    assert ctx.comm._ops == []


def test_an_exception_in_a_strand_stops_the_others_and_restores_the_communicator():
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(VALUES, owner=0)
    stopped = []

    def long():
        try:
            return _chain(x, 5).reveal()
        finally:
            stopped.append(True)

    def failing():
        (x * x).reveal()
        raise RuntimeError("strand failed")

    with pytest.raises(RuntimeError, match="strand failed"):
        together(ctx, long, failing)
    assert stopped == [True]
    assert "exchange" not in vars(ctx.comm) and "broadcast" not in vars(ctx.comm)
    assert np.allclose((x * 2).reveal(), 2 * VALUES, atol=1e-4)   # the engine works on


def test_nested_strands_merge_into_the_outer_rounds():
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(VALUES, owner=0) * 0.5
    before = _rounds(ctx)
    outs = together(ctx, lambda: together(ctx, lambda: _chain(x, 2).reveal(),
                                           lambda: _chain(x, 3).reveal()),
                    lambda: _chain(x, 1).reveal())
    assert _rounds(ctx) - before == 7             # the longest strand: 3 products, 1 opening
    assert np.allclose(outs[0][1], (VALUES / 2) ** 8, atol=1e-3)
    assert np.allclose(outs[1], (VALUES / 2) ** 2, atol=1e-3)


def test_one_strand_runs_as_is_and_none_is_refused():
    ctx = mpc.local_context(2, seed=3)
    assert together(ctx, lambda: 7) == [7]
    with pytest.raises(ValueError, match="at least one strand"):
        together(ctx)


@pytest.mark.ray
def test_the_same_results_with_each_party_a_ray_actor(ray_cluster):
    shape = VALUES.shape

    def program(ctx, secret=None):             # all inside: actors cannot import this module
        from ppml.mpc.together import together
        x = ctx.share(secret, owner=0, shape=shape)
        y = x * 0.5
        return together(ctx, lambda: ((y * y) * (y * y)).reveal(),
                        lambda: (x * x + 1.0).reciprocal().reveal())

    local = spmd.run(program, parties=2, seed=4, inputs={0: {"secret": VALUES}})
    ray = spmd.run(program, parties=2, runtime="ray", seed=4, inputs={0: {"secret": VALUES}})
    for a, b in zip(local[0], ray[0]):
        assert np.array_equal(a, b)


def test_a_strand_of_another_strand_may_run_strands_of_its_own():
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(VALUES, owner=0) * 0.5
    outs = together(ctx, lambda: _chain(x, 3).reveal(),
                    lambda: together(ctx, lambda: _chain(x, 1).reveal(),
                                     lambda: _chain(x, 2).reveal()))
    assert np.allclose(outs[0], (VALUES / 2) ** 8, atol=1e-3)
    assert np.allclose(outs[1][0], (VALUES / 2) ** 2, atol=1e-3)
    assert np.allclose(outs[1][1], (VALUES / 2) ** 4, atol=1e-3)
    assert "exchange" not in vars(ctx.comm)


def test_labels_opened_after_the_others_are_done_still_count():
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(VALUES, owner=0)

    def first():
        _chain(x, 1).reveal()
        with ctx.comm.operation("late"):
            return _chain(x, 2).reveal()

    together(ctx, first, lambda: x.reveal())
    assert ctx.stats()[0]["by_op"]["late"]["rounds"] == 5


def test_a_failure_the_first_strand_swallows_still_propagates():
    ctx = mpc.local_context(2, seed=3)
    x = ctx.share(VALUES, owner=0)

    def swallowing():
        try:
            (x * x).reveal()
        except RuntimeError:
            pass
        return (x * 2).reveal()

    def failing():
        raise RuntimeError("strand failed")

    with pytest.raises(RuntimeError, match="strand failed"):
        together(ctx, swallowing, failing)
    assert "exchange" not in vars(ctx.comm)
