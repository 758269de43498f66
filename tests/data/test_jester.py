"""Jester's matrix files: the canonical form and its checksum, the zip the loader reads, and the
official Excel sheet read through a fake xlrd (xlrd is optional and this machine has none).  The
tests on the real matrix need PPML_DATA (skipped without it)."""

import hashlib
import sys
import zipfile

import numpy as np
import pytest

from ppml.data.checksums import CONTENT_CHECKSUMS
from ppml.data.jester import (JESTER_FILE, JESTER_MEMBER, hundredths, matrix_from_xls,
                              matrix_sha256, read_matrix, write_matrix)
from tests.data.conftest import XLS


def test_canonical_form_is_hundredths_as_int16_after_the_shape():
    table = np.array([[74.0, -7.82, 99.0], [36.0, -0.1, 10.0]])
    assert hundredths(table).tolist() == [[7400, -782, 9900], [3600, -10, 1000]]
    assert hundredths(table).dtype == np.dtype("<i2")
    expected = hashlib.sha256(b"2,3\n" + np.array([7400, -782, 9900, 3600, -10, 1000],
                                                  dtype="<i2").tobytes()).hexdigest()
    assert matrix_sha256(table) == expected
    assert matrix_sha256(table.T) != expected              # the shape is part of the content
    assert matrix_sha256(np.array([[float("-7.82")]])) == matrix_sha256(np.array([[-782 / 100]]))
    for bad in (np.nan, np.inf, 400.0):
        with pytest.raises(ValueError, match=r"finite numbers in \[-327\.67, 327\.67\]"):
            matrix_sha256(np.array([[bad]]))


def test_write_then_read_round_trips(tmp_path):
    table = np.array([[3.0, -7.82, 99.0, 0.0], [2.0, 10.0, -0.1, 99.0]])
    write_matrix(table, tmp_path / "m.zip")
    with zipfile.ZipFile(tmp_path / "m.zip") as archive:
        assert archive.namelist() == [JESTER_MEMBER]
        assert archive.read(JESTER_MEMBER) == b"3,-7.82,99,0\n2,10,-0.1,99\n"
    assert np.array_equal(read_matrix(tmp_path / "m.zip"), table)


def test_read_matrix_refuses_what_is_not_the_zip(tmp_path):
    (tmp_path / "junk.zip").write_bytes(b"junk")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("other.csv", "1,2\n")
    for name in ("junk.zip", "other.zip"):
        with pytest.raises(ValueError, match=f"not a zip of {JESTER_MEMBER}"):
            read_matrix(tmp_path / name)


def test_the_recorded_content_checksum_is_the_dev_copys(jester_table):
    assert matrix_sha256(jester_table) == CONTENT_CHECKSUMS[JESTER_FILE]


def test_matrix_from_xls_refuses_what_is_not_the_matrix(fake_xlrd):
    fake_xlrd(np.zeros((3, 101)))
    with pytest.raises(ValueError, match=r"not an Excel 97 workbook \(Unsupported format"):
        matrix_from_xls(b"PK\x03\x04 an xlsx")
    with pytest.raises(ValueError, match="its first sheet must be 24983 x 101, got 3 x 101"):
        matrix_from_xls(XLS)
    fake_xlrd(np.array([[1.0, 2.0], ["", 4.0]], dtype=object))      # an empty cell
    with pytest.raises(ValueError, match="its first sheet is not a table of numbers"):
        matrix_from_xls(XLS)


def test_missing_xlrd_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "xlrd", None)
    with pytest.raises(ImportError, match=r"needs xlrd: pip install 'ppml\[jester\]'"):
        matrix_from_xls(XLS)
