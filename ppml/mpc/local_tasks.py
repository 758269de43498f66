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
"""Output elements per held party from which a product's local terms are split over arms:
never, on this machine (docs/private-cb.md, "Party-local work as Ray tasks").

Measured by ``python -m jobs.bench_per_arm`` (2026-11-28 10:18, 2 cores, load 0.4 before): the
local terms c + eps y + a delta of eq. 1's [A, D, D] update, split over 2 workers, took
0.006x to 0.86x the in-process speed at every size from 4,000 to 10^8 elements (|A| = 10 to
10,000, D = 20 and 100; 0.80 s against 0.69 s at the largest), and 0.12x to 0.82x with one
party on each node of a two-node local cluster.  They are memory-bound, and
moving a slice of c to a pinned task and its result back through Ray's object store, then
joining the slices, costs more than the arithmetic it spreads.  A run can still ask for the
split with ``mpc.split_min_elements`` (a machine with more cores and memory bandwidth)."""


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
