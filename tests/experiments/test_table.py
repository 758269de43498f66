"""The printed summary tables: within 100 characters, integers as integers, no None."""

from ppml.experiments.table import format_table
from tests.experiments.summaries import fits


def test_integers_print_as_integers_and_missing_values_blank():
    rows = [{"reward": 1280.0, "steps": 60000, "s": 0.0226, "target_s": None, "ok": True}]
    lines = format_table(rows, ["reward", "steps", "s", "target_s", "ok"]).splitlines()
    assert lines[2].split() == ["1,280", "60,000", "0.0226", "True"]
    assert "e+" not in lines[2] and "None" not in lines[2]
    assert format_table([{"x": 123456.7}], ["x"]).splitlines()[2] == "123,457"


def test_a_column_prints_under_its_short_header():
    table = format_table([{"secure_cumulative_reward": 48.0}], [("secure_cumulative_reward",
                                                                 "reward")])
    assert table.splitlines() == ["reward", "------", "    48"]


def test_a_wide_table_is_stacked_in_blocks_that_fit_repeating_the_first_column():
    columns = ["name"] + [f"column_number_{i}" for i in range(12)]
    table = format_table([{"name": "run", **{c: 1.5 for c in columns[1:]}}], columns)
    blocks = table.split("\n\n")
    assert len(blocks) > 1 and fits(table)
    assert all(block.split()[0] == "name" for block in blocks)
    assert all(c in table for c in columns)                      # nothing is cut off
