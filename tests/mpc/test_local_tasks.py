"""Per-arm Ray tasks give bit-identical products."""

import numpy as np
import pytest

from ppml.runtime import spmd
from ppml.mpc import local_tasks

pytestmark = pytest.mark.ray


def program(ctx, a=None, b=None):
    x, y = ctx.share(a, owner=0), ctx.share(b, owner=1)
    return (x * y).reveal(), (x[:, :, None] * y[:, None, :]).reveal()


def test_split_products_are_identical(ray_cluster, monkeypatch):
    monkeypatch.setattr(local_tasks, "MIN_ELEMENTS", 16)
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (2, 6, 5))
    kwargs = dict(parties=2, seed=3, inputs={0: {"a": a}, 1: {"b": b}})
    alone = spmd.run(program, **kwargs)[0]
    split = spmd.run(program, workers=2, **kwargs)[0]
    assert all(np.array_equal(u, v) for u, v in zip(alone, split))
    with pytest.raises(ValueError, match="workers"):
        spmd.run(program, workers=0, **kwargs)
