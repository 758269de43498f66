"""Arms from a K-means clustering, for |A| other than the 10 classes (Hannun et al., section 5).

"To increase the number of arms, we construct a K-means clustering of the dataset and set
|A| = K. We define the rewards to be Bernoulli-distributed with P(r_a = 1) = nu_a. The
probabilities nu_a are Gaussian-kernel values based on the distances from a data point to the
inferred clusters: nu_a ∝ exp(-||c_a - x||^2 / (2 sigma^2)) [...] We set sigma = 1/2."

The base dataset's unit-length contexts (all 1,797 digits, or the 60,000 MNIST-PCA training
images) are clustered with scikit-learn ``KMeans(n_clusters=arms, n_init=1)`` seeded from the
data seed.  "Proportional" is resolved by scaling so that the closest center has mean 1:

    nu_a(x) = exp(-(||c_a - x||^2 - min_b ||c_b - x||^2) / (2 sigma^2))

so the oracle's expected reward is 1 at every step for every |A|, and an average reward is the
fraction of the oracle's reward, comparable across |A| = 10 ... 1000 (docs/data.md says why the
alternatives are not).  Means are computed on demand from the centers: no [T, arms] table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from ppml.checks import check_int
from ppml.data import digits, mnist
from ppml.data.bandit_data import ContextualData, seeded_rng, stream_order
from ppml.data.cache import cache_key, cached_arrays
from ppml.data.checksums import CHECKSUMS

SIGMA = 0.5
BASES = ("digits", "mnist")
PathLike = Union[str, os.PathLike, None]


def kernel_means(x: np.ndarray, centers: np.ndarray, sigma: float = SIGMA) -> np.ndarray:
    """nu [n, arms] for contexts x [n, D]: Gaussian kernel of the distance to each center,
    divided by the kernel of the closest center (which therefore has mean exactly 1)."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    squared = (np.einsum("nd,nd->n", x, x)[:, None] - 2.0 * x @ centers.T
               + np.einsum("ad,ad->a", centers, centers)[None, :])
    squared = np.maximum(squared, 0.0)
    return np.exp(-(squared - squared.min(axis=1, keepdims=True)) / (2.0 * sigma * sigma))


@dataclass(frozen=True, eq=False)
class KernelArmsData(ContextualData):
    """Bernoulli arms whose means are `kernel_means` of the context and the K-means centers."""

    centers: np.ndarray
    """[arms, D] cluster centers c_a (means of unit vectors: length below 1)."""
    sigma: float
    """Kernel width sigma (the paper's 1/2)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._freeze_arm_rows("centers")
        if not self.sigma > 0:
            raise ValueError(f"sigma must be > 0, got {self.sigma}")
        object.__setattr__(self, "sigma", float(self.sigma))

    def mean_rewards_at(self, steps) -> np.ndarray:
        return kernel_means(self.contexts[self._steps(steps)], self.centers, self.sigma)


def kmeans_centers(contexts: np.ndarray, arms: int, data_seed: int) -> np.ndarray:
    """K-means centers [arms, D] of ``contexts`` (scikit-learn KMeans, k-means++ start, one
    initialisation, random state derived from the data seed)."""
    state = int(seeded_rng(data_seed, "kmeans").integers(2**31 - 1))
    from sklearn.cluster import KMeans          # imported here: see ppml/data/__init__.py
    model = KMeans(n_clusters=arms, n_init=1, random_state=state).fit(contexts)
    return model.cluster_centers_.astype(np.float64)


def load_kmeans(base: str = "digits", arms: int = 10, dims: int = 20,
                horizon: Optional[int] = None, data_seed: int = 0, data_dir: PathLike = None,
                *, sigma: float = SIGMA, cache_dir: PathLike = None) -> KernelArmsData:
    """K-means arms over ``base`` ("digits": embedded, or "mnist": the MNIST-PCA training set,
    from ``data_dir`` / ``$PPML_DATA``), named ``kmeans_<base>``.

    ``arms`` (K) is at most the number of base images; the clustering uses all of them whatever
    the horizon, and is cached on disk (``cache_dir`` / ``$PPML_CACHE``) because K = 1000 on
    MNIST takes tens of seconds.  ``horizon`` None is one pass over the base images in an order
    shuffled by ``data_seed``; a longer horizon cycles through re-shuffled passes.
    """
    if base not in BASES:
        raise ValueError(f"base must be one of {', '.join(BASES)}; got {base!r}")
    data_seed = check_int("data_seed", data_seed, 0)
    if base == "digits":
        dims = check_int("dims", dims, 1, digits.DIGITS_PIXELS, "digits images have 8x8 pixels")
        pool = digits.digits_contexts(dims)[0]
        files: dict[str, str] = {}
    else:
        dims = check_int("dims", dims, 1, mnist.PIXELS, "MNIST images have 28x28 pixels")
        pool = mnist.mnist_pca(dims, data_dir, cache_dir).train_contexts
        files = {rel: CHECKSUMS[rel][1] for rel in mnist.FILES["train"]}
    size = len(pool)
    arms = check_int("arms", arms, 1, size, f"K-means needs at most one cluster per {base} image")
    horizon = size if horizon is None else check_int("horizon", horizon, 1)
    key = cache_key("kmeans-centers", base=base, dims=dims, arms=arms, data_seed=data_seed,
                    files=files)
    centers = cached_arrays(cache_dir, key, lambda: {
        "centers": kmeans_centers(pool, arms, data_seed)})["centers"]
    order = stream_order(size, horizon, data_seed)
    return KernelArmsData(name=f"kmeans_{base}", contexts=pool[order], arms=arms,
                          seed=data_seed, source_index=order, centers=centers, sigma=sigma)
