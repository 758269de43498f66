"""The README's pprl commands, as written, at a small size."""

import subprocess
import sys

import pytest

from tests.jobs.readme import readme_commands

SMALL = ["pprl.trials=2", "pprl.steps_per_agent=100", "pprl.episodes=3", "pprl.episode_steps=10",
         "progress=false"]
COMMANDS = [c for c in readme_commands("python -m jobs.run experiment=pprl")]


def test_the_readme_shows_both_tasks_the_encrypted_protocol_and_fig_5():
    assert len(COMMANDS) == 4


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[4:5]) or "default")
def test_a_readme_command_runs_as_written(tmp_path, command):
    done = subprocess.run([sys.executable, *command[1:], *SMALL, f"results_dir={tmp_path}"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(list(tmp_path.glob("pprl-*.parquet"))) == 1
