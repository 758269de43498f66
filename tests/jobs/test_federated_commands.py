"""The README's federated commands, as written, at a small size: the loopback launcher, and
jobs.peers with one jobs.party process per party (the several-terminal form)."""

import re
import subprocess
import sys

import pytest

from ppml.runtime import codec
from tests.jobs.readme import child_env, readme_commands

pytestmark = pytest.mark.slow

SMALL = ["horizon=4", "dims=4", "seed=2", "progress=false", "party_timeout_s=60"]


SMALLER = {"linucb_ds": ["dataset=synthetic", "arms=4", "dims=3", "key_bits=1024",
                         "insecure_key_bits_ok=true"],
           "samba": ["dataset=synthetic", "arms=3", "horizon=8", "key_bits=1024",
                     "insecure_key_bits_ok=true"],
           "masked_lark": ["masked_lark.reports=300", "masked_lark.queries=5",
                           "masked_lark.advertisers=3", "masked_lark.k=3"]}
"""What makes each experiment small (appended overrides win)."""


@pytest.mark.parametrize("command", readme_commands("python -m jobs.federated_local"),
                         ids=lambda c: c[3])
def test_the_loopback_launcher_writes_the_run(tmp_path, command):
    experiment = command[3].partition("=")[2]
    done = subprocess.run([sys.executable, *command[1:], *SMALL, *SMALLER.get(experiment, []),
                           f"results_dir={tmp_path}"],
                          capture_output=True, text=True, timeout=600, env=child_env())
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(rf"results: .*{experiment}-.*\.parquet", done.stdout)
    assert len(list(tmp_path.glob(f"{experiment}-*.parquet"))) == 1


def test_the_several_terminal_form_runs_as_written(tmp_path):
    (peers,) = readme_commands("python -m jobs.peers")
    parties = readme_commands("python -m jobs.party")
    assert len(parties) == 6
    made = subprocess.run([sys.executable, *peers[1:], *SMALL], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=child_env())
    assert made.returncode == 0, made.stderr[-2000:]
    running = [subprocess.Popen([sys.executable, *command[1:], *SMALL], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=child_env())
               for command in parties]
    try:
        outputs = [p.communicate(timeout=600)[0] for p in running]
    finally:
        for p in running:
            p.kill()
    assert all(p.returncode == 0 for p in running), outputs
    assert all(re.search(r"party \S+ done", out) for out in outputs)
    arms = codec.decode((tmp_path / "fed" / "puller.out").read_bytes())["arms"]
    rewards = codec.decode((tmp_path / "fed" / "rewarder.out").read_bytes())["rewards"]
    assert len(arms) == len(rewards) == 4
