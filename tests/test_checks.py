"""The argument checks: values come back, and every error names the parameter and its bound."""

import numpy as np
import pytest

from ppml.checks import (WrongType, check_bool, check_equal, check_int, check_positive,
                         check_real, check_shape, check_text)


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


@pytest.mark.parametrize("value, kwargs, message", [
    (1.5, dict(low=0, high=1), r"eps must be in \[0, 1\] \(a finite number\), got 1.5"),
    (0, dict(low=0, low_open=True), r"eps must be > 0 \(a finite number\), got 0"),
    (1.0, dict(high=1, high_open=True), r"eps must be < 1 \(a finite number\), got 1.0"),
    (float("nan"), dict(low=0, high=1, low_open=True), r"eps must be in \(0, 1\]"),
    (float("inf"), dict(low=0), r"eps must be >= 0"),
    (True, dict(low=0, high=1), "got True"),
    ("0.5", dict(low=0, high=1), "got '0.5'"),
    (2**2000, dict(low=0), "eps must be >= 0"),
])
def test_check_real_states_the_interval(value, kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_real("eps", value, **kwargs)


def test_check_real_bool_text_and_shape_return_the_value():
    assert check_real("eps", 1, 0, 1) == 1.0 and type(check_real("eps", np.float32(0.5))) is float
    assert check_bool("flag", np.bool_(True)) is True
    assert check_text("name", "digits") == "digits"
    assert check_shape("shape", 3) == (3,) and check_shape("shape", [np.int64(2), 0]) == (2, 0)
    assert check_positive("timeout", 2**70) == 2.0**70
    for call, message in [(lambda: check_bool("flag", "false"), "flag must be true or false"),
                          (lambda: check_text("name", ""), "name must be a non-empty string"),
                          (lambda: check_shape("shape", (2, -1)), "shape must be a tuple"),
                          (lambda: check_positive("timeout", 2**2000), "timeout must be")]:
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("call", [
    lambda: check_int("arms", "3", 1), lambda: check_int("arms", 2.0, 1),
    lambda: check_int("arms", True, 1, what="an integer"), lambda: check_real("eps", "0.5"),
    lambda: check_positive("t", None), lambda: check_bool("flag", 1),
    lambda: check_text("name", 3)])
def test_a_value_of_the_wrong_type_is_a_type_error_and_still_a_value_error(call):
    with pytest.raises(WrongType) as refused:
        call()
    assert isinstance(refused.value, TypeError) and isinstance(refused.value, ValueError)


def test_a_value_of_the_right_type_out_of_bounds_is_no_type_error():
    for call in [lambda: check_int("arms", 0, 1), lambda: check_real("eps", 2.0, 0, 1),
                 lambda: check_positive("t", 0), lambda: check_text("name", "")]:
        with pytest.raises(ValueError) as refused:
            call()
        assert not isinstance(refused.value, TypeError)
