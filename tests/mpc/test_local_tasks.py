"""Per-arm Ray tasks give bit-identical products, and only from the crossover size on."""

import subprocess
import sys

import numpy as np
import pytest

from ppml.mpc import local_tasks
from ppml.runtime import spmd
from tests.jobs.readme import child_env


def program(ctx, a=None, b=None):
    x, y = ctx.share(a, owner=0), ctx.share(b, owner=1)
    return (x * y).reveal(), (x[:, :, None] * y[:, None, :]).reveal()


def splits(calls: list) -> list:
    """(rows, workers) of each `over_rows` call."""
    return [args[3:5] for args in calls]


@pytest.mark.ray
def test_split_products_are_identical(ray_cluster, spy):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (2, 6, 5))
    kwargs = dict(parties=2, seed=3, inputs={0: {"a": a}, 1: {"b": b}})
    alone = spmd.run(program, **kwargs)[0]
    calls = spy(local_tasks, "over_rows")
    spread = spmd.run(program, workers=2, split_min_elements=30, **kwargs)[0]
    assert splits(calls) == [(6, 2), (6, 2)]      # the [6, 5] product and the [6, 5, 5] one
    assert all(np.array_equal(u, v) for u, v in zip(alone, spread))
    calls.clear()
    spread = spmd.run(program, workers=2, split_min_elements=31, **kwargs)[0]
    assert splits(calls) == [(6, 2)]              # [6, 5]: 30 elements, below 31
    assert all(np.array_equal(u, v) for u, v in zip(alone, spread))
    with pytest.raises(ValueError, match="workers"):
        spmd.run(program, workers=0, **kwargs)
    with pytest.raises(ValueError, match="split_min_elements must be an integer >= 1"):
        spmd.run(program, workers=2, split_min_elements=0, **kwargs)


def test_below_the_crossover_workers_never_import_ray():
    """With workers=2 and the measured crossover, eq. 1's [10, 20, 20] product stays in the
    party's process: Ray is never imported (a fresh interpreter, so no other test's import
    counts)."""
    code = ("import sys, numpy as np\n"
            "from ppml.mpc.local import local_context\n"
            "ctx = local_context(2, seed=1, workers=2)\n"
            "rng = np.random.default_rng(0)\n"
            "x = ctx.share(rng.uniform(-1, 1, (10, 20)), owner=0)\n"
            "y = ctx.share(rng.uniform(-1, 1, (10, 20)), owner=1)\n"
            "(x[:, :, None] * y[:, None, :]).reveal()\n"
            "assert 'ray' not in sys.modules, 'Ray was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert 10 * 20 * 20 < local_tasks.SPLIT_MIN_ELEMENTS
