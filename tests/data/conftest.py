"""Fixtures of the dataset tests: a session cache folder (never ~/.cache) and the data dirs.

MNIST, MovieLens and Jester tests need ``PPML_DATA`` (CI sets it to ../shared/datasets) and are
skipped without it.  PCA on the full MNIST training set and the MovieLens ALS fit run at most
once per session: every test shares the session cache folder, and the first test fills it.
"""

import os
import sys
import types
from pathlib import Path

import pytest

from ppml.data.checksums import DATA_DIR_ENV, clear_verified_cache
from ppml.data.jester import JESTER_FILE, read_matrix

XLS = b"stands for jester-data-1.xls"
"""The bytes of the official sheet in the tests: the fake xlrd opens only these."""


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ppml-cache")


@pytest.fixture(autouse=True)
def _isolated_cache(session_cache, monkeypatch):
    """Every dataset test caches into the session folder, not the user's ~/.cache/ppml."""
    monkeypatch.setenv("PPML_CACHE", str(session_cache))


@pytest.fixture
def no_data_dir(monkeypatch):
    """PPML_DATA unset for this test."""
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)


def _data_dir_with(folder: str, what: str) -> Path:
    """``$PPML_DATA`` if it holds ``folder``; skips the test otherwise, saying why."""
    root = os.environ.get(DATA_DIR_ENV)
    if not root:
        pytest.skip(f"{DATA_DIR_ENV} is not set: {what} tests need the data directory "
                    "(CI sets it to ../shared/datasets)")
    if not (Path(root) / folder).is_dir():
        pytest.skip(f"{DATA_DIR_ENV}={root} has no {folder}/ folder")
    return Path(root)


@pytest.fixture(scope="session")
def mnist_dir() -> Path:
    """The folder holding mnist/ (``$PPML_DATA``); skips the test when it is unset."""
    return _data_dir_with("mnist", "MNIST")


@pytest.fixture(scope="session")
def movielens_dir() -> Path:
    """The folder holding ml-100k/ (``$PPML_DATA``); skips the test when it is unset."""
    return _data_dir_with("ml-100k", "MovieLens")


@pytest.fixture(scope="session")
def jester_dir() -> Path:
    """The folder holding jester/ (``$PPML_DATA``); skips the test when it is unset."""
    return _data_dir_with("jester", "Jester")


@pytest.fixture(scope="session")
def jester_table(jester_dir):
    """The dev copy's Jester matrix [24983, 101] (float64); do not modify it."""
    return read_matrix(jester_dir / JESTER_FILE)


@pytest.fixture
def fake_xlrd(monkeypatch):
    """``install(table)`` puts a fake ``xlrd`` in sys.modules: ``open_workbook(file_contents=XLS)``
    is a workbook whose first sheet holds ``table``'s rows as Python floats (as Excel stores
    them: -7.82 is a double); other contents raise its ``XLRDError``."""
    def install(table):
        rows = table.tolist()
        sheet = types.SimpleNamespace(nrows=len(rows), row_values=lambda row: rows[row])
        fake = types.ModuleType("xlrd")
        fake.XLRDError = type("XLRDError", (Exception,), {})

        def open_workbook(file_contents=None):
            if file_contents != XLS:
                raise fake.XLRDError("Unsupported format, or corrupt file")
            return types.SimpleNamespace(sheet_by_index=[sheet].__getitem__)

        fake.open_workbook = open_workbook
        monkeypatch.setitem(sys.modules, "xlrd", fake)
    return install


@pytest.fixture(scope="session")
def movielens3(movielens_dir, session_cache):
    """The MovieLens ALS embeddings with d = 3 (fitted once per session, then cached)."""
    from ppml.data.movielens import load_movielens_embeddings

    return load_movielens_embeddings(3, data_dir=movielens_dir, cache_dir=session_cache)


@pytest.fixture(scope="session")
def mnist20(mnist_dir, session_cache):
    """MNIST projected on 20 principal components (fitted once per session, then cached)."""
    from ppml.data.mnist import mnist_pca

    return mnist_pca(20, mnist_dir, session_cache)


@pytest.fixture
def fresh_verification():
    """Forget verified files before and after the test, so hashing really happens."""
    clear_verified_cache()
    yield
    clear_verified_cache()
