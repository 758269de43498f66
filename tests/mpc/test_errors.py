"""Bad input gets a ValueError that names the parameter."""

import numpy as np
import pytest

from ppml.runtime import spmd
import ppml.mpc as mpc


def noop(ctx, a=None):
    return None


@pytest.mark.parametrize("kwargs, match", [
    (dict(parties=1), "parties"),
    (dict(parties=2, runtime="mpi"), "runtime"),
    (dict(parties=2, precision_bits=40), "precision_bits"),
    (dict(parties=2, truncation="magic"), "truncation"),
    (dict(parties=2, inputs={5: {"a": 1}}), "inputs"),
])
def test_run_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        spmd.run(noop, **kwargs)


def test_input_values():
    ctx = mpc.local_context(2, seed=1)
    with pytest.raises(ValueError, match="NaN or inf"):
        ctx.share(np.array([np.nan]), owner=0)
    with pytest.raises(ValueError, match="product range"):
        ctx.share(np.array([1e13]), owner=0)
    with pytest.raises(ValueError, match="fixed-point range"):
        ctx.share(np.array([1e13]), owner=0, wide=True)
    with pytest.raises(ValueError, match="shape"):
        ctx.share(np.ones(3), owner=0, shape=(4,))
    with pytest.raises(ValueError, match="owner"):
        ctx.share(np.ones(3), owner=2)
    with pytest.raises(ValueError, match="value=None"):
        ctx.share(None, owner=0)
    x = ctx.share(np.ones(3), owner=0)
    with pytest.raises(ValueError, match=r"public operand is outside the product range: "
                                         r"\|v\| must be < 2\^11 = 2048 at precision_bits=20"):
        x + 2**11                                  # an integer operand is never wrapped
    assert np.allclose((x - (2**11 - 1) + (2**11 - 1)).reveal(), 1.0)
    wide = x.at_scale(40)                          # a state kept at 2L takes public reals too
    assert np.allclose((wide + np.float64(0.5)).reveal(), 1.5)
    assert np.allclose((wide + np.array([0.25, 0.5, 1.0])).reveal(), [1.25, 1.5, 2.0])
    with pytest.raises(ValueError, match=r"\|v\| must be < 2\^11"):
        wide + np.array([2.0**11, 0, 0])
    with pytest.raises(ValueError, match=r"outside the ring: \|v\| must be < 2\^1 = 2 at scale "
                                         r"2\^-61"):
        x.at_scale(61) + 2.0                        # and must fit the ring at its scale


def test_operations_on_bad_shapes_and_parties():
    ctx = mpc.local_context(2, seed=1)
    x, y = ctx.share(np.ones((2, 3)), owner=0), ctx.share(np.ones((4, 5)), owner=1)
    with pytest.raises(ValueError, match="matmul shapes"):
        x @ y
    with pytest.raises(ValueError):
        x * y
    with pytest.raises(ValueError, match="to must be a party"):
        x.reveal(to=7)
    with pytest.raises(ValueError, match="public operand"):
        x + np.inf
    from ppml.mpc.protocols.multiply import beaver
    from ppml.mpc.ring import BINARY
    with pytest.raises(ValueError, match="'matmul' exists in the arithmetic ring only"):
        beaver(ctx, [(x.data, x.data)], BINARY, kind="matmul")
    for bad in (float("nan"), float("inf"), 1e30):           # scalar floats, cached path
        with pytest.raises(ValueError, match=r"public operand .* \|v\| must be < 2\^11"):
            x * bad
        with pytest.raises(ValueError, match="public operand"):
            x + bad
