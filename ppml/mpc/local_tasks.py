"""A party's own arithmetic split over the arm axis into Ray tasks.

Hannun et al., section 5: the weight updates of Algorithm 1 are "trivially parallelizable over
arms".  When a context has ``workers > 1`` and an elementwise product is large, the local part
of Beaver's multiplication (no communication) runs in ``workers`` slices of the
leading logical axis, the first in this process and the others as Ray tasks on this party's own
node (`ppml.parallel.run_batches`); the result is bit-identical to the in-process
computation.  Small products stay in process: a task costs about a millisecond.
"""

from __future__ import annotations

import numpy as np

from ppml.parallel import run_batches

#: products with fewer output elements per held party stay in process
MIN_ELEMENTS = 1 << 17


def split_over_arms(ctx, fn, arrays: list, out_shape: tuple) -> np.ndarray:
    """``fn(*arrays)`` (arrays with a leading held-party or unit axis), in Ray tasks when worth it.

    Arrays whose logical axis 0 has the output's length are sliced; the others (broadcast or of
    lower rank) go whole to every task.
    """
    rows = out_shape[0] if out_shape else 0
    if ctx.workers <= 1 or rows < 2 or int(np.prod(out_shape)) < MIN_ELEMENTS:
        return fn(*arrays)
    ndim = len(out_shape)
    sliced = [a.ndim - 1 == ndim and a.shape[1] == rows for a in arrays]
    bounds = np.linspace(0, rows, min(ctx.workers, rows) + 1).astype(int)
    batches = [[a[:, lo:hi] if s else a for a, s in zip(arrays, sliced)]
               for lo, hi in zip(bounds[:-1], bounds[1:])]
    return np.concatenate(run_batches(fn, batches, ctx.workers), axis=1)
