"""PCA projection to unit-length contexts (Hannun et al., section 5: "projecting each digit image
to the first 20 principal components of the dataset, and normalize each resulting vector to have
unit length")."""

from __future__ import annotations

import numpy as np


def fit_pca(pixels: np.ndarray, dims: int) -> PCA:
    """scikit-learn PCA with ``dims`` components fitted on ``pixels`` [n, features] (centred by
    PCA; components' signs fixed by scikit-learn's svd_flip, so the fit is deterministic)."""
    from sklearn.decomposition import PCA      # imported here: see ppml/data/__init__.py
    return PCA(n_components=dims, random_state=0).fit(pixels)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit Euclidean length (float64); a zero row is an error."""
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(f"{int(np.sum(norms == 0))} projected rows are zero and cannot be "
                         "normalised to unit length")
    return x / norms
