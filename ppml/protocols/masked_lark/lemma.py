"""The slides' lemma ("Masked aggregation - Abstract setting") as functions: <v, w> with w
secret to a client C and v known to the helpers, and its corollary, the sum of v_i over a set
S secret to C.

C splits w into additive shares modulo 2^64, one per helper (`share`; the slide's alpha_i +
beta_i = w_i for two helpers); helper k computes <v, s_k> (`inner_product_share`) from its
share alone; by bilinearity the helpers' results add up to <v, w> modulo 2^64.  With w the
indicator chi(S) of a set, the result is sum_{i in S} v_i (`subset_sum_share`).  Each helper's
share is uniform whatever w, so a helper alone learns nothing of w; v may be integers or
fixed-point encodings (ring elements), and the sum is exact modulo 2^64.  Masked LARK's
training is the lemma with w the one-hot label and v the gradients of every label.
"""

from __future__ import annotations

import numpy as np

from ppml.crypto.rng import Stream
from ppml.protocols.masked_lark.reports import split


def share(w: np.ndarray, helpers: int, stream: Stream) -> np.ndarray:
    """C's additive shares of the integer vector(s) ``w`` (int64, last axis the vector):
    (helpers, *w.shape) uint64, uniform from ``stream`` but the last."""
    w = np.asarray(w, dtype=np.int64)
    return split(w.reshape(-1, w.shape[-1]), helpers, stream).reshape((helpers,) + w.shape)


def inner_product_share(mine: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A helper's part of <v, w> from its share ``mine`` of w (n,) and the public ``v`` (n,
    ...) of ring elements (uint64): sum_i mine_i v_i modulo 2^64, shape v.shape[1:]."""
    mine, v = np.asarray(mine, dtype=np.uint64), np.asarray(v, dtype=np.uint64)
    if mine.shape != v.shape[:1]:
        raise ValueError(f"the share has {mine.shape} entries and v has {v.shape[:1]} rows; "
                         "they must match")
    return np.tensordot(mine, v, axes=(0, 0)).astype(np.uint64) if v.ndim > 1 else \
        np.asarray((mine * v).sum(dtype=np.uint64))


def subset_sum_share(mine: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The corollary: a helper's part of sum_{i in S} v_i from its share ``mine`` of chi(S)."""
    return inner_product_share(mine, v)
