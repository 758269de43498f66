"""The README's masked_lark commands, as written, at a small size."""

import pyarrow.parquet as pq
import pytest

from tests.jobs.readme import marked, readme_commands, run_small, starts_ray

SMALL = ["masked_lark.reports=300", "masked_lark.queries=5", "masked_lark.advertisers=4",
         "masked_lark.epochs=1", "progress=false"]
COMMANDS = readme_commands("python -m jobs.run experiment=masked_lark")


def test_the_readme_shows_the_default_laplace_ray_and_training():
    assert len(COMMANDS) == 4


@pytest.mark.parametrize("command", [marked(c, starts_ray(c), shown=slice(4, 5))
                                     for c in COMMANDS])
def test_a_readme_command_runs_as_written(tmp_path, command):
    table = pq.read_table(run_small(command, SMALL, tmp_path)).to_pylist()
    if "masked_lark.task=train" in command:
        assert all(row["gradient_equal_plaintext_steps"] == row["steps"] for row in table)
        assert {"epoch", "step", "loss", "auc", "gradient_equal_plaintext"} <= set(table[0])
        return
    assert all(row["release_equal_reference"] for row in table)
    assert {"key", "users", "suppressed", "true_sum", "released_sum"} <= set(table[0])
