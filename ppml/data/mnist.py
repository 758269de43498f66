"""MNIST as a 10-armed contextual bandit (Hannun et al., section 5).

"We reduce the data dimensionality by projecting each digit image to the first 20 principal
components of the dataset, and normalize each resulting vector to have unit length. We perform a
single sweep through the 60,000 images in the MNIST training set. [...] select one of 10 arms
(digit classes). The reward is 1 if the selected arm corresponds to the correct digit class."

The four idx files are read from ``<data_dir>/mnist/`` after their SHA-256 sums are verified.
PCA (scikit-learn, ``dims`` components, default 20) is fitted on the 60,000 training images with
pixels scaled to [0, 1]; the 10,000 test images are projected with the same fit: they are the
held-out set of the membership-inference attack (section 5, "Membership inference attacks").
The projections are cached on disk (ppml.data.cache), keyed by ``dims`` and the files' sums.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from ppml.checks import check_equal, check_int
from ppml.data.bandit_data import ClassificationData, stream_order
from ppml.data.cache import cache_key, cached_arrays
from ppml.data.checksums import CHECKSUMS, verified_path
from ppml.data.projection import fit_pca, unit_rows

CLASSES = 10
PIXELS = 28 * 28
DEFAULT_DIMS = 20
FILES = {
    "train": ("mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz"),
    "test": ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"),
}
SIZES = {"train": 60_000, "test": 10_000}
_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

PathLike = Union[str, os.PathLike, None]


def read_idx(path: Union[str, os.PathLike]) -> np.ndarray:
    """Parse a gzip-compressed idx file (LeCun's format: two zero bytes, a type code, the number
    of dimensions, big-endian int32 sizes, then the data) into a numpy array."""
    with gzip.open(path, "rb") as handle:
        raw = handle.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{str(path)!r} is not an idx file (magic {raw[:4].hex()})")
    ndim = raw[3]
    shape = tuple(int(n) for n in np.frombuffer(raw, dtype=">i4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    offset = 4 + 4 * ndim
    if len(raw) - offset != int(np.prod(shape)) * dtype.itemsize:
        raise ValueError(f"{str(path)!r}: header says {shape} but holds "
                         f"{len(raw) - offset} bytes of data")
    return np.frombuffer(raw, dtype=dtype, offset=offset).reshape(shape)


@dataclass(frozen=True, eq=False)
class MnistPCA:
    """MNIST projected onto the training set's first ``dims`` principal components, unit rows."""

    train_contexts: np.ndarray   # [60000, dims] float64
    train_labels: np.ndarray     # [60000] int64
    test_contexts: np.ndarray    # [10000, dims] float64
    test_labels: np.ndarray      # [10000] int64
    mean: np.ndarray             # [784] pixel mean of the training set (pixels in [0, 1])
    components: np.ndarray       # [dims, 784] principal axes

    @property
    def dims(self) -> int:
        return self.train_contexts.shape[1]


def mnist_pca(dims: int = DEFAULT_DIMS, data_dir: PathLike = None,
              cache_dir: PathLike = None) -> MnistPCA:
    """MNIST train and test sets projected with PCA fitted on the 60,000 training images.

    Verifies the four files' checksums first (ppml.data.checksums; ``data_dir`` None reads
    ``$PPML_DATA``).  The projection is read from the cache folder (``cache_dir``, else
    ``$PPML_CACHE``, else ``~/.cache/ppml``) or computed (a few seconds) and stored there.
    """
    dims = check_int("dims", dims, 1, PIXELS, "MNIST images have 28x28 pixels")
    paths = {split: tuple(verified_path(data_dir, rel) for rel in FILES[split]) for split in FILES}
    labels = {split: _labels(paths[split][1], split) for split in FILES}
    sums = {rel: CHECKSUMS[rel][1] for split in FILES for rel in FILES[split]}

    def compute() -> dict[str, np.ndarray]:
        train = _pixels(paths["train"][0], "train")
        pca = fit_pca(train, dims)
        projected = {"train_contexts": unit_rows(pca.transform(train))}
        del train
        test = _pixels(paths["test"][0], "test")
        projected["test_contexts"] = unit_rows(pca.transform(test))
        return {**projected, "mean": pca.mean_, "components": pca.components_}

    arrays = cached_arrays(cache_dir, cache_key("mnist-pca", dims=dims, scaling="pixels/255",
                                                files=sums), compute)
    for array in arrays.values():
        array.flags.writeable = False
    return MnistPCA(train_contexts=arrays["train_contexts"], train_labels=labels["train"],
                    test_contexts=arrays["test_contexts"], test_labels=labels["test"],
                    mean=arrays["mean"], components=arrays["components"])


def load_mnist(dims: int = DEFAULT_DIMS, horizon: Optional[int] = None, data_seed: int = 0,
               data_dir: PathLike = None, *, split: str = "train", arms: int = CLASSES,
               cache_dir: PathLike = None) -> ClassificationData:
    """The MNIST stream of ``split`` ("train": 60,000 images, named ``mnist``; "test": the
    10,000 held-out images, named ``mnist_test``), shuffled by ``data_seed``.

    ``horizon`` None is one sweep (the paper's setting).  A longer horizon cycles through
    re-shuffled passes, as for digits.  ``source_index`` gives the image shown at each step, so
    the membership-inference attack knows which training images a run has seen.
    """
    if split not in FILES:
        raise ValueError(f"split must be one of {', '.join(FILES)}; got {split!r}")
    check_equal("arms", arms, CLASSES, "MNIST has one arm per class; use the kmeans_mnist "
                "dataset for other numbers of arms")
    data_seed = check_int("data_seed", data_seed, 0)
    size = SIZES[split]
    horizon = size if horizon is None else check_int("horizon", horizon, 1)
    data = mnist_pca(dims, data_dir, cache_dir)
    contexts = data.train_contexts if split == "train" else data.test_contexts
    labels = data.train_labels if split == "train" else data.test_labels
    order = stream_order(size, horizon, data_seed)
    return ClassificationData(name="mnist" if split == "train" else "mnist_test",
                              contexts=contexts[order], arms=CLASSES, seed=data_seed,
                              source_index=order, labels=labels[order])


def _labels(path, split: str) -> np.ndarray:
    labels = read_idx(path).astype(np.int64)
    if labels.shape != (SIZES[split],) or labels.min() < 0 or labels.max() >= CLASSES:
        raise ValueError(f"{str(path)!r}: expected {SIZES[split]} labels in 0..9")
    labels.flags.writeable = False
    return labels


def _pixels(path, split: str) -> np.ndarray:
    images = read_idx(path)
    if images.shape != (SIZES[split], 28, 28):
        raise ValueError(f"{str(path)!r}: expected {SIZES[split]} images of 28x28, "
                         f"got {images.shape}")
    return images.reshape(len(images), PIXELS) / 255.0
