import pytest

from ppml.experiments.slowdown import slowdowns, timed


def test_online_and_total_against_the_plaintext_seconds():
    assert slowdowns(8.0, 10.0, 0.5) == {"slowdown_online": 16.0, "slowdown_total": 20.0}
    assert slowdowns(3.0, 3.0, 1.0) == {"slowdown_online": 3.0, "slowdown_total": 3.0}


@pytest.mark.parametrize("online, total, plain, name", [
    (-1.0, 1.0, 1.0, "online_s"), (1.0, float("inf"), 1.0, "total_s"),
    (1.0, 1.0, 0.0, "plaintext_s"), (1.0, 1.0, float("nan"), "plaintext_s"),
    (2.0, 1.0, 1.0, "total_s must be >= online_s")])
def test_bad_seconds_name_the_parameter(online, total, plain, name):
    with pytest.raises(ValueError, match=name):
        slowdowns(online, total, plain)


def test_timed_calls_the_loop_that_many_times_and_returns_its_first_result():
    calls = []
    result, seconds = timed(lambda: calls.append(len(calls)) or len(calls), timings=3)
    assert calls == [0, 1, 2] and result == 1 and seconds >= 0
    with pytest.raises(ValueError, match="timings must be an integer >= 1"):
        timed(lambda: None, timings=0)
