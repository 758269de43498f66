"""``python -m jobs.data``: the README's commands and list / download / verify, offline.

The downloads come from a mirror on 127.0.0.1 holding the real files under their official names
(ml-100k.zip zipped from ``$PPML_DATA/ml-100k``, MNIST's .gz files, jester-data-1.zip), so the
real checksum table is what is checked; those tests are skipped without ``PPML_DATA``.
"""

import os
import sys
import zipfile
from pathlib import Path

import pytest

from jobs.cli import InputError
from jobs.data import main
from ppml.data.sources import SOURCES
from tests.data.serve import serve
from tests.jobs.readme import readme_commands, run_command
from tests.runtime.bars import final

LABELS = "mnist/t10k-labels-idx1-ubyte.gz"


@pytest.fixture(scope="module")
def real_data() -> Path:
    root = os.environ.get("PPML_DATA")
    if not root or not all((Path(root) / s.folder).is_dir() for s in SOURCES.values()):
        pytest.skip("needs PPML_DATA with mnist/, ml-100k/ and jester/ (CI sets it)")
    return Path(root)


@pytest.fixture(scope="module")
def mirror_dir(real_data, tmp_path_factory) -> Path:
    """A folder laid out as the official servers are: ml-100k.zip and the files by name."""
    folder = tmp_path_factory.mktemp("mirror")
    with zipfile.ZipFile(folder / "ml-100k.zip", "w") as archive:
        for path in sorted((real_data / "ml-100k").iterdir()):
            archive.write(path, f"ml-100k/{path.name}")
    for path in [*(real_data / "mnist").iterdir(), real_data / "jester" / "jester-data-1.zip"]:
        (folder / path.name).symlink_to(path)
    return folder


@pytest.fixture(scope="module")
def mirror(mirror_dir):
    with serve(mirror_dir) as base:
        yield base


def run(*args, env_data=None):
    """``python -m jobs.data <args>`` in a subprocess with PPML_DATA set to ``env_data`` (unset
    when None); its exit status is the test's to check."""
    return run_command(["python", "-m", "jobs.data", *args], timeout=120, check=False,
                       env={"PPML_DATA": None if env_data is None else str(env_data)})


def test_readme_commands_run(mirror, tmp_path):
    commands = readme_commands("python -m jobs.data")
    assert [c[3] for c in commands] == ["list", "download", "download", "verify"]
    for command in commands:
        extra = [f"mirror={mirror}"] if command[3] == "download" else []
        done = run(*command[3:], *extra, env_data=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        if command[3] == "download":
            name = command[4]
            assert f"licence: {SOURCES[name].licence}" in done.stdout
            assert "100%" in done.stderr                          # the progress bar
    listed = run("list", env_data=tmp_path).stdout
    assert "(from the PPML_DATA environment variable)" in listed
    for name, state in (("mnist", "present"), ("movielens", "present"), ("jester", "missing")):
        assert any(line.split()[:2] == [name, state] for line in listed.splitlines()), listed


def test_list_shows_present_missing_and_corrupt(real_data, tmp_path, capsys):
    (tmp_path / "mnist").symlink_to(real_data / "mnist")
    (tmp_path / "ml-100k").mkdir()
    for path in (real_data / "ml-100k").iterdir():
        (tmp_path / "ml-100k" / path.name).write_bytes(path.read_bytes())
    (tmp_path / "ml-100k/u.info").write_bytes(b"tampered")
    assert main(["list", f"data_dir={tmp_path}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"data directory: {tmp_path} (from data_dir)"
    states = {line.split()[0]: line.split()[1] for line in lines[1:] if not line.startswith(" ")}
    assert states == {"mnist": "present", "movielens": "corrupt", "jester": "missing"}
    assert any("ml-100k/u.info: has 8 bytes and SHA-256" in line for line in lines)
    assert f"    get it: python -m jobs.data download jester data_dir={tmp_path}" in lines
    assert any(SOURCES["movielens"].licence in line for line in lines)
    assert main(["verify", f"data_dir={tmp_path}"]) == 1
    (tmp_path / "ml-100k/u.info").write_bytes((real_data / "ml-100k/u.info").read_bytes())
    assert main(["verify", f"data_dir={tmp_path}"]) == 0


def test_list_and_verify_show_their_bar_and_progress_false_none(tmp_path, capsys):
    for command in ("list", "verify"):
        main([command, f"data_dir={tmp_path}"])
        assert f"{len(SOURCES)}/{len(SOURCES)}" in final(capsys.readouterr().err,
                                                         "checking datasets")
        main([command, f"data_dir={tmp_path}", "progress=false"])
        assert capsys.readouterr().err == ""


def test_verify_exits_non_zero_on_a_mismatch(tmp_path):
    (tmp_path / "mnist").mkdir()
    (tmp_path / LABELS).write_bytes(b"not the labels")
    done = run("verify", f"data_dir={tmp_path}")
    assert done.returncode == 1
    assert "mnist: corrupt (1 of 4 files" in done.stdout
    assert f"{LABELS}: corrupt has 14 bytes" in done.stdout
    assert run("verify", f"data_dir={tmp_path / 'empty'}").returncode != 0


def test_download_refuses_a_mismatch_and_removes_it(mirror_dir, tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    for path in mirror_dir.iterdir():
        (served / path.name).symlink_to(path.resolve())
    labels = bytearray((mirror_dir / "t10k-labels-idx1-ubyte.gz").read_bytes())
    labels[-1] ^= 0xFF
    (served / "t10k-labels-idx1-ubyte.gz").unlink()
    (served / "t10k-labels-idx1-ubyte.gz").write_bytes(bytes(labels))
    data = tmp_path / "data"
    done = run("download", "mnist", f"data_dir={data}", f"mirror={served.as_uri()}")
    assert done.returncode == 1
    assert f"download mnist failed: downloaded '{LABELS}'" in done.stderr
    assert "expected 4517 bytes and SHA-256 b91679a0acfe4ba0" in done.stderr
    assert not (data / LABELS).exists()
    assert not [p for p in (data / "mnist").iterdir() if p.name.endswith(".part")]


def test_jester_without_xlrd_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "xlrd", None)
    with pytest.raises(SystemExit, match=r"download jester failed: reading Jester's official "
                                         r"archive .* pip install 'ppml\[jester\]'"):
        main(["download", "jester", f"data_dir={tmp_path}"])
    out = capsys.readouterr().out
    assert f"licence: {SOURCES['jester'].licence}" in out
    assert f"note: {SOURCES['jester'].note}" in out


def test_verify_accepts_jester_reencoded_and_refuses_it_tampered(real_data, tmp_path, capsys):
    """Other bytes (the CSV stored, not deflated) but the same matrix: verified by content."""
    with zipfile.ZipFile(real_data / "jester/jester-data-1.zip") as archive:
        text = archive.read("jester-data-1.csv")
    assert text.startswith(b"74,-7.82,")
    (tmp_path / "jester").mkdir()
    for content, status, shown in (
            (text, 0, "jester: present (1 of 1 files"),
            (text.replace(b"74,-7.82,", b"74,-7.81,", 1), 1,
             "; as a matrix it has content SHA-256 ")):
        with zipfile.ZipFile(tmp_path / "jester/jester-data-1.zip", "w") as archive:
            archive.writestr("jester-data-1.csv", content)
        assert main(["verify", f"data_dir={tmp_path}"]) == status
        assert shown in capsys.readouterr().out


def test_bad_arguments_and_no_data_dir_are_refused(monkeypatch):
    monkeypatch.delenv("PPML_DATA", raising=False)
    for argv, message in ((["download"], "usage"), (["fetch"], "usage"),
                          (["download", "cifar"], "unknown dataset 'cifar'"),
                          (["list", "mirror=x"], r"unknown argument 'mirror=x'"),
                          (["list"], "no data directory: pass data_dir=<folder> or set the "
                                     "PPML_DATA environment variable")):
        with pytest.raises(InputError, match=message):
            main(argv)


def test_ppml_data_is_named_as_the_environment_variable(capsys, monkeypatch):
    monkeypatch.setenv("PPML_DATA", "/nonexistent")
    main(["list"])
    out = capsys.readouterr().out
    assert out.startswith("data directory: /nonexistent (from the PPML_DATA environment "
                          "variable)")
    assert "get it: python -m jobs.data download movielens\n" in out
