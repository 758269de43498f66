"""The embedded default dataset: scikit-learn's ``load_digits()`` as a 10-armed bandit.

The same construction as Hannun et al. (section 5) use for MNIST, on the 1,797 8x8 digit images
that ship with scikit-learn (BSD-3), so runs on a fresh machine need no data directory: pixels
scaled to [0, 1], projected onto the first ``dims`` principal components (scikit-learn PCA fitted
on all 1,797 images), each projection normalised to unit length; 10 arms, reward 1 for the
correct class.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from ppml.checks import check_equal, check_int
from ppml.data.bandit_data import ClassificationData, stream_order
from ppml.data.projection import fit_pca, unit_rows

DIGITS_IMAGES = 1797
DIGITS_PIXELS = 64
CLASSES = 10
DEFAULT_DIMS = 20


@lru_cache(maxsize=8)
def digits_contexts(dims: int = DEFAULT_DIMS) -> tuple[np.ndarray, np.ndarray]:
    """All 1,797 digits in scikit-learn's order: (contexts [1797, dims] unit rows, labels [1797]).

    Cached in-process per ``dims`` (read-only arrays)."""
    dims = check_int("dims", dims, 1, DIGITS_PIXELS, "digits images have 8x8 pixels")
    from sklearn.datasets import load_digits as sklearn_digits   # see ppml/data/__init__.py
    bunch = sklearn_digits()
    pixels = bunch.data / 16.0
    contexts = unit_rows(fit_pca(pixels, dims).transform(pixels))
    labels = bunch.target.astype(np.int64)
    for array in (contexts, labels):
        array.flags.writeable = False
    return contexts, labels


def load_digits(dims: int = DEFAULT_DIMS, horizon: Optional[int] = None, data_seed: int = 0,
                arms: int = CLASSES) -> ClassificationData:
    """The digits stream: T = ``horizon`` steps (default one pass, 1,797) in an order shuffled by
    ``data_seed``.

    A horizon above 1,797 cycles through the images in passes, each pass re-shuffled, so an image
    is shown again only after all others were shown in the same pass.  ``dims`` is at most 64 (the
    pixel count); ``arms`` must be 10 (one per class; use ``kmeans_digits`` for other |A|).
    """
    check_equal("arms", arms, CLASSES, "digits has one arm per class; use the kmeans_digits "
                "dataset for other numbers of arms")
    data_seed = check_int("data_seed", data_seed, 0)
    horizon = DIGITS_IMAGES if horizon is None else check_int("horizon", horizon, 1)
    contexts, labels = digits_contexts(check_int("dims", dims, 1, DIGITS_PIXELS,
                                                 "digits images have 8x8 pixels"))
    order = stream_order(DIGITS_IMAGES, horizon, data_seed)
    return ClassificationData(name="digits", contexts=contexts[order], arms=CLASSES,
                              seed=data_seed, source_index=order, labels=labels[order])
