"""ppml/runtime/sweep_tasks.py: a sweep's jobs as Ray tasks at once, each job's outcome kept, a
job past its timeout cancelled."""

import functools
import os
import time

import pytest
import ray

from ppml.runtime.sweep_tasks import Outcome, run_jobs


def span(seconds: float) -> tuple:
    """A job: sleeps ``seconds``; when it started and ended."""
    started = time.time()
    time.sleep(seconds)
    return started, time.time()


def fails() -> None:
    raise ValueError("bad job")


@pytest.mark.ray
def test_the_jobs_run_at_once_and_each_outcome_comes_back_in_order(ray_cluster):
    jobs = [functools.partial(span, 2.0), fails, functools.partial(span, 2.0)]
    outcomes = run_jobs(jobs, ["a", "b", "c"], job_timeout_s=120, shown=False)
    assert [outcome.error is None for outcome in outcomes] == [True, False, True]
    assert isinstance(outcomes[1].error, ValueError) and "bad job" in str(outcomes[1].error)
    (start_a, end_a), (start_c, end_c) = outcomes[0].value, outcomes[2].value
    assert start_c < end_a and start_a < end_c        # two CPUs: a and c overlapped


@pytest.mark.ray
def test_a_job_past_its_timeout_is_cancelled_and_named_while_the_others_end(ray_cluster):
    start = time.monotonic()
    outcomes = run_jobs([functools.partial(time.sleep, 600), functools.partial(pow, 2, 10)],
                        ["slow", "quick"], job_timeout_s=8, shown=False)
    assert time.monotonic() - start < 30
    assert isinstance(outcomes[0].error, TimeoutError)
    assert "slow: still running after job_timeout_s=8 s; cancelled" in str(outcomes[0].error)
    assert outcomes[1].value == 1024


@pytest.mark.ray
def test_a_job_whose_worker_dies_fails_alone(ray_cluster):
    outcomes = run_jobs([functools.partial(os._exit, 1), functools.partial(pow, 3, 2)],
                        ["dies", "lives"], job_timeout_s=120, shown=False)
    assert isinstance(outcomes[0].error, ray.exceptions.RayError)
    assert outcomes[1] == Outcome(value=9)


@pytest.mark.parametrize("kwargs, message", [
    ({"num_cpus": 0}, "num_cpus must be a positive number, got 0"),
    ({"job_timeout_s": -1}, "job_timeout_s must be a positive number, got -1"),
])
def test_bad_settings_are_refused_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_jobs([fails], ["a"], **{"job_timeout_s": 10, **kwargs})


def test_each_job_must_be_named():
    with pytest.raises(ValueError, match="names must name each of the 2 jobs, got 1"):
        run_jobs([fails, fails], ["a"], job_timeout_s=10)
