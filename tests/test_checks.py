"""check_int and check_equal: ints back, and every error names the parameter and its bound."""

import numpy as np
import pytest

from ppml.checks import check_equal, check_int


def test_integers_come_back_as_python_ints():
    assert check_int("arms", 3, 1) == 3
    value = check_int("arms", np.int64(3), 1, 5)
    assert value == 3 and type(value) is int
    assert check_equal("arms", 10, 10, "the digits") == 10


@pytest.mark.parametrize("value, match", [
    (True, "arms must be an integer, got True"),
    (2.0, "arms must be an integer, got 2.0"),
    (0, r"arms must be >= 1 \(five at most\), got 0"),
    (6, r"arms must be <= 5 \(five at most\), got 6"),
])
def test_each_failure_names_what_failed(value, match):
    with pytest.raises(ValueError, match=match):
        check_int("arms", value, 1, 5, why="five at most")


@pytest.mark.parametrize("value, high, match", [
    (0, None, "workers must be an integer >= 1, got 0"),
    (False, None, "workers must be an integer >= 1, got False"),
    (9, 8, r"workers must be an integer in \[1, 8\], got 9"),
    ("2", 8, r"workers must be an integer in \[1, 8\], got '2'"),
])
def test_what_states_the_whole_requirement(value, high, match):
    with pytest.raises(ValueError, match=match):
        check_int("workers", value, 1, high, what="an integer")


def test_check_equal():
    with pytest.raises(ValueError, match=r"arms must be 10 \(the digits\), got 9"):
        check_equal("arms", 9, 10, "the digits")
