"""The README's pprl commands, as written, at a small size."""

import pytest

from tests.jobs.readme import readme_commands, run_small

SMALL = ["pprl.trials=2", "pprl.steps_per_agent=100", "pprl.episodes=3", "pprl.episode_steps=10",
         "progress=false"]
COMMANDS = [c for c in readme_commands("python -m jobs.run experiment=pprl")]


def test_the_readme_shows_both_tasks_the_encrypted_protocol_and_fig_5():
    assert len(COMMANDS) == 4


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[4:5]) or "default")
def test_a_readme_command_runs_as_written(tmp_path, command):
    assert run_small(command, SMALL, tmp_path).name.startswith("pprl-")
