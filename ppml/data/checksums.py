"""Where datasets live and how they are verified: the data directory and the SHA-256 table.

Datasets are never committed to the repository (MovieLens forbids redistribution); a user fetches
them with ``python -m jobs.data download <name>`` (ppml.data.download, docs/data.md).  A loader is
given a data directory, explicitly or through the ``PPML_DATA`` environment variable, and checks
every file it reads against the size and SHA-256 sum recorded here.  The table is embedded in the
code because the data directory can be anywhere: the project, not the folder, carries the
expected sums.  It is the one table: the downloader verifies against it too.

A file that ``download`` rebuilds from another encoding (Jester: from the official Excel sheet)
cannot match the bytes recorded, so `CONTENT_CHECKSUMS` records beside them what it must hold: a
file whose bytes differ is parsed and accepted if its content's checksum matches (the byte
SHA-256 stays the fast path).

Hashing MNIST's 10 MB takes tens of milliseconds, so a verified file is remembered in-process by
(path, mtime, size, inode) and is not hashed again until one of those changes.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Optional, Union

import numpy as np

from ppml.data.jester import matrix_sha256, read_matrix
from ppml.data.sources import download_command, source_of

DATA_DIR_ENV = "PPML_DATA"
"""Environment variable naming the data directory when no ``data_dir`` is passed."""

CHECKSUMS: dict[str, tuple[int, str]] = {
    # relative path (POSIX): (bytes, sha256), as in docs/data.md
    "mnist/train-images-idx3-ubyte.gz":
        (9719438, "0b367032e93c5d0cea0925647cfdb18614af8ee15f83e6f2fc2ad904a6835971"),
    "mnist/train-labels-idx1-ubyte.gz":
        (28857, "1787548bbe0bff1ec2ecdc0ef292b02df999e2d1a6002d27500982c652b17203"),
    "mnist/t10k-images-idx3-ubyte.gz":
        (1616508, "1a1a05eab793c14bb050b398624a11b0ffd1a2953baed553b1b9bd079e2a20be"),
    "mnist/t10k-labels-idx1-ubyte.gz":
        (4517, "b91679a0acfe4ba0e50a2437a903084cba1f5f92592b016a25a7dfd00455798b"),
    "ml-100k/u.data":
        (1979173, "06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490"),
    "ml-100k/u.item":
        (236344, "553841ebc7de3a0fd0d6b62a204ea30c1e651aacfb2814c7a6584ac52f2c5701"),
    "ml-100k/u.user":
        (22628, "f120e114da2e8cf314fd28f99417c94ae9ddf1cb6db8ce0e4b5995d40e90e62c"),
    "ml-100k/u.genre":
        (202, "9757e0d3e6b298159a80dd48eaf938114690e911e39af97a76949ef1663610bb"),
    "ml-100k/u.info":
        (36, "5b0a40b2e47a729ee6203063f6dcf8790c2e63f5a18663e6ee318a72c5f3c27b"),
    "ml-100k/u.occupation":
        (193, "cd5fbec9afe345d993a62fc7817df1a4a9079c4feb267b3118763b8fd942137d"),
    "ml-100k/README":
        (6906, "ff710cfcffd4bc9c148179014c950a4c5351adb1fdf2c8ae4a94795db0ce2638"),
    "jester/jester-data-1.zip":
        (3400621, "4adf783a1e03bd3be063315cb6e0a064fe63e983fd289d01b8e401a8e6c41e5f"),
}

CONTENT_CHECKSUMS: dict[str, str] = {
    # relative path: SHA-256 of the matrix the file holds (ppml.data.jester.matrix_sha256 of
    # read_matrix), as in docs/data.md; accepted when the bytes differ from CHECKSUMS'
    "jester/jester-data-1.zip":
        "723c681a8e7b403b9ba63791008e778b6cc7a7ee0312d28b32dae47979322d7a",
}

FROM_ENV = f"the {DATA_DIR_ENV} environment variable"
"""How errors name a data directory that came from ``$PPML_DATA``."""
HOW_TO_FIX = (f"set the {DATA_DIR_ENV} environment variable or pass data_dir=... to the folder "
              "that holds the datasets (see docs/data.md)")

_CHUNK = 1 << 20
_verified: dict[Path, tuple[int, int, int]] = {}
_verified_lock = threading.Lock()


class ChecksumError(ValueError):
    """A dataset file exists but its size or SHA-256 sum differs from the embedded table."""


def locate_data_dir(explicit: Union[str, os.PathLike, None] = None
                    ) -> tuple[Optional[Path], str]:
    """(folder, where it came from): ``explicit`` (``"data_dir"``) if given, else ``$PPML_DATA``
    (`FROM_ENV`), else (None, ``"nowhere"``).  The folder need not exist.

    A run's config copies ``$PPML_DATA`` into its ``data_dir`` (so that the run records the folder
    it read; ppml.experiments.config.load_config), so an explicit folder equal to ``$PPML_DATA``
    is reported as coming from the environment variable: that is where the user set it.
    """
    environment = os.environ.get(DATA_DIR_ENV)
    if explicit is not None and str(explicit) != "":
        return (Path(explicit).expanduser(),
                FROM_ENV if str(explicit) == environment else "data_dir")
    if environment:
        return Path(environment).expanduser(), FROM_ENV
    return None, "nowhere"


def resolve_data_dir(explicit: Union[str, os.PathLike, None] = None) -> Path:
    """The data directory: ``explicit`` if given, else ``$PPML_DATA``; it must exist.

    Raises FileNotFoundError naming the parameter (``data_dir=...`` or ``PPML_DATA``) when neither
    is set or the folder does not exist.
    """
    folder, source = locate_data_dir(explicit)
    if folder is None:
        raise FileNotFoundError(
            f"no data directory: data_dir is not given and {DATA_DIR_ENV} is not set; "
            f"{HOW_TO_FIX}")
    if not folder.is_dir():
        raise FileNotFoundError(
            f"data directory {str(folder)!r} (from {source}) does not exist or is not a folder; "
            f"{HOW_TO_FIX}")
    return folder


data_dir = resolve_data_dir
"""``data_dir(explicit=None) -> Path``: alias of `resolve_data_dir` (loaders take a ``data_dir``
argument, which would shadow a function of that name)."""


def sha256_file(path: Union[str, os.PathLike]) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def content_mismatch(table: np.ndarray, relpath: str) -> Optional[str]:
    """None if the matrix ``table`` has ``relpath``'s content checksum in `CONTENT_CHECKSUMS`;
    else ``"has content SHA-256 <actual>, expected content SHA-256 <expected>"``.  ValueError
    for a matrix with no canonical form (`ppml.data.jester.hundredths`)."""
    expected = CONTENT_CHECKSUMS[relpath]
    actual = matrix_sha256(table)
    if actual == expected:
        return None
    return f"has content SHA-256 {actual}, expected content SHA-256 {expected}"


def file_mismatch(path: Union[str, os.PathLike], relpath: str) -> Optional[str]:
    """None if the file at ``path`` matches the size and SHA-256 sum of ``relpath`` in
    `CHECKSUMS`, or differs but holds the content of ``relpath``'s `CONTENT_CHECKSUMS` entry;
    else what differs: ``"has <n> bytes and SHA-256 <actual>, expected <m> bytes and SHA-256
    <expected>"`` (the sum is computed even when the size already differs, so the error can name
    both digests), then for a file with a content checksum ``"; as a matrix it has content
    SHA-256 <actual>, expected content SHA-256 <expected>"`` (or why it cannot be read)."""
    size, expected = CHECKSUMS[relpath]
    actual_size = os.stat(path).st_size
    actual = sha256_file(path)
    if actual_size == size and actual == expected:
        return None
    difference = (f"has {actual_size} bytes and SHA-256 {actual}, expected {size} bytes and "
                  f"SHA-256 {expected}")
    if relpath not in CONTENT_CHECKSUMS:
        return difference
    try:
        content = content_mismatch(read_matrix(path), relpath)
    except ValueError as error:
        content = f"cannot be read: {error}"
    return None if content is None else f"{difference}; as a matrix it {content}"


def _how_to_get(relpath: str, folder: Optional[Path], source: str) -> str:
    """The fix for a missing or wrong ``relpath``: its download command, with ``data_dir=...``
    unless the folder came from ``$PPML_DATA``, then the general advice."""
    dataset = source_of(relpath)
    if dataset is None:
        return HOW_TO_FIX
    if folder is None:
        return (f"download it with `{download_command(dataset.name, '<folder>')}`, then "
                f"{HOW_TO_FIX}")
    command = download_command(dataset.name, None if source == FROM_ENV else str(folder))
    return f"download it with `{command}`, or {HOW_TO_FIX}"


def verified_path(data_dir: Union[str, os.PathLike, None], relpath: str) -> Path:
    """``data_dir / relpath`` after checking that it exists and matches the embedded size and sum.

    ``data_dir`` None reads ``$PPML_DATA`` (`locate_data_dir`).  Raises ValueError for a path
    that has no embedded checksum, FileNotFoundError for a missing file or data directory and
    `ChecksumError` (a ValueError) for a wrong size or sum; each message names the file, the
    folder looked in and where that folder came from (``data_dir`` or ``PPML_DATA``), and the
    ``python -m jobs.data download <name>`` command that fetches it.  A file that passed is not
    hashed again in this process while its mtime, size and inode are unchanged.
    """
    if relpath not in CHECKSUMS:
        raise ValueError(f"no embedded checksum for {relpath!r}; known files: "
                         f"{', '.join(sorted(CHECKSUMS))}")
    folder, source = locate_data_dir(data_dir)
    if folder is None:
        raise FileNotFoundError(
            f"dataset file {relpath!r} is needed but there is no data directory: data_dir is "
            f"not given and {DATA_DIR_ENV} is not set; {_how_to_get(relpath, folder, source)}")
    path = folder / relpath
    try:
        stat = path.stat()
    except FileNotFoundError:
        where = (f"{str(path)!r} does not exist (data directory {str(folder)!r}, from {source})"
                 if folder.is_dir() else
                 f"the data directory {str(folder)!r} (from {source}) does not exist")
        raise FileNotFoundError(f"dataset file {relpath!r} is missing: {where}; "
                                f"{_how_to_get(relpath, folder, source)}") from None
    key = path.resolve()
    stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    with _verified_lock:
        if _verified.get(key) == stamp:
            return path
    mismatch = file_mismatch(path, relpath)
    if mismatch is not None:
        raise ChecksumError(
            f"dataset file {str(path)!r} {mismatch} for {relpath!r}: the file is truncated, "
            f"corrupt or another version; {_how_to_get(relpath, folder, source)}")
    with _verified_lock:
        _verified[key] = stamp
    return path


def clear_verified_cache() -> None:
    """Forget which files were verified in this process (the next load hashes them again)."""
    with _verified_lock:
        _verified.clear()
