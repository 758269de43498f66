"""Jester's ratings matrix as files: the zip ppml reads, the official Excel sheet, and the content
checksum that identifies the matrix whatever its encoding.

Jester dataset 1 part 1 (Goldberg, Roeder, Gupta and Perkins, Information Retrieval 4(2), 2001;
https://eigentaste.berkeley.edu/dataset/) is a 24,983 x 101 matrix: column 0 the number of jokes
the user rated (36..100), columns 1..100 the ratings of jokes 1..100 in [-10, 10] with two
decimals, 99 = not rated.  The official archive, ``jester_dataset_1_1.zip``, holds it as an Excel
97 sheet, ``jester-data-1.xls``; ppml reads ``jester/jester-data-1.zip``, a zip of one member,
``jester-data-1.csv``, the same matrix as comma-separated text.  `write_matrix` writes that text
exactly as the mirrors' copy has it, but the zip around it cannot be reproduced byte for byte
(timestamps, compression), so a file rebuilt from the official sheet is verified by its content:
`matrix_sha256`, the SHA-256 of a canonical form of the matrix (docs/data.md).

This module imports nothing from ppml: `ppml.data.checksums` uses it to check content.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
import zlib
from typing import Union

import numpy as np

JESTER_FILE = "jester/jester-data-1.zip"
"""The file the loader reads, relative to the data directory."""
JESTER_MEMBER = "jester-data-1.csv"
"""Its one member."""
JESTER_SHEET = "jester-data-1.xls"
"""The member of the official archive that holds the matrix as an Excel sheet."""
JESTER_USERS = 24_983
JESTER_JOKES = 100
PathLike = Union[str, os.PathLike]


def check_shape(table: np.ndarray, what: str) -> None:
    """ValueError naming ``what`` unless ``table`` is 24,983 x 101."""
    if table.shape != (JESTER_USERS, JESTER_JOKES + 1):
        raise ValueError(f"{what} must be {JESTER_USERS} x {JESTER_JOKES + 1}, got "
                         f"{' x '.join(map(str, table.shape))}")


def hundredths(table: np.ndarray) -> np.ndarray:
    """``round(100 x)`` of every cell as little-endian int16: the matrix in its canonical form
    (two decimals are exact in it; a double such as -7.82 and the text ``-7.82`` give -782).
    ValueError for a cell that is not a finite number in [-327.67, 327.67]."""
    values = np.round(np.asarray(table, dtype=np.float64) * 100)
    if not np.all(np.abs(values) <= np.iinfo(np.int16).max):
        raise ValueError("the matrix must hold finite numbers in [-327.67, 327.67]")
    return values.astype("<i2")


def matrix_sha256(table: np.ndarray) -> str:
    """Hex SHA-256 of the matrix: of its shape as ASCII text, ``b"24983,101\\n"``, followed by
    its `hundredths` row by row (C order), two little-endian bytes each."""
    shape = ",".join(map(str, np.shape(table))) + "\n"
    return hashlib.sha256(shape.encode("ascii") + hundredths(table).tobytes()).hexdigest()


def read_matrix(path: PathLike) -> np.ndarray:
    """The matrix in the zip at ``path`` (float64, [rows, columns]).  ValueError when the file is
    not a zip whose member ``jester-data-1.csv`` holds comma-separated numbers."""
    try:
        with zipfile.ZipFile(path) as archive, archive.open(JESTER_MEMBER) as member:
            return np.loadtxt(io.TextIOWrapper(member, encoding="ascii"), delimiter=",",
                              ndmin=2)
    except (zipfile.BadZipFile, zlib.error, EOFError, KeyError, ValueError) as error:
        raise ValueError(f"not a zip of {JESTER_MEMBER} holding comma-separated numbers "
                         f"({error})") from None


def write_matrix(table: np.ndarray, path: PathLike) -> None:
    """Write ``table`` as `read_matrix` reads it: a deflated zip of one member
    ``jester-data-1.csv``, a line per row, the cells at two decimals without trailing zeros
    (``-7.82``, ``-0.1``, ``99``), as the mirrors' copy spells them."""
    cents = hundredths(table).astype(np.int64)
    low = int(cents.min())
    spelled = np.array([f"{value / 100:.2f}".rstrip("0").rstrip(".")
                        for value in range(low, int(cents.max()) + 1)], dtype=object)
    text = "".join(",".join(row) + "\n" for row in spelled[cents - low].tolist())
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(JESTER_MEMBER, text)


def xlrd_module():
    """The ``xlrd`` module (imported here only: reading the official sheet is its one use).
    ImportError saying how to install it when it is missing."""
    try:
        import xlrd
    except ImportError:
        raise ImportError(f"reading Jester's official archive ({JESTER_SHEET}, an Excel 97 "
                          "sheet) needs xlrd: pip install 'ppml[jester]'; or download "
                          "jester-data-1.zip from a mirror (mirror=<URL>)") from None
    return xlrd


def matrix_from_xls(contents: bytes) -> np.ndarray:
    """The matrix on the first sheet of the Excel 97 workbook ``contents`` (float64), checked to
    be 24,983 x 101.  ImportError without xlrd (`xlrd_module`); ValueError for a file that is
    not such a workbook or a sheet that is not that table of numbers."""
    xlrd = xlrd_module()
    try:
        sheet = xlrd.open_workbook(file_contents=contents).sheet_by_index(0)
    except xlrd.XLRDError as error:
        raise ValueError(f"not an Excel 97 workbook ({error})") from None
    try:
        table = np.array([sheet.row_values(row) for row in range(sheet.nrows)],
                         dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"its first sheet is not a table of numbers ({error})") from None
    check_shape(table, "its first sheet")
    return table
