"""Fetch a dataset into the data directory, verify it, and tell what a data directory holds.

`download` fetches each of a `Source`'s downloads (from its official URL, or from ``mirror``: any
base URL, ``http(s)://`` or ``file://``, holding the files under their names), extracts the
dataset's files from an archive, and checks every file against `CHECKSUMS` before it takes its
name.  Everything is written to a ``.part`` name beside its destination and renamed only once
verified, so a failed, refused or interrupted (Ctrl-C) download leaves no half file behind, and a
file that was already there and correct is not fetched again.  A file whose sum differs is
removed and refused with a `ChecksumError` naming the file and both digests.  A download with a
``sheet`` (Jester's official archive) is rebuilt from that Excel sheet instead: its matrix is
checked against `CONTENT_CHECKSUMS` before anything is written (ppml.data.jester).

`status` and `dataset_files` answer ``python -m jobs.data list`` and ``verify``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from tqdm.auto import tqdm

from ppml.data.checksums import CHECKSUMS, ChecksumError, content_mismatch, file_mismatch
from ppml.data.jester import matrix_from_xls, write_matrix, xlrd_module
from ppml.data.sources import Download, Source

_CHUNK = 1 << 16
TIMEOUT_S = 60
"""How long a connection may stay silent before the download fails."""


class NoSourceError(RuntimeError):
    """A dataset file has no official URL and no mirror was given."""


def dataset_files(source: Source) -> list[str]:
    """The dataset's files: the `CHECKSUMS` entries below its folder, sorted."""
    return sorted(path for path in CHECKSUMS if path.startswith(source.folder + "/"))


@dataclass(frozen=True)
class FileStatus:
    """One dataset file in a data directory."""

    relpath: str
    state: str
    """``ok``, ``missing`` or ``corrupt``."""
    detail: str = ""
    """For ``corrupt``: what differs (sizes and digests)."""


def file_status(folder: Path, relpath: str) -> FileStatus:
    """Whether ``folder / relpath`` is there and matches its checksum (hashing it)."""
    path = folder / relpath
    if not path.is_file():
        return FileStatus(relpath, "missing")
    mismatch = file_mismatch(path, relpath)
    return FileStatus(relpath, "ok") if mismatch is None else \
        FileStatus(relpath, "corrupt", mismatch)


def status(source: Source, folder: Path) -> tuple[str, list[FileStatus]]:
    """The dataset's state in the data directory ``folder`` and each file's: ``present`` (every
    file there and correct), ``missing`` (none there), ``corrupt`` (a file there with the wrong
    sum) or ``incomplete`` (some files missing, none corrupt)."""
    files = [file_status(folder, relpath) for relpath in dataset_files(source)]
    states = {entry.state for entry in files}
    if "corrupt" in states:
        return "corrupt", files
    if states == {"ok"}:
        return "present", files
    return ("missing" if states == {"missing"} else "incomplete"), files


def download_url(item: Download, mirror: Optional[str]) -> Optional[str]:
    """Where ``item`` is fetched from: ``<mirror>/<name>`` with a mirror, else its official URL
    (None if it has none)."""
    return f"{mirror.rstrip('/')}/{item.name}" if mirror else item.url


@contextlib.contextmanager
def _part_file(destination: Path) -> Iterator[Path]:
    """A ``.part`` path beside ``destination``, removed on the way out whatever happens (once
    renamed into place it no longer exists)."""
    part = destination.with_name(f".{destination.name}.part")
    try:
        yield part
    finally:
        part.unlink(missing_ok=True)


def _fetch(url: str, part: Path, label: str, progress: bool) -> None:
    """Copy ``url`` to ``part`` with a progress bar (bytes, total from Content-Length)."""
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, open(part, "wb") as out, \
            tqdm(total=int(response.headers.get("Content-Length") or 0) or None, unit="B",
                 unit_scale=True, unit_divisor=1024, desc=label, disable=not progress) as bar:
        for chunk in iter(lambda: response.read(_CHUNK), b""):
            out.write(chunk)
            bar.update(len(chunk))


def _install(part: Path, destination: Path, relpath: str, origin: str) -> None:
    """Rename ``part`` to ``destination`` if it matches ``relpath``'s checksum; else remove it and
    raise `ChecksumError` naming the file, where it came from, and both digests."""
    mismatch = file_mismatch(part, relpath)
    if mismatch is not None:
        part.unlink()
        raise ChecksumError(f"downloaded {relpath!r} (from {origin}) {mismatch}; refused and "
                            "removed: the source serves another version or a damaged file")
    os.replace(part, destination)


def download(source: Source, folder: Path, *, mirror: Optional[str] = None,
             progress: bool = True) -> list[str]:
    """Fetch ``source`` into the data directory ``folder`` (created if needed), verify every
    file, and return the files fetched (those already present and correct are kept).

    Raises `NoSourceError` for a file with no official URL and no ``mirror`` (the message is the
    source's note), ImportError naming ``pip install 'ppml[jester]'`` for a ``sheet`` to read
    without xlrd (before anything is fetched), `ChecksumError` for a file that does not match
    (removed), and urllib's errors (OSError; http.client.HTTPException for a cut-off transfer)
    for a source that cannot be reached.
    """
    wanted = [relpath for relpath in dataset_files(source)
              if file_status(folder, relpath).state != "ok"]
    plan = []
    for item in source.downloads:
        members = wanted if item.archive else \
            [relpath for relpath in wanted if relpath == f"{source.folder}/{item.name}"]
        if members and download_url(item, mirror) is None:
            raise NoSourceError(f"{source.name}: {item.name} has no official download URL: "
                                f"{source.note}")
        sheet = "" if mirror else item.sheet
        if members and sheet:
            xlrd_module()
        if members:
            plan.append((item, download_url(item, mirror), members, sheet))
    target = folder / source.folder
    target.mkdir(parents=True, exist_ok=True)
    fetched = []
    for item, url, members, sheet in plan:
        name = url.rsplit("/", 1)[-1]
        with _part_file(target / name) as part:
            _fetch(url, part, name, progress)
            if sheet:
                _rebuild(part, folder, members[0], sheet, url)
            elif not item.archive:
                _install(part, folder / members[0], members[0], url)
            else:
                _extract(part, folder, members, url)
        fetched += members
    return fetched


def _extract(archive: Path, folder: Path, members: list[str], url: str) -> None:
    """Each of ``members`` (paths inside the zip, the same below ``folder``) out of ``archive``,
    each verified before it takes its name."""
    with zipfile.ZipFile(archive) as bundle:
        names = set(bundle.namelist())
        for relpath in members:
            if relpath not in names:
                raise ChecksumError(f"archive {url} has no member {relpath!r}: the source "
                                    "serves another version")
            with _part_file(folder / relpath) as part:
                with bundle.open(relpath) as member, open(part, "wb") as out:
                    shutil.copyfileobj(member, out)
                _install(part, folder / relpath, relpath, f"{url}, member {relpath}")


def _rebuild(archive: Path, folder: Path, relpath: str, sheet: str, url: str) -> None:
    """``relpath`` rebuilt from the Excel sheet ``sheet`` in the zip ``archive``: the matrix's
    shape and content checksum are checked before anything is written (a mismatch is a
    `ChecksumError` and leaves nothing), then the file written is verified as a loader will."""
    origin = f"{url}, member {sheet}"
    try:
        with zipfile.ZipFile(archive) as bundle:
            table = matrix_from_xls(bundle.read(sheet))
        mismatch = content_mismatch(table, relpath)
    except (zipfile.BadZipFile, KeyError, ValueError) as error:
        raise ChecksumError(f"{origin} cannot be read as {relpath!r}: {error}; refused, nothing "
                            "written: the source serves another version") from None
    if mismatch is not None:
        raise ChecksumError(f"downloaded {relpath!r} (from {origin}) {mismatch}; refused, "
                            "nothing written: the source serves another version")
    with _part_file(folder / relpath) as part:
        write_matrix(table, part)
        _install(part, folder / relpath, relpath, f"{origin}, rebuilt")
