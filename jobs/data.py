"""The datasets a run reads from the data directory: list, download and verify them.

    python -m jobs.data list                # each dataset: present/missing/corrupt, folder, licence
    python -m jobs.data download movielens  # fetch, verify, keep (prints the licence first)
    python -m jobs.data verify              # check every file present; exit 1 on a mismatch

Each takes ``data_dir=<folder>`` (else ``$PPML_DATA``, as every run does) and ``progress=false``
(no bar: list and verify hash every file, download shows its bytes); ``download`` also
takes ``mirror=<URL>``, a base URL (``https://``, ``http://`` or ``file://``) that holds the
download files under their own names, instead of the official sources.  Sources, licences and
checksums: ppml/data/sources.py, ppml/data/checksums.py and docs/data.md.
"""

from __future__ import annotations

import http.client
import sys
from pathlib import Path

from jobs.cli import InputError, options as parse_options, run_command
from ppml.data.checksums import DATA_DIR_ENV, ChecksumError, locate_data_dir
from ppml.data.download import NoSourceError, dataset_files, download, status
from ppml.data.sources import SOURCES, Source, download_command
from ppml.runtime import progress

DEFAULTS = {"list": {"data_dir": None}, "verify": {"data_dir": None},
            "download": {"data_dir": None, "mirror": None}}
"""Each command's ``key=value`` options (a key another command takes is refused)."""
USAGE = ("usage: python -m jobs.data list|verify [data_dir=...] | "
         "python -m jobs.data download <name>... [data_dir=...] [mirror=...]; "
         f"datasets: {', '.join(SOURCES)}")


def data_folder(data_dir) -> tuple[Path, str]:
    """The data directory and where it came from; an `InputError` when neither ``data_dir``
    nor ``$PPML_DATA`` names one."""
    folder, origin = locate_data_dir(data_dir)
    if folder is None:
        raise InputError(f"no data directory: pass data_dir=<folder> or set the {DATA_DIR_ENV} "
                         "environment variable")
    return folder, origin


def checked(folder: Path) -> list:
    """(source, state, files) of every dataset in ``folder`` (`status`), one step of a bar each:
    every file is hashed, seconds for a large one."""
    return [(source, *status(source, folder))
            for source in progress.track(list(SOURCES.values()), "checking datasets",
                                         unit="dataset")]


def list_datasets(folder: Path, origin: str) -> None:
    """Print each dataset's state, folder and licence, and what differs in a corrupt file."""
    print(f"data directory: {folder} (from {origin})", flush=True)
    for source, state, files in checked(folder):
        print(f"{source.name:<10} {state:<10} {folder / source.folder}  licence: "
              f"{source.licence}")
        for entry in files:
            if entry.state == "corrupt":
                print(f"    {entry.relpath}: {entry.detail}")
        if state != "present":
            print(f"    get it: {download_command(source.name, _data_dir_arg(folder, origin))}")


def verify(folder: Path, origin: str) -> int:
    """Check every dataset file present; 1 if one is corrupt or a dataset incomplete, else 0."""
    if not folder.is_dir():
        raise InputError(f"data directory {str(folder)!r} (from {origin}) does not exist")
    failed = False
    for source, state, files in checked(folder):
        present = sum(entry.state != "missing" for entry in files)
        print(f"{source.name}: {state} ({present} of {len(files)} files in "
              f"{folder / source.folder})")
        for entry in files:
            if entry.state != "ok" and state != "missing":
                print(f"    {entry.relpath}: {entry.state} {entry.detail}".rstrip())
        failed |= state in ("corrupt", "incomplete")
    return 1 if failed else 0


def fetch(source: Source, folder: Path, origin: str, mirror, shown: bool = True) -> None:
    """Print the dataset's terms, then download and verify it (SystemExit on a failure);
    ``shown``: a bar of the bytes."""
    print(f"{source.title}: {source.homepage}\nlicence: {source.licence}\n"
          f"downloading means accepting these terms; into {folder / source.folder} "
          f"(data directory from {origin})" + (f"\nnote: {source.note}" if source.note else ""),
          flush=True)
    try:
        fetched = download(source, folder, mirror=mirror, progress=shown)
    except (ChecksumError, NoSourceError, ImportError, OSError,
            http.client.HTTPException) as error:
        raise SystemExit(f"download {source.name} failed: {error}") from None
    files = len(dataset_files(source))
    print(f"{source.name}: fetched {len(fetched)} of {files} files; all {files} verified")


def _data_dir_arg(folder: Path, origin: str):
    """``data_dir`` for a printed command: None when the folder came from ``$PPML_DATA``."""
    return None if origin != "data_dir" else str(folder)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in ("list", "download", "verify"):
        raise InputError(USAGE)
    command, rest = argv[0], argv[1:]
    names = [arg for arg in rest if "=" not in arg]
    options = parse_options(DEFAULTS[command], [arg for arg in rest if "=" in arg])
    if (command == "download") != bool(names):
        raise InputError(USAGE)
    unknown = [name for name in names if name not in SOURCES]
    if unknown:
        raise InputError(f"unknown dataset {unknown[0]!r}; datasets: {', '.join(SOURCES)}")
    folder, origin = data_folder(options["data_dir"])
    with progress.showing(options["progress"]):
        if command == "list":
            list_datasets(folder, origin)
            return 0
        if command == "verify":
            return verify(folder, origin)
        for name in names:
            fetch(SOURCES[name], folder, origin, options["mirror"], options["progress"])
    return 0


if __name__ == "__main__":
    run_command(main)
