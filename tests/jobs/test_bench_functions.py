"""jobs/bench_functions.py's exp rows at a small size: both methods, their rounds and errors (its
README command runs in test_bench_commands.py)."""

import numpy as np

from jobs import bench_functions


def test_exp_rows_hold_both_methods_and_the_range_reduced_one_wins():
    grid = np.round(np.linspace(-10, 10, 201) * 2**20) / 2**20
    rows = {(row["op"], row["iterations"]): row for row in bench_functions.exp_rows(grid)}
    assert set(rows) == {("exp/limit", k) for k in (4, 6, 8, 10)} | {("exp/range_reduced", None)}
    assert [rows["exp/limit", k]["rounds"] for k in (4, 6, 8, 10)] == [9, 13, 17, 21]
    paper, reduced = rows["exp/limit", 8], rows["exp/range_reduced", None]
    assert reduced["rounds"] == 2
    assert paper["max_rel_error_-4_2"] > 0.03 and paper["max_rel_error_-10_10"] > 0.15
    assert reduced["max_rel_error_-4_2"] < 1e-4 and reduced["max_scaled_error_-10_10"] < 3e-6
