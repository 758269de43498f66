"""Where each downloaded dataset comes from: its official source, licence and download files.

One `Source` per dataset a loader reads from the data directory (MNIST, MovieLens 100K,
Jester).  A source names the folder its files live in (``<data_dir>/<folder>/``); which files
those are, and their sizes and SHA-256 sums, is `ppml.data.checksums.CHECKSUMS`, the one table
the loaders verify against.  This module adds only what a download needs: the URLs and what each
fetched file is (one dataset file, or a zip archive holding them), and what a user must be told
first (the licence).  ``python -m jobs.data`` lists, downloads and verifies them
(`ppml.data.download`); docs/data.md is the user-facing provenance.

This module imports nothing from ppml, so `ppml.data.checksums` can name the download command in
its errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Download:
    """One file fetched from the network for a dataset."""

    name: str
    """The file's name on the server and on a mirror (``ml-100k.zip``)."""
    url: Optional[str]
    """Its official URL; None when no official server has this exact file (only a mirror
    can serve it)."""
    archive: bool = False
    """True: a zip whose members ``<folder>/<file>`` are the dataset's files (extracted, the
    archive then deleted).  False: the file itself is the dataset file ``<folder>/<name>``."""
    sheet: str = ""
    """Non-empty: ``url`` serves not this file but a zip whose member ``sheet`` holds the same
    matrix as an Excel sheet; the download rebuilds the file from it (ppml.data.jester) and
    verifies it by content (`ppml.data.checksums.CONTENT_CHECKSUMS`).  A mirror serves the file
    itself."""


@dataclass(frozen=True)
class Source:
    """A dataset as a user obtains it."""

    name: str
    """What ``python -m jobs.data download <name>`` takes."""
    folder: str
    """Its folder below the data directory; its files are the CHECKSUMS entries below it."""
    title: str
    homepage: str
    licence: str
    """One line: the terms a user accepts by downloading (printed before every download)."""
    downloads: tuple[Download, ...]
    note: str = ""
    """What a user must know about the official source (printed before a download, and when a
    download has no URL)."""


MNIST_MIRROR = "https://ossci-datasets.s3.amazonaws.com/mnist/"
"""PyTorch's mirror of LeCun's files (yann.lecun.com is often unavailable); the same bytes."""

SOURCES: dict[str, Source] = {source.name: source for source in (
    Source(
        name="mnist", folder="mnist", title="MNIST handwritten digits",
        homepage="http://yann.lecun.com/exdb/mnist/",
        licence="Creative Commons Attribution-Share Alike 3.0 (Yann LeCun and Corinna Cortes)",
        downloads=tuple(Download(name, MNIST_MIRROR + name) for name in (
            "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
            "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"))),
    Source(
        name="movielens", folder="ml-100k", title="MovieLens 100K (GroupLens Research)",
        homepage="https://grouplens.org/datasets/movielens/100k/",
        licence="research use only; no redistribution without permission; no commercial use; "
                "cite F. M. Harper and J. A. Konstan, ACM TiiS 5(4), 2015 (terms: ml-100k/README)",
        downloads=(Download("ml-100k.zip",
                            "https://files.grouplens.org/datasets/movielens/ml-100k.zip",
                            archive=True),)),
    Source(
        name="jester", folder="jester",
        title="Jester dataset 1, part 1 (Ken Goldberg, UC Berkeley)",
        homepage="https://eigentaste.berkeley.edu/dataset/",
        licence="research use with acknowledgement; cite K. Goldberg, T. Roeder, D. Gupta and "
                "C. Perkins, Information Retrieval 4(2), 2001",
        downloads=(Download("jester-data-1.zip",
                            "https://eigentaste.berkeley.edu/dataset/jester_dataset_1_1.zip",
                            sheet="jester-data-1.xls"),),
        note="the official archive, jester_dataset_1_1.zip, holds this matrix (24,983 x 101) "
             "as an Excel sheet, jester-data-1.xls; the download reads it with xlrd (pip "
             "install 'ppml[jester]') and writes jester/jester-data-1.zip, a zip of one member "
             "jester-data-1.csv, the same matrix as comma-separated text.  Its bytes differ "
             "from the mirrors' copy (the zip's timestamps and compression), so it is verified "
             "by its content: the SHA-256 of the matrix (docs/data.md).  A mirror "
             "(mirror=<URL of the folder holding jester-data-1.zip>) serves that zip itself"),
)}
"""Every dataset ``python -m jobs.data`` knows, by name."""


def source_of(relpath: str) -> Optional[Source]:
    """The source whose folder holds the dataset file ``relpath`` (``ml-100k/u.data``), if any."""
    folder = relpath.split("/", 1)[0]
    return next((source for source in SOURCES.values() if source.folder == folder), None)


def download_command(name: str, data_dir: Optional[str] = None) -> str:
    """The command that downloads dataset ``name``, with ``data_dir=...`` when it is given."""
    return f"python -m jobs.data download {name}" + (f" data_dir={data_dir}" if data_dir else "")
