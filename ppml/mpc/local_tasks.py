"""A party's own arithmetic split over the arm axis into Ray tasks, when it is large enough.

Hannun et al., section 5: the weight updates of Algorithm 1 are "trivially parallelizable over
arms".  When a context has ``workers > 1`` and an elementwise product has at least
``ctx.split_min_elements`` output elements per held party (`SPLIT_MIN_ELEMENTS` unless the run
sets ``mpc.split_min_elements``), the local part of Beaver's multiplication (no communication)
runs in ``workers`` slices of the leading logical axis, the first in this process and the others
as Ray tasks on this party's own node (`ppml.parallel.over_rows`); the result is bit-identical
to the in-process computation.  Smaller products stay in process.
"""

from __future__ import annotations

import numpy as np

from ppml.parallel import over_rows, workers_for

SPLIT_MIN_ELEMENTS = 1 << 62
"""Output elements per held party from which a product's local terms are split over arms: for
now never (docs/private-cb.md, "Party-local work as Ray tasks").

The one measurement on this machine so far is of whole runs: with the earlier threshold of 2^17,
|A| = 1000, D = 20, P = 2 (eq. 1's update 400,000 elements) took 11.4 s online with workers=2
against 2.8 s with workers=1.  The local terms c + eps y + a delta are memory-bound, and moving
a slice of c to a pinned task and the result back through Ray's object store costs more than
the arithmetic it spreads.  The crossover by size is measured by ``python -m jobs.bench_per_arm``
(|A| = 10 to 10,000, D = 20 to 100, one and two nodes); set this to the ``work`` from which it
reports that the split pays, if it does.  A run can ask for the split with
``mpc.split_min_elements``."""


def split_over_arms(ctx, fn, arrays: list, out_shape: tuple) -> np.ndarray:
    """``fn(*arrays)`` (arrays with a leading held-party or unit axis), in Ray tasks when worth it.

    Arrays whose logical axis 0 has the output's length are sliced; the others (broadcast or of
    lower rank) go whole to every task.
    """
    rows = out_shape[0] if out_shape else 0
    workers = workers_for(int(np.prod(out_shape)), ctx.workers, ctx.split_min_elements)
    if workers == 1 or rows < 2:
        return fn(*arrays)
    ndim = len(out_shape)
    sliced = [a.ndim - 1 == ndim and a.shape[1] == rows for a in arrays]
    return np.concatenate(over_rows(fn, arrays, sliced, rows, workers, axis=1), axis=1)
