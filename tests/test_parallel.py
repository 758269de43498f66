"""A party's bulk work on its own node: objects made in each worker (`Resident.own`), each
called with its own arguments; work split over arms only from its crossover size on."""

import os

import numpy as np
import pytest

from ppml.parallel import Resident, in_one_task, over_rows, workers_for


def test_work_below_its_crossover_stays_in_this_process():
    assert workers_for(999, 4, 1000) == 1 and workers_for(1000, 4, 1000) == 4
    assert workers_for(10**9, 1, 1000) == 1


def _rows_times(x, m):
    return x @ m, os.getpid()


def test_over_rows_with_one_worker_is_one_call_here():
    x, m = np.arange(12.0).reshape(4, 3), np.eye(3)
    ((out, pid),) = over_rows(_rows_times, [x, m], [True, False], 4, 1)
    assert pid == os.getpid() and np.array_equal(out, x)


@pytest.mark.ray
def test_over_rows_cuts_the_sliced_arrays_into_contiguous_ranges_over_workers(ray_cluster):
    x, m = np.arange(15.0).reshape(5, 3), np.arange(9.0).reshape(3, 3)
    parts = over_rows(_rows_times, [x, m], [True, False], 5, 2)
    assert [len(out) for out, _ in parts] == [3, 2]
    assert parts[0][1] == os.getpid() != parts[1][1]              # the first range here
    assert np.array_equal(np.concatenate([out for out, _ in parts]), x @ m)
    y = np.arange(30.0).reshape(2, 5, 3)                          # a held-party axis first
    parts = over_rows(_rows_times, [y, m], [True, False], 5, 2, axis=1)
    assert np.array_equal(np.concatenate([out for out, _ in parts], axis=1), y @ m)


class _Made:
    def __init__(self):
        self.pid = os.getpid()


def _pid_plus(obj: _Made, k: int) -> tuple:
    return obj.pid, os.getpid(), k


def test_without_workers_the_one_object_lives_here():
    resident = Resident.own(_Made)
    assert resident.each(_pid_plus, [(5,)]) == [(os.getpid(), os.getpid(), 5)]
    with pytest.raises(ValueError, match="one argument tuple per object \\(1\\), got 2"):
        resident.each(_pid_plus, [(1,), (2,)])
    resident.close()
    with pytest.raises(RuntimeError, match="closed"):
        resident.each(_pid_plus, [(1,)])


@pytest.mark.ray
def test_each_worker_makes_its_own_object_and_uses_it(ray_cluster):
    resident = Resident.own(_Made, workers=3)
    try:
        out = resident.each(_pid_plus, [(0,), (1,), (2,)])
    finally:
        resident.close()
    assert [k for _, _, k in out] == [0, 1, 2]
    assert all(made == ran for made, ran, _ in out)           # made where it is used
    assert len({made for made, _, _ in out}) == 3


def _sleep_then(obj: _Made, seconds: float) -> int:
    import time
    time.sleep(seconds)
    return obj.pid


@pytest.mark.ray
def test_a_worker_that_does_not_answer_fails_the_call_within_the_deadline(ray_cluster,
                                                                          monkeypatch):
    from ppml import parallel
    resident = Resident.own(_Made, workers=2)
    try:
        resident.each(_sleep_then, [(0.0,), (0.0,)])              # loaded and answering
        monkeypatch.setattr(parallel, "WORKERS_TIMEOUT_S", 0.5)
        with pytest.raises(TimeoutError, match="Ray workers did not finish their share "
                                               "within 0.5 s"):
            resident.each(_sleep_then, [(0.0,), (5.0,)])
    finally:
        resident.close()


def test_in_one_task_runs_the_work_in_another_process_of_this_node(ray_cluster):
    pid, total = in_one_task(lambda a, b: (os.getpid(), a + b), 2, 3)
    assert total == 5 and pid != os.getpid()
