"""The SpectralUCB-DS instance: arms are rows of the eigenvector matrix of a movie-graph
Laplacian (Ciucanu et al., LinUCB-DS section 6; Valko, Munos, Kveton, Kocak, ICML 2014).

Section 6: "A matrix of similarities (edge weights) of the graph is used to construct a graph
Laplacian L that is a (K x K) matrix. Then, SpectralUCB computes the eigen-decomposition of L as
Q Lambda_L Q^T, with Q a (K x K) orthogonal matrix whose columns are the eigenvectors [...]. An
arm is a row of Q, and the expected reward value of arm q_i is given by <q_i, theta> [...].
Following the setting in [17], we used a similarity graph over movies from the MovieLens dataset:
the graph contains an edge between movies i and j if the movie j is among the 10 nearest
neighbors of the movie i in the latent space M. As in [17], the weight on all edges is 1", and
"we fixed K = N = d".

Construction: W = the 0/1 k-nearest-neighbour graph of the N movie embeddings (scikit-learn
``kneighbors_graph``, Euclidean, a movie is not its own neighbour), symmetrised by "either is
among the other's k nearest" (max(A, A^T); with N <= k + 1 every other movie is among a movie's
k nearest, so the graph is complete); L = D - W with D the degree matrix; L = Q Lambda Q^T
by ``numpy.linalg.eigh`` (eigenvalues ascending, rounding below 0 clipped to 0), with the
eigenvectors put in a solver-independent basis (`canonical_eigenvectors`: a fixed choice inside
each repeated eigenvalue's eigenspace, each column's first significant entry positive), so that
runs on different machines play the same arms.

Rewards (Valko et al., section 2): the expected rewards over the N nodes form a vector f, written
f = Q alpha; the reward of arm i is x_i . alpha with x_i the i-th row of Q, so alpha = Q^T f.
Here f is the user's expected ratings of the N movies (the `LinearArms` instance's means), so the
spectral instance has the same expected rewards as the linear one, in another basis.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from ppml.checks import check_int
from ppml.data.linear_arms import PAPER_NOISE, LinearArms, load_linear_arms

K_NEIGHBOURS = 10
"""Valko et al. and Ciucanu et al. connect each movie to its 10 nearest neighbours."""
REPEATED = 1e-9
"""Eigenvalues closer than this (relative to the largest) are one repeated eigenvalue."""
SIGNIFICANT = 1e-6
"""An eigenvector's sign makes its first entry above this share of its largest one positive."""
PathLike = Union[str, os.PathLike, None]


def knn_laplacian(embeddings: np.ndarray, k_neighbours: int = K_NEIGHBOURS) -> np.ndarray:
    """L = D - W [N, N] of the symmetrised 0/1 ``k_neighbours``-nearest-neighbour graph of the
    rows of ``embeddings`` [N, d].  With N - 1 <= k every other node is among a node's k
    nearest: the complete graph (the paper's K = N = d = 10 with 10 neighbours)."""
    embeddings = np.asarray(embeddings, dtype=np.float64)
    if embeddings.ndim != 2 or len(embeddings) < 2:
        raise ValueError(f"embeddings must be [N, d] with N >= 2, got shape {embeddings.shape}")
    k_neighbours = check_int("k_neighbours", k_neighbours, 1)
    from sklearn.neighbors import kneighbors_graph   # see ppml/data/__init__.py
    adjacency = kneighbors_graph(embeddings, n_neighbors=min(k_neighbours, len(embeddings) - 1),
                                 mode="connectivity", include_self=False)
    weights = adjacency.maximum(adjacency.T).toarray()
    return np.diag(weights.sum(axis=1)) - weights


def spectral_arms(movie_embeddings: np.ndarray,
                  k_neighbours: int = K_NEIGHBOURS) -> tuple[np.ndarray, np.ndarray]:
    """(Q [N, N], eigenvalues [N]) of the `knn_laplacian` of ``movie_embeddings``: L = Q
    diag(eigenvalues) Q^T, eigenvalues ascending and >= 0; the arms are the rows of Q."""
    eigenvalues, vectors = np.linalg.eigh(knn_laplacian(movie_embeddings, k_neighbours))
    return canonical_eigenvectors(vectors, eigenvalues), np.maximum(eigenvalues, 0.0)


def canonical_eigenvectors(vectors: np.ndarray, eigenvalues: np.ndarray) -> np.ndarray:
    """The eigenvectors (columns, eigenvalues ascending) in a basis that does not depend on the
    eigensolver: within each group of equal eigenvalues (relative gap <= `REPEATED`), the
    eigenvectors of diag(1..N) restricted to that eigenspace (a basis-free operator); then each
    column's sign makes its first significant entry positive (not its largest: symmetric vectors
    have ties in magnitude)."""
    vectors = np.array(vectors, dtype=np.float64)
    size = len(eigenvalues)
    breaks = np.flatnonzero(np.diff(eigenvalues) > REPEATED * max(1.0, abs(eigenvalues[-1])))
    for start, stop in zip(np.r_[0, breaks + 1], np.r_[breaks + 1, size]):
        if stop - start > 1:
            block = vectors[:, start:stop]
            ordering = block.T @ (np.arange(1.0, size + 1)[:, None] * block)
            vectors[:, start:stop] = block @ np.linalg.eigh(ordering)[1]
    magnitude = np.abs(vectors)
    first = np.argmax(magnitude > SIGNIFICANT * magnitude.max(axis=0), axis=0)
    return vectors * np.sign(vectors[first, np.arange(size)])


@dataclass(frozen=True, eq=False)
class SpectralArms(LinearArms):
    """A `LinearArms` whose arms are the rows of Q and theta = alpha = Q^T f; ``eigenvalues`` is
    the spectrum Lambda that SpectralUCB's penalty uses."""

    eigenvalues: np.ndarray = field(kw_only=True)
    """[N] Laplacian eigenvalues, ascending, matching the columns of Q."""

    def __post_init__(self) -> None:
        super().__post_init__()
        eigenvalues = np.array(self.eigenvalues, dtype=np.float64)
        if eigenvalues.shape != (self.d,):
            raise ValueError(f"eigenvalues must have shape ({self.d},), got {eigenvalues.shape}")
        eigenvalues.flags.writeable = False
        object.__setattr__(self, "eigenvalues", eigenvalues)


def load_spectral_arms(name: str = "movielens", *, arms: int, dims: int, user: int = 0,
                       k_neighbours: int = K_NEIGHBOURS, arm_choice: str = "first",
                       seed: int = 0, noise: float = PAPER_NOISE, data_dir: PathLike = None,
                       cache_dir: PathLike = None) -> SpectralArms:
    """The SpectralUCB-DS instance over N = ``arms`` nodes: the `load_linear_arms` instance with
    the same arguments (its movies, in ``dims``-dimensional embeddings, are the graph's nodes;
    its expected ratings are f), re-expressed with arms = rows of Q and theta = Q^T f.  Same
    name, seed and noise, hence the same rewards arm by arm and step by step."""
    linear = load_linear_arms(name, arms=arms, dims=dims, user=user, arm_choice=arm_choice,
                              seed=seed, noise=noise, data_dir=data_dir, cache_dir=cache_dir)
    vectors, eigenvalues = spectral_arms(linear.arms, k_neighbours)
    return SpectralArms(name=linear.name, theta=vectors.T @ linear.means, arms=vectors,
                        item_ids=linear.item_ids, noise=linear.noise, seed=linear.seed,
                        eigenvalues=eigenvalues)
