"""Every command the README shows is run by a test or said not to be runnable here, and why
(the registry in tests/jobs/readme.py)."""

import ast

import pytest

from tests.jobs.readme import (NOT_RUNNABLE, REPO, RUN_BY, command_lines, owner, readme_commands,
                               smaller_sweep)


def prefixes_read(path) -> set:
    """The literal prefixes a test file passes to ``readme_commands``."""
    calls = [node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "readme_commands"]
    return {call.args[0].value for call in calls
            if call.args and isinstance(call.args[0], ast.Constant)}


def test_every_readme_command_is_run_by_a_test_or_not_runnable_with_a_reason():
    unowned = [command for command in command_lines() if owner(command) is None]
    assert unowned == [], ("README commands that no test runs: add the prefix to RUN_BY (and run "
                           f"it) or to NOT_RUNNABLE with the reason, in tests/jobs/readme.py: "
                           f"{unowned}")


def test_each_runner_reads_the_commands_of_its_prefix():
    owners = {owner(command) for command in command_lines()}
    for prefix, test_file in RUN_BY.items():
        if prefix in owners:      # a prefix without README lines yet (jobs.data) has no runner
            path = REPO / test_file
            assert path.is_file(), f"{prefix!r}: {test_file} does not exist"
            assert prefix in prefixes_read(path), (
                f"{test_file} never calls readme_commands({prefix!r})")


def test_the_commands_are_read_as_the_shell_reads_them():
    commands = command_lines()
    assert "python -m jobs.run" in commands and "pip install -e ." in commands   # a && b
    sweep = next(c for c in commands if c.startswith("python -m jobs.run -m experiment=private_cb"))
    assert sweep.endswith("mpc.truncation=bounded,exact,probabilistic")          # continued
    assert not any(c.startswith(("import", "table =")) for c in commands)      # not python blocks
    assert all(reason for reason in NOT_RUNNABLE.values())


def test_a_sweep_is_cut_to_two_jobs():
    command = ["python", "-m", "jobs.run", "-m", "a=1,2,3", "b=4,5", "c=[6,7]", "d=8"]
    assert smaller_sweep(command) == ["a=1,2", "b=4"]
    assert smaller_sweep(["python", "-m", "jobs.run", "a=1,2"]) == []


def test_an_unregistered_prefix_is_refused():
    with pytest.raises(KeyError, match="not a RUN_BY prefix"):
        readme_commands("python -m jobs.nothing")
