"""A party's bulk work on its own node: objects made in each worker (`Resident.own`), each
called with its own arguments."""

import os

import pytest

from ppml.parallel import Resident


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
