"""The masked_lark group: every bad value named with its bound."""

import pytest

from ppml.protocols.masked_lark.config import MaskedLarkOptions


@pytest.mark.parametrize("values,message", [
    ({"task": "count"}, "masked_lark.task must be one of aggregate, train"),
    ({"reports": 0}, "masked_lark.reports"),
    ({"d": 1025}, "masked_lark.d"),
    ({"bound": 2**40 + 1}, "masked_lark.bound"),
    ({"noise": "uniform"}, "masked_lark.noise must be one of"),
    ({"epsilon": float("nan")}, "masked_lark.epsilon must be a positive number"),
    ({"delta": 1.0}, "masked_lark.delta must be in \\(0, 1\\)"),
    ({"sigma_hat": -1.0}, "masked_lark.sigma_hat must be a positive number"),
    ({"click_rate": 1.5}, "masked_lark.click_rate must be in \\[0, 1\\]"),
    ({"polluters": 11, "reports": 10}, "masked_lark.polluters"),
    ({"fake_records": -1}, "masked_lark.fake_records"),
    ({"private": "yes"}, "masked_lark.private must be true or false"),
])
def test_bad_values_are_named(values, message):
    with pytest.raises(ValueError, match=message):
        MaskedLarkOptions(**values)
