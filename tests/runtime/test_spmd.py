"""`spmd.run` in the local runtime: a secret given by a party that does not own it is refused as
under Ray, with the same message, although the local runtime merges every party's inputs."""

import numpy as np
import pytest

from ppml.runtime import spmd

WRONG_PARTY = "party 0 owns the input but passed value=None"
"""What the owner's `share` says in every runtime when it was not given the value."""


def share_a_from_party_0(ctx, a=None):
    return ctx.share(a, owner=0).reveal()


def share_bits_from_party_0(ctx, a=None):
    return ctx.share_binary(a, owner=0).reveal()


@pytest.mark.parametrize("program", [share_a_from_party_0, share_bits_from_party_0])
def test_a_secret_given_by_another_party_is_refused_locally(program):
    a = np.arange(3, dtype=np.int64)
    with pytest.raises(ValueError, match=WRONG_PARTY):
        spmd.run(program, 3, inputs={2: {"a": a}})
    out = spmd.run(program, 3, inputs={0: {"a": a}, 2: {"a": a}})   # the owner gave it too
    assert np.allclose(out[1], a)


def test_numbers_and_derived_values_are_not_tracked():
    """Only the arrays and lists given are recognised; a value computed from them is the
    program's own (the Ray runtime's owner would fail on None when computing it)."""
    out = spmd.run(lambda ctx, a=None: ctx.share(a * 2, owner=0).reveal(), 2,
                   inputs={1: {"a": np.ones(2)}})
    assert np.allclose(out[0], 2)
