"""The downloader on fake datasets served from a temporary folder (http on 127.0.0.1 and file://).

A fake `Source` is built directly (the seam: `download` takes the source, and a source its URLs);
its files' sums are added to the public CHECKSUMS table for the test, as the loaders' tests do.
Jester's official archive is a local zip holding stand-in bytes that a fake xlrd reads as the
dev copy's matrix (those tests need PPML_DATA).
"""

import dataclasses
import hashlib
import io
import sys
import urllib.request
import zipfile

import numpy as np
import pytest

from ppml.data.bernoulli_items import jester_counts
from ppml.data.checksums import CHECKSUMS, CONTENT_CHECKSUMS, ChecksumError
from ppml.data.download import NoSourceError, download, status
from ppml.data.jester import JESTER_FILE, JESTER_MEMBER, JESTER_SHEET
from ppml.data.sources import SOURCES, Download, Source
from tests.data.conftest import XLS
from tests.data.serve import serve

FILES = {"fake/a.txt": b"first fake dataset file\n" * 200,
         "fake/b.bin": bytes(range(256)) * 64}


@pytest.fixture
def fake_checksums(monkeypatch):
    for relpath, content in FILES.items():
        monkeypatch.setitem(CHECKSUMS, relpath,
                            (len(content), hashlib.sha256(content).hexdigest()))


@pytest.fixture
def server_dir(tmp_path):
    """The served folder: fake.zip (both files under fake/) and the two files by name."""
    folder = tmp_path / "server"
    folder.mkdir()
    with zipfile.ZipFile(folder / "fake.zip", "w") as archive:
        for relpath, content in FILES.items():
            archive.writestr(relpath, content)
        archive.writestr("fake/extra.txt", b"not a dataset file")
    for relpath, content in FILES.items():
        (folder / relpath.split("/")[1]).write_bytes(content)
    return folder


def fake_source(base: str, archive: bool) -> Source:
    downloads = (Download("fake.zip", base + "fake.zip", archive=True),) if archive else \
        tuple(Download(name, base + name) for name in ("a.txt", "b.bin"))
    return Source(name="fake", folder="fake", title="a fake dataset", homepage=base,
                  licence="test terms", downloads=downloads, note="no official source")


def leftovers(folder):
    return sorted(path.name for path in folder.rglob("*") if path.name.endswith(".part"))


@pytest.mark.parametrize("archive", [True, False])
def test_download_over_http_verifies_and_keeps_only_the_dataset_files(
        server_dir, tmp_path, fake_checksums, archive):
    data = tmp_path / "data"
    with serve(server_dir) as base:
        assert download(fake_source(base, archive), data, progress=False) == sorted(FILES)
    assert sorted(p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file()) \
        == sorted(FILES)
    assert all((data / relpath).read_bytes() == content for relpath, content in FILES.items())
    assert status(fake_source("", archive), data)[0] == "present"


def test_download_from_file_urls_and_a_second_run_fetches_nothing(
        server_dir, tmp_path, fake_checksums):
    source = fake_source(server_dir.as_uri() + "/", archive=True)
    assert download(source, tmp_path, progress=False) == sorted(FILES)
    (server_dir / "fake.zip").unlink()                     # present files are not fetched again
    assert download(source, tmp_path, progress=False) == []


def test_mirror_replaces_the_official_urls(server_dir, tmp_path, fake_checksums):
    source = fake_source("http://unreachable.invalid/", archive=False)
    fetched = download(source, tmp_path, mirror=server_dir.as_uri(), progress=False)
    assert fetched == sorted(FILES)


def test_checksum_mismatch_is_refused_named_and_removed(server_dir, tmp_path, fake_checksums):
    tampered = bytearray(FILES["fake/b.bin"])
    tampered[7] ^= 1
    (server_dir / "b.bin").write_bytes(bytes(tampered))
    expected = hashlib.sha256(FILES["fake/b.bin"]).hexdigest()
    actual = hashlib.sha256(bytes(tampered)).hexdigest()
    with serve(server_dir) as base, pytest.raises(ChecksumError) as error:
        download(fake_source(base, archive=False), tmp_path, progress=False)
    message = str(error.value)
    assert "'fake/b.bin'" in message and base + "b.bin" in message
    assert f"SHA-256 {actual}, expected" in message and f"SHA-256 {expected}" in message
    assert not (tmp_path / "fake/b.bin").exists()
    assert leftovers(tmp_path) == []
    assert (tmp_path / "fake/a.txt").exists()              # the good file fetched before stays


def test_a_corrupt_archive_member_is_refused_and_nothing_half_written(
        server_dir, tmp_path, fake_checksums):
    with zipfile.ZipFile(server_dir / "fake.zip", "w") as archive:
        archive.writestr("fake/a.txt", FILES["fake/a.txt"][:-1])
        archive.writestr("fake/b.bin", FILES["fake/b.bin"])
    with pytest.raises(ChecksumError, match=r"fake\.zip, member fake/a\.txt"):
        download(fake_source(server_dir.as_uri() + "/", True), tmp_path, progress=False)
    assert not (tmp_path / "fake/a.txt").exists()
    assert sorted(p.name for p in (tmp_path / "fake").iterdir()) == []


def test_interrupted_download_leaves_no_file(server_dir, tmp_path, fake_checksums, monkeypatch):
    """Ctrl-C in the middle of a transfer: the partial file is removed, nothing takes a name."""
    real_urlopen = urllib.request.urlopen

    class Interrupted(io.RawIOBase):
        def __init__(self, response):
            self.response, self.headers, self.calls = response, response.headers, 0

        def read(self, size=-1):
            self.calls += 1
            if self.calls > 1:
                raise KeyboardInterrupt
            return self.response.read(10)

        def __exit__(self, *exc):
            self.response.close()

    monkeypatch.setattr(urllib.request, "urlopen",
                        lambda url, timeout: Interrupted(real_urlopen(url, timeout=timeout)))
    with pytest.raises(KeyboardInterrupt):
        download(fake_source(server_dir.as_uri() + "/", False), tmp_path, progress=False)
    assert list((tmp_path / "fake").iterdir()) == []


def test_no_official_url_without_a_mirror_says_why(tmp_path, fake_checksums):
    source = Source(name="fake", folder="fake", title="t", homepage="h", licence="l",
                    downloads=(Download("fake.zip", None, archive=True),),
                    note="the official archive is an Excel file")
    with pytest.raises(NoSourceError, match="fake.zip has no official download URL: the "
                                            "official archive is an Excel file"):
        download(source, tmp_path, progress=False)
    assert not (tmp_path / "fake").exists()


def test_progress_bar_is_shown(server_dir, tmp_path, fake_checksums, capsys):
    with serve(server_dir) as base:
        download(fake_source(base, archive=True), tmp_path)
    err = capsys.readouterr().err
    assert "fake.zip" in err and "100%" in err


def test_status_present_missing_incomplete_corrupt(tmp_path, fake_checksums):
    source = fake_source("", archive=False)
    assert status(source, tmp_path)[0] == "missing"
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake/a.txt").write_bytes(FILES["fake/a.txt"])
    assert status(source, tmp_path)[0] == "incomplete"
    (tmp_path / "fake/b.bin").write_bytes(b"wrong")
    state, files = status(source, tmp_path)
    assert state == "corrupt"
    assert [(f.relpath, f.state) for f in files] == [("fake/a.txt", "ok"),
                                                     ("fake/b.bin", "corrupt")]
    assert "has 5 bytes" in files[1].detail


@pytest.fixture
def official_jester(tmp_path) -> Source:
    """Jester's source with its official archive (holding `XLS` as jester-data-1.xls) served from
    a local file."""
    archive = tmp_path / "server" / "jester_dataset_1_1.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(JESTER_SHEET, XLS)
    item = dataclasses.replace(SOURCES["jester"].downloads[0], url=archive.as_uri())
    return dataclasses.replace(SOURCES["jester"], downloads=(item,))


def test_jester_is_rebuilt_from_the_official_sheet_and_loads(
        official_jester, jester_dir, jester_table, fake_xlrd, tmp_path, fresh_verification):
    fake_xlrd(jester_table)
    data = tmp_path / "data"
    assert download(official_jester, data, progress=False) == [JESTER_FILE]
    assert sorted(p.name for p in (data / "jester").iterdir()) == ["jester-data-1.zip"]
    with zipfile.ZipFile(data / JESTER_FILE) as ours, \
            zipfile.ZipFile(jester_dir / JESTER_FILE) as theirs:   # the CSV text, byte for byte
        assert ours.read(JESTER_MEMBER) == theirs.read(JESTER_MEMBER)
    ours, dev = jester_counts(4.5, data), jester_counts(4.5, jester_dir)
    assert np.array_equal(ours.liked, dev.liked) and np.array_equal(ours.rated, dev.rated)


def test_jester_with_one_rating_altered_is_refused_and_nothing_written(
        official_jester, jester_table, fake_xlrd, tmp_path):
    altered = jester_table.copy()
    altered[0, 1] = -7.81                                     # -7.82 in the dev copy
    fake_xlrd(altered)
    data = tmp_path / "data"
    with pytest.raises(ChecksumError, match=r"downloaded 'jester/jester-data-1\.zip' \(from "
                                            r"file:.*jester_dataset_1_1\.zip, member "
                                            r"jester-data-1\.xls\) has content SHA-256 \w{64}, "
                       rf"expected content SHA-256 {CONTENT_CHECKSUMS[JESTER_FILE]}; refused"):
        download(official_jester, data, progress=False)
    assert list((data / "jester").iterdir()) == []


def test_jester_without_xlrd_says_how_to_install_it_before_fetching(
        official_jester, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "xlrd", None)
    with pytest.raises(ImportError, match=r"needs xlrd: pip install 'ppml\[jester\]'"):
        download(official_jester, tmp_path, progress=False)
    assert not (tmp_path / "jester").exists()


def test_jester_from_a_mirror_needs_no_xlrd(jester_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "xlrd", None)
    assert download(SOURCES["jester"], tmp_path, mirror=(jester_dir / "jester").as_uri(),
                    progress=False) == [JESTER_FILE]
    assert (tmp_path / JESTER_FILE).read_bytes() == (jester_dir / JESTER_FILE).read_bytes()
