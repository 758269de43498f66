import hashlib
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from ppml.data import (checksums, load_bernoulli_arms, load_contextual, load_kmeans,
                       load_linear_arms, load_movielens_embeddings, load_spectral_arms)
from ppml.data.checksums import (CHECKSUMS, CONTENT_CHECKSUMS, ChecksumError, data_dir,
                                 resolve_data_dir, verified_path)
from ppml.data.conversions import load_conversions
from ppml.data.jester import JESTER_FILE, matrix_sha256, write_matrix
from ppml.experiments.config import load_config

FAKE = "fake/blob.bin"
CONTENT = b"ppml dataset bytes\n" * 1000


@pytest.fixture
def fake_dir(tmp_path, monkeypatch, fresh_verification):
    """A data dir holding fake/blob.bin, registered in the checksum table for this test."""
    (tmp_path / "fake").mkdir()
    (tmp_path / FAKE).write_bytes(CONTENT)
    monkeypatch.setitem(CHECKSUMS, FAKE, (len(CONTENT), hashlib.sha256(CONTENT).hexdigest()))
    return tmp_path


def test_table_matches_provenance():
    provenance = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "PROVENANCE.md"
    if os.environ.get("PPML_DATA"):
        provenance = Path(os.environ["PPML_DATA"]) / "PROVENANCE.md"
    if not provenance.exists():
        pytest.skip(f"no PROVENANCE.md at {provenance}")
    rows = re.findall(r"^\| (\S+) \| (\d+) \| ([0-9a-f]{64}) \|$", provenance.read_text(),
                      re.MULTILINE)
    assert {path: (int(size), digest) for path, size, digest in rows} == CHECKSUMS


def test_data_dir_explicit_then_environment(tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("PPML_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    assert data_dir(other) == other
    assert data_dir(str(other)) == other
    assert resolve_data_dir is data_dir


def test_no_data_dir_names_both_ways_to_set_it(no_data_dir):
    with pytest.raises(FileNotFoundError, match=r"PPML_DATA.*data_dir=") as error:
        data_dir()
    assert "not set" in str(error.value)


def test_nonexistent_data_dir_names_folder_and_source(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match=r"nowhere.*from data_dir"):
        data_dir(missing)
    monkeypatch.setenv("PPML_DATA", str(missing))
    with pytest.raises(FileNotFoundError,
                       match=r"nowhere.*from the PPML_DATA environment variable"):
        data_dir()


def test_a_run_config_holding_ppml_data_reports_the_environment_variable(
        monkeypatch, compose_run_config):
    """A run copies $PPML_DATA into its data_dir; the error still says where the user set it."""
    monkeypatch.setenv("PPML_DATA", "/nonexistent")
    config = load_config(compose_run_config())
    assert config.data_dir == "/nonexistent"
    with pytest.raises(FileNotFoundError) as error:
        verified_path(config.data_dir, "ml-100k/u.data")
    message = str(error.value)
    assert "'/nonexistent' (from the PPML_DATA environment variable) does not exist" in message
    assert "from data_dir" not in message
    assert "`python -m jobs.data download movielens`" in message


def test_missing_dataset_file_names_folder_and_download_command(tmp_path, monkeypatch):
    monkeypatch.delenv("PPML_DATA", raising=False)
    with pytest.raises(FileNotFoundError) as error:
        verified_path(tmp_path, "jester/jester-data-1.zip")
    assert (f"{str(tmp_path / 'jester/jester-data-1.zip')!r} does not exist (data directory "
            f"{str(tmp_path)!r}, from data_dir)") in str(error.value)
    assert f"`python -m jobs.data download jester data_dir={tmp_path}`" in str(error.value)
    with pytest.raises(FileNotFoundError,
                       match=r"no data directory.*`python -m jobs\.data download mnist "
                             r"data_dir=<folder>`"):
        verified_path(None, "mnist/t10k-labels-idx1-ubyte.gz")


def test_verified_path_accepts_the_right_file(fake_dir):
    assert verified_path(fake_dir, FAKE) == fake_dir / FAKE


def test_verified_path_reads_ppml_data(fake_dir, monkeypatch):
    monkeypatch.setenv("PPML_DATA", str(fake_dir))
    assert verified_path(None, FAKE) == fake_dir / FAKE


def test_wrong_bytes_same_size_is_refused_naming_the_file(fake_dir):
    tampered = bytearray(CONTENT)
    tampered[100] ^= 1
    (fake_dir / FAKE).write_bytes(bytes(tampered))
    with pytest.raises(ChecksumError, match=r"blob\.bin.*SHA-256") as error:
        verified_path(fake_dir, FAKE)
    assert isinstance(error.value, ValueError)
    assert "PPML_DATA" in str(error.value)


def test_wrong_size_is_refused_naming_the_file(fake_dir):
    (fake_dir / FAKE).write_bytes(CONTENT[:-1])
    expected = hashlib.sha256(CONTENT).hexdigest()
    actual = hashlib.sha256(CONTENT[:-1]).hexdigest()
    with pytest.raises(ChecksumError, match=rf"blob\.bin.*{len(CONTENT) - 1} bytes and SHA-256 "
                                            rf"{actual}, expected {len(CONTENT)} bytes and "
                                            rf"SHA-256 {expected}"):
        verified_path(fake_dir, FAKE)


def test_missing_file_names_the_file_and_the_fix(fake_dir):
    (fake_dir / FAKE).unlink()
    with pytest.raises(FileNotFoundError, match=r"fake/blob\.bin.*missing.*PPML_DATA"):
        verified_path(fake_dir, FAKE)


def test_file_without_a_checksum_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"no embedded checksum for 'mnist/other\.gz'"):
        verified_path(tmp_path, "mnist/other.gz")


def test_verified_file_is_not_hashed_again_until_it_changes(fake_dir, monkeypatch):
    calls = []
    real = checksums.sha256_file
    monkeypatch.setattr(checksums, "sha256_file", lambda path: calls.append(path) or real(path))
    for _ in range(3):
        verified_path(fake_dir, FAKE)
    assert len(calls) == 1
    tampered = bytearray(CONTENT)
    tampered[0] ^= 1
    path = fake_dir / FAKE
    path.write_bytes(bytes(tampered))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # mtime surely moves
    with pytest.raises(ChecksumError):
        verified_path(fake_dir, FAKE)
    assert len(calls) == 2


def test_a_file_with_other_bytes_is_accepted_by_its_content(tmp_path, monkeypatch,
                                                             fresh_verification):
    """Jester's zip is verified by the matrix it holds when its bytes differ (a rebuilt copy)."""
    (tmp_path / "jester").mkdir()
    path = tmp_path / JESTER_FILE
    write_matrix(np.array([[2.0, -7.82, 99.0]]), path)
    with pytest.raises(ChecksumError, match=r"jester-data-1\.zip.*expected 3400621 bytes and "
                                            r"SHA-256 \w{64}; as a matrix it has content "
                                            r"SHA-256 \w{64}, expected content SHA-256 "
                                            rf"{CONTENT_CHECKSUMS[JESTER_FILE]}"):
        verified_path(tmp_path, JESTER_FILE)
    monkeypatch.setitem(CONTENT_CHECKSUMS, JESTER_FILE,
                        matrix_sha256(np.array([[2.0, -7.82, 99.0]])))
    assert verified_path(tmp_path, JESTER_FILE) == path
    path.write_bytes(b"not a zip")
    with pytest.raises(ChecksumError, match="as a matrix it cannot be read: not a zip"):
        verified_path(tmp_path, JESTER_FILE)


def test_tampered_copy_of_real_mnist_file(mnist_dir, tmp_path, fresh_verification):
    relpath = "mnist/t10k-labels-idx1-ubyte.gz"
    (tmp_path / "mnist").mkdir()
    copy = tmp_path / relpath
    shutil.copyfile(mnist_dir / relpath, copy)
    assert verified_path(tmp_path, relpath) == copy
    data = bytearray(copy.read_bytes())
    data[-1] ^= 0xFF
    copy.write_bytes(bytes(data))
    os.utime(copy, ns=(0, 10**9))
    with pytest.raises(ChecksumError, match="t10k-labels-idx1-ubyte.gz"):
        verified_path(tmp_path, relpath)


LOADERS = {
    "load_contextual(mnist)": ("mnist", lambda d: load_contextual("mnist", horizon=5, data_dir=d)),
    "load_kmeans(mnist)": ("mnist", lambda d: load_kmeans(base="mnist", data_dir=d)),
    "load_movielens_embeddings": ("movielens", lambda d: load_movielens_embeddings(3, data_dir=d)),
    "load_linear_arms": ("movielens",
                         lambda d: load_linear_arms("movielens", arms=5, dims=3, data_dir=d)),
    "load_spectral_arms": ("movielens", lambda d: load_spectral_arms(arms=5, dims=3, data_dir=d)),
    "load_bernoulli_arms(movielens)": ("movielens",
                                       lambda d: load_bernoulli_arms("movielens", arms=5,
                                                                     data_dir=d)),
    "load_bernoulli_arms(jester)": ("jester",
                                    lambda d: load_bernoulli_arms("jester", arms=5, data_dir=d)),
    "load_conversions(movielens)": ("movielens", lambda d: load_conversions("movielens", d)),
}


@pytest.mark.parametrize("loader", LOADERS)
def test_every_loader_names_the_folder_its_origin_and_the_download_command(
        loader, tmp_path, monkeypatch):
    name, load = LOADERS[loader]
    monkeypatch.delenv("PPML_DATA", raising=False)
    with pytest.raises(FileNotFoundError) as error:
        load(tmp_path)
    assert f"data directory {str(tmp_path)!r}, from data_dir" in str(error.value)
    assert f"`python -m jobs.data download {name} data_dir={tmp_path}`" in str(error.value)
    monkeypatch.setenv("PPML_DATA", "/nonexistent")
    with pytest.raises(FileNotFoundError) as error:
        load(None)
    assert "'/nonexistent' (from the PPML_DATA environment variable) does not exist" \
        in str(error.value)
    assert f"`python -m jobs.data download {name}`" in str(error.value)
