"""jobs/bench_matmul.py's sizes (its README command runs in test_bench_commands.py)."""

import pytest

from jobs.bench_matmul import matrix_sizes


def test_sizes_are_read_as_integers():
    assert matrix_sizes("32,64") == [32, 64]


@pytest.mark.parametrize("text", ["0", "32,x", "", "-4"])
def test_a_size_below_one_or_not_an_integer_is_refused_naming_sizes(text):
    with pytest.raises(SystemExit, match="sizes must be integers >= 1"):
        matrix_sizes(text)
