"""The dataset sources against the checksum table: every file has a source, every source files."""

import re
from pathlib import Path

from ppml.data.checksums import CHECKSUMS, CONTENT_CHECKSUMS
from ppml.data.download import dataset_files
from ppml.data.sources import SOURCES, download_command, source_of


def test_every_checksummed_file_belongs_to_exactly_one_source():
    owners = {relpath: [s.name for s in SOURCES.values() if relpath in dataset_files(s)]
              for relpath in CHECKSUMS}
    assert all(len(names) == 1 for names in owners.values()), owners
    assert {relpath: source_of(relpath).name for relpath in CHECKSUMS} == \
        {relpath: names[0] for relpath, names in owners.items()}


def test_each_download_yields_dataset_files():
    for source in SOURCES.values():
        files = dataset_files(source)
        assert files, source.name
        for item in source.downloads:
            assert item.archive or f"{source.folder}/{item.name}" in files, item
        assert any(item.archive for item in source.downloads) or \
            sorted(f"{source.folder}/{item.name}" for item in source.downloads) == files


def test_official_urls_and_licences():
    assert [d.url for d in SOURCES["movielens"].downloads] == \
        ["https://files.grouplens.org/datasets/movielens/ml-100k.zip"]
    assert all(d.url.startswith("https://ossci-datasets.s3.amazonaws.com/mnist/")
               for d in SOURCES["mnist"].downloads)
    assert [(d.url, d.sheet) for d in SOURCES["jester"].downloads] == \
        [("https://eigentaste.berkeley.edu/dataset/jester_dataset_1_1.zip", "jester-data-1.xls")]
    assert "pip install 'ppml[jester]'" in SOURCES["jester"].note
    assert "no redistribution" in SOURCES["movielens"].licence


def test_download_command():
    assert download_command("mnist") == "python -m jobs.data download mnist"
    assert download_command("mnist", "/d") == "python -m jobs.data download mnist data_dir=/d"
    assert source_of("elsewhere/file") is None


def test_docs_data_md_lists_the_checksum_table():
    """docs/data.md is the user-facing provenance: its table is the one the loaders verify."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "data.md").read_text()
    rows = re.findall(r"^\| `(\S+)` \| ([\d,]+) \| `([0-9a-f]{64})` \|$", page, re.MULTILINE)
    assert {path: (int(size.replace(",", "")), digest) for path, size, digest in rows} \
        == CHECKSUMS
    assert all(f"`{path}`" in page and f"`{digest}`" in page
               for path, digest in CONTENT_CHECKSUMS.items())
