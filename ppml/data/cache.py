"""On-disk cache of derived arrays (MNIST's PCA projection, k-means centers).

Fitting PCA on MNIST's 60,000 x 784 training images takes seconds and k-means with 1,000 clusters
tens of seconds, while the results are a few MB and depend only on the (checksummed) data files
and a handful of parameters.  They are stored as ``.npz`` files in ``$PPML_CACHE``, else
``$XDG_CACHE_HOME/ppml``, else ``~/.cache/ppml``, under a name that hashes every input, so a
different data file, parameter, scikit-learn version or cache format never reads a stale entry.

Writes are atomic (a hidden temporary file in the same folder, then ``os.replace``): concurrent
sweep jobs may compute the same entry, the last one wins, and no reader sees a partial file.  A
cache that cannot be written (read-only home) only costs the recomputation; an unreadable entry is
recomputed and overwritten.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Callable, Union

import numpy as np

CACHE_ENV = "PPML_CACHE"
"""Environment variable naming the cache folder."""
FORMAT_VERSION = 1
"""Bump when the meaning of a cached array changes: old entries are then ignored."""

_log = logging.getLogger(__name__)


def cache_dir(explicit: Union[str, os.PathLike, None] = None) -> Path:
    """The cache folder: ``explicit``, else ``$PPML_CACHE``, else ``$XDG_CACHE_HOME/ppml`` or
    ``~/.cache/ppml``.  Not created here."""
    if explicit is not None and str(explicit) != "":
        return Path(explicit).expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ppml"


def cache_key(kind: str, **inputs) -> str:
    """A file name for ``kind`` that hashes every input (JSON-able values), the cache format and
    the scikit-learn version."""
    text = json.dumps({"kind": kind, "format": FORMAT_VERSION,
                       "sklearn": version("scikit-learn"), **inputs}, sort_keys=True)
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:20]}.npz"


def cached_arrays(folder: Union[str, os.PathLike, None], name: str,
                  compute: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays stored under ``name`` in the cache folder, computing and storing them on a miss.

    ``compute()`` returns a dict of numpy arrays (numeric, no objects).  The entry is written
    atomically; failure to write is logged and ignored.
    """
    path = cache_dir(folder) / name
    if path.exists():
        try:
            with np.load(path, allow_pickle=False) as stored:
                return {key: stored[key] for key in stored.files}
        except Exception as error:  # a corrupt or foreign file: recompute and overwrite
            _log.warning("ignoring unreadable cache entry %s (%s); recomputing", path, error)
    arrays = compute()
    try:
        _write_atomically(path, arrays)
    except OSError as error:
        _log.warning("could not write cache entry %s (%s); set %s to a writable folder",
                     path, error, CACHE_ENV)
    return arrays


def _write_atomically(path: Path, arrays: dict[str, np.ndarray]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            np.savez(out, **arrays)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
