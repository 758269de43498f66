"""Datasets as contextual bandits: one registry, `load_contextual`, over small loaders.

=================  ==========================================================  ==============
name               what                                                        needs data dir
=================  ==========================================================  ==============
``digits``         scikit-learn digits, PCA to ``dims``, 10 class arms         no (embedded)
``mnist``          MNIST training set, PCA of the training set, 10 class arms  yes
``mnist_test``     the 10,000 MNIST test images, same PCA (held-out set)       yes
``kmeans_digits``  K-means arms (Gaussian-kernel Bernoulli) over digits        no
``kmeans_mnist``   K-means arms over the MNIST-PCA training set                yes
``kmeans``         ``kmeans_mnist`` if ``data_dir`` or ``$PPML_DATA`` is set,  no
                   else ``kmeans_digits`` (the data's ``name`` says which)
``synthetic``      Gaussian unit contexts, linear Bernoulli arms                no
=================  ==========================================================  ==============

Every loader returns a `ContextualData` (ppml.data.bandit_data).

scikit-learn (and SciPy's sparse matrices) are imported inside the functions that use them: a
process that loads no such data, such as most federated parties, starts about 1.5 s sooner.

Fixed-arm (non-contextual) instances have their own loaders:

===========================  =================================================  ==============
loader                       names                                              needs data dir
===========================  =================================================  ==============
`load_linear_arms`           ``movielens`` (ALS embeddings; LinUCB-DS),         movielens
                             ``synthetic``
`load_spectral_arms`         the same in the eigenbasis of a 10-NN movie graph  movielens
                             (SpectralUCB-DS)
`load_bernoulli_arms`        ``movielens``, ``jester`` (per-item like rates;    movielens,
                             Samba), ``synthetic``                              jester
`load_movielens_embeddings`  ALS factorization of ml-100k's u1.base             yes
===========================  =================================================  ==============

See docs/data.md.
"""

from __future__ import annotations

import os
from typing import Optional, Union

from ppml.data.bandit_data import ClassificationData, ContextualData
from ppml.data.bernoulli_items import BERNOULLI_DATASETS, BernoulliArms, load_bernoulli_arms
from ppml.data.cache import CACHE_ENV
from ppml.data.checksums import (CHECKSUMS, DATA_DIR_ENV, ChecksumError, data_dir,
                                 resolve_data_dir, verified_path)
from ppml.data.digits import load_digits
from ppml.data.graph import SpectralArms, load_spectral_arms, spectral_arms
from ppml.data.kmeans_arms import KernelArmsData, load_kmeans
from ppml.data.linear_arms import LINEAR_DATASETS, LinearArms, load_linear_arms
from ppml.data.mnist import MnistPCA, load_mnist, mnist_pca
from ppml.data.movielens import MovieLensEmbeddings, load_movielens_embeddings
from ppml.data.synthetic import LinearArmsData, load_synthetic

PathLike = Union[str, os.PathLike, None]

DEFAULT_DIMS = {"digits": 20, "mnist": 20, "mnist_test": 20, "kmeans": 20, "kmeans_digits": 20,
                "kmeans_mnist": 20, "synthetic": 10}
"""``dims`` when `load_contextual` is given None (20 as in the paper; 10 for synthetic)."""
DATASETS: tuple[str, ...] = tuple(DEFAULT_DIMS)
"""Names `load_contextual` knows."""


def _kmeans_base(data_dir: PathLike) -> str:
    explicit = data_dir is not None and str(data_dir) != ""
    return "mnist" if explicit or os.environ.get(DATA_DIR_ENV) else "digits"


def load_contextual(name: str, *, arms: Optional[int] = 10, dims: Optional[int] = None,
                    horizon: Optional[int] = None, data_seed: int = 0,
                    data_dir: PathLike = None, cache_dir: PathLike = None) -> ContextualData:
    """The dataset ``name`` as a contextual bandit with ``arms`` arms, ``dims``-dimensional
    unit contexts and ``horizon`` steps, reproducible from ``data_seed``.

    None means the dataset's default: ``arms`` 10; ``dims`` `DEFAULT_DIMS`; ``horizon`` one
    pass over the images (1,797 digits, 60,000 MNIST, 10,000 MNIST test) or 1,000 synthetic
    steps.  ``data_dir`` (else ``$PPML_DATA``) is read only by the MNIST-based names;
    ``cache_dir`` (else ``$PPML_CACHE``, else ``~/.cache/ppml``) holds PCA and K-means results.
    Unknown names and out-of-range parameters raise ValueError naming the parameter and bound.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(DATASETS)}")
    arms = 10 if arms is None else arms
    dims = DEFAULT_DIMS[name] if dims is None else dims
    if name == "digits":
        return load_digits(dims=dims, horizon=horizon, data_seed=data_seed, arms=arms)
    if name in ("mnist", "mnist_test"):
        return load_mnist(dims=dims, horizon=horizon, data_seed=data_seed, data_dir=data_dir,
                          split="train" if name == "mnist" else "test", arms=arms,
                          cache_dir=cache_dir)
    if name.startswith("kmeans"):
        base = _kmeans_base(data_dir) if name == "kmeans" else name.removeprefix("kmeans_")
        return load_kmeans(base=base, arms=arms, dims=dims, horizon=horizon,
                           data_seed=data_seed, data_dir=data_dir, cache_dir=cache_dir)
    return load_synthetic(arms=arms, dims=dims,
                          horizon=1000 if horizon is None else horizon, data_seed=data_seed)


__all__ = [
    "BERNOULLI_DATASETS", "CACHE_ENV", "CHECKSUMS", "DATASETS", "DATA_DIR_ENV", "DEFAULT_DIMS",
    "LINEAR_DATASETS", "BernoulliArms", "ChecksumError", "ClassificationData", "ContextualData",
    "KernelArmsData", "LinearArms", "LinearArmsData", "MnistPCA", "MovieLensEmbeddings",
    "SpectralArms", "data_dir", "load_bernoulli_arms", "load_contextual", "load_digits",
    "load_kmeans", "load_linear_arms", "load_mnist", "load_movielens_embeddings",
    "load_spectral_arms", "load_synthetic", "mnist_pca", "resolve_data_dir", "spectral_arms",
    "verified_path",
]
