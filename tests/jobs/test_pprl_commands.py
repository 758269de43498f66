"""The README's pprl commands, as written, at a small size."""

import pytest

from tests.jobs.readme import marked, readme_commands, run_small, starts_ray

SMALL = ["pprl.trials=2", "pprl.steps_per_agent=30", "pprl.episodes=3", "pprl.episode_steps=10",
         "key_bits=512", "insecure_key_bits_ok=true", "progress=false"]
"""A small run: few steps, and Paillier keys of 512 bits (INSECURE: what is run here is the
command line, not the key size)."""
COMMANDS = [c for c in readme_commands("python -m jobs.run experiment=pprl")]


def test_the_readme_shows_both_tasks_the_encrypted_protocol_and_fig_5():
    assert len(COMMANDS) == 4


@pytest.mark.parametrize("command", [marked(c, starts_ray(c), shown=slice(4, 5))
                                     for c in COMMANDS])
def test_a_readme_command_runs_as_written(tmp_path, command):
    assert run_small(command, SMALL, tmp_path).name.startswith("pprl-")
