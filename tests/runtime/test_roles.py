"""ppml/runtime/roles.py: roles as objects in this process and as Ray actors.

The local tests start no Ray.  The Ray tests (marked ``ray``) share the session's `ray_cluster`
and spawn four small actors in all.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

import pytest

from ppml.runtime import ray_roles, roles
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S
from ppml.runtime.roles import RoleError, gather, slots, spawn, teardown

TIMEOUT_S = 0.5
"""The small deadline of the role whose method sleeps past it."""
STARTING_S = 60.0
"""The deadline of actors while they start (a process and its imports, on a loaded machine)."""


class Boom(ValueError):
    """A role method's own error."""


class Adder:
    """A role: adds its base; fails or sleeps on request."""

    def __init__(self, base, *, scale=1):
        self.base, self.scale = base, scale

    def add(self, x):
        return (self.base + x) * self.scale

    def fail(self, message):
        raise Boom(message)

    def sleep(self, seconds):
        time.sleep(seconds)
        return seconds

    def pid(self):
        return os.getpid()

    def ask(self, other, x):
        """Call another role (as LinUCB-DS's P calls Comp) and return its answer."""
        return other.call("add", x)


class Named(Adder):
    name = "Comp"


class Busy:
    """A role whose ``close`` would have to wait behind a long call (an actor serves one call
    at a time)."""

    def work(self, seconds):
        time.sleep(seconds)

    def close(self):
        pass


class Closable:
    """A role with ``close``: records (or writes) that it closed, or fails to close."""

    def __init__(self, log: list | None = None, marker: str | None = None, fail: bool = False):
        self.log, self.marker, self.fail = log, marker, fail

    def ping(self):
        return "pong"

    def close(self):
        if self.fail:
            raise Boom("cannot close")
        if self.log is not None:
            self.log.append("closed")
        if self.marker is not None:
            Path(self.marker).write_text("closed")


def _stopped_into(role, stopped: list, fail: bool = False):
    """Make ``role.stop`` record its name in ``stopped`` (and raise if ``fail``)."""
    original = role.stop

    def stop():
        stopped.append(role.name)
        original()
        if fail:
            raise RuntimeError(f"{role.name} will not stop")

    role.stop = stop


def _note(err: BaseException, role: str, method: str) -> bool:
    return f"(in {role}.{method})" in getattr(err, "__notes__", [])


# --- local roles ---------------------------------------------------------------------------------

def test_local_call_returns_the_value():
    role = spawn(Adder, "local", 3, scale=2, name="A", timeout_s=DEFAULT_TIMEOUT_S)
    assert isinstance(role, roles.LocalRole)
    assert role.call("add", 4) == 14
    assert role.call("add", -3) == 0


def test_default_names():
    assert spawn(Adder, "local", 0, timeout_s=DEFAULT_TIMEOUT_S).name == "Adder"
    assert spawn(Named, "local", 0, timeout_s=DEFAULT_TIMEOUT_S).name == "Comp"
    assert spawn(Named, "local", 0, name="P", timeout_s=DEFAULT_TIMEOUT_S).name == "P"


def test_local_error_is_its_own_type_with_the_role_noted():
    role = spawn(Adder, "local", 0, name="DO", timeout_s=DEFAULT_TIMEOUT_S)
    with pytest.raises(Boom, match="bad input") as info:
        role.call("fail", "bad input")
    assert type(info.value) is Boom
    assert _note(info.value, "DO", "fail"), info.value.__notes__


def test_local_error_through_submit_and_gather():
    role = spawn(Adder, "local", 0, name="DC", timeout_s=DEFAULT_TIMEOUT_S)
    pending = role.submit("fail", "late")           # nothing raised yet
    with pytest.raises(Boom) as info:
        gather([role.submit("add", 1), pending])
    assert _note(info.value, "DC", "fail")
    with pytest.raises(Boom):
        role.submit("fail", "again").result()


def test_local_submit_and_gather_in_order():
    a = spawn(Adder, "local", 10, name="a", timeout_s=DEFAULT_TIMEOUT_S)
    b = spawn(Adder, "local", 100, name="b", timeout_s=DEFAULT_TIMEOUT_S)
    pendings = [a.submit("add", 1), b.submit("add", 2), a.submit("add", 3)]
    assert gather(pendings) == [11, 102, 13]
    assert gather([]) == []
    assert b.submit("add", 0).result() == 100


def test_local_role_calls_another_role():
    comp = spawn(Named, "local", 5, timeout_s=DEFAULT_TIMEOUT_S)
    p = spawn(Adder, "local", 0, name="P", timeout_s=DEFAULT_TIMEOUT_S)
    assert p.call("ask", comp, 2) == 7
    with pytest.raises(TypeError) as info:                      # 5 + None inside Comp
        p.call("ask", comp, None)
    assert _note(info.value, "Comp", "add") and _note(info.value, "P", "ask")


def test_teardown_closes_roles_that_have_close_and_stops_all():
    log, stopped = [], []
    a = spawn(Closable, "local", log, name="a", timeout_s=DEFAULT_TIMEOUT_S)
    plain = spawn(Adder, "local", 0, name="plain",                   # no close: not called
                  timeout_s=DEFAULT_TIMEOUT_S)
    b = spawn(Closable, "local", log, name="b", timeout_s=DEFAULT_TIMEOUT_S)
    for role in (a, plain, b):
        _stopped_into(role, stopped)
    teardown([a, plain, b])
    assert log == ["closed", "closed"]
    assert stopped == ["a", "plain", "b"]


def test_teardown_goes_on_when_a_close_or_a_stop_fails(caplog):
    log, stopped = [], []
    first = spawn(Closable, "local", log, name="first", timeout_s=DEFAULT_TIMEOUT_S)
    broken = spawn(Closable, "local", None, None, True, name="broken", timeout_s=DEFAULT_TIMEOUT_S)
    last = spawn(Closable, "local", log, name="last", timeout_s=DEFAULT_TIMEOUT_S)
    _stopped_into(first, stopped, fail=True)
    _stopped_into(broken, stopped)
    _stopped_into(last, stopped)
    with caplog.at_level(logging.WARNING, logger=roles.__name__):
        teardown([first, broken, last])                         # raises nothing
    assert log == ["closed", "closed"]                          # the others still closed
    assert stopped == ["first", "broken", "last"]               # and every role stopped
    assert "broken did not close" in caplog.text
    assert "first could not be stopped" in caplog.text


def test_teardown_without_close_only_stops():
    log, stopped = [], []
    role = spawn(Closable, "local", log, name="c", timeout_s=DEFAULT_TIMEOUT_S)
    _stopped_into(role, stopped)
    teardown([role], close=None)
    assert log == [] and stopped == ["c"]


def test_spawn_refuses_unknown_runtime_and_bad_timeout():
    with pytest.raises(ValueError, match="runtime"):
        spawn(Adder, "threads", 0, timeout_s=DEFAULT_TIMEOUT_S)
    with pytest.raises(ValueError):
        spawn(Adder, "local", 0, timeout_s=0)
    assert spawn(Adder, "local", 0, timeout_s=None).timeout_s is None


def test_role_errors_keep_their_role_through_pickling():
    import pickle
    err = pickle.loads(pickle.dumps(RoleError("Comp", "Comp did not answer")))
    assert type(err) is RoleError and err.role == "Comp" and str(err) == "Comp did not answer"


def test_background_role_runs_beside_the_caller():
    """A background role's call runs on its own thread: the caller goes on meanwhile, and the
    role serves one call at a time, in order."""
    import threading
    role = spawn(Adder, "local", 3, name="B", background=True, timeout_s=DEFAULT_TIMEOUT_S)
    started = role.submit("sleep", 0.2)
    assert not started._future.done()                 # the caller was not held up
    assert gather([started, role.submit("add", 1)]) == [0.2, 4]
    assert role.call("add", 2) == 5
    assert threading.current_thread().name not in role.pool.submit(
        lambda: threading.current_thread().name).result()
    teardown([role])


def test_background_role_errors_and_deadlines_name_it():
    role = spawn(Adder, "local", 0, name="B", background=True, timeout_s=TIMEOUT_S)
    with pytest.raises(Boom) as err:
        role.call("fail", "no")
    assert _note(err.value, "B", "fail")
    with pytest.raises(RoleError, match="B did not answer sleep within 0.5 s"):
        role.call("sleep", 1.0)
    teardown([role])


def test_slots_local_is_one():
    assert slots("local") == 1


# --- Ray roles -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def comp(ray_cluster):
    """One actor shared by the Ray tests that leave it alive."""
    role = spawn(Named, "ray", 5, timeout_s=DEFAULT_TIMEOUT_S)
    yield role
    teardown([role])


@pytest.mark.ray
def test_ray_call_and_gather(comp):
    assert isinstance(comp, ray_roles.ActorRole) and comp.name == "Comp"
    assert comp.call("add", 2) == 7
    assert gather([comp.submit("add", i) for i in range(3)]) == [5, 6, 7]


@pytest.mark.ray
def test_ray_error_is_its_own_type_with_the_role_noted(comp):
    with pytest.raises(Boom, match="inside the actor") as info:
        comp.call("fail", "inside the actor")
    assert _note(info.value, "Comp", "fail"), info.value.__notes__
    assert comp.call("add", 0) == 5                             # the actor lives on


@pytest.mark.ray
def test_ray_role_handed_to_another_role(comp):
    p = spawn(Adder, "ray", 0, name="P", timeout_s=DEFAULT_TIMEOUT_S)
    try:
        assert p.call("ask", comp, 10) == 15
        with pytest.raises(TypeError) as info:                  # Comp's error, through P
            p.call("ask", comp, None)
        assert _note(info.value, "P", "ask")
    finally:
        teardown([p])


@pytest.mark.ray
def test_a_busy_actor_is_waited_for_and_a_stopped_one_is_named(comp, tmp_path):
    """timeout_s bounds silence, not work: a call longer than it returns, since the actor
    answers liveness checks meanwhile; an actor whose process is stopped (SIGSTOP) is named
    within about timeout_s and a check interval, and teardown still kills it."""
    slow = spawn(Adder, "ray", 0, name="Slow", timeout_s=STARTING_S)
    frozen = spawn(Adder, "ray", 0, name="Frozen", timeout_s=STARTING_S)
    marker = tmp_path / "closed"
    closing = spawn(Closable, "ray", None, str(marker), name="Closing", timeout_s=STARTING_S)
    try:
        assert closing.call("ping") == "pong"
        pid = frozen.call("pid")
        assert slow.call("add", 1) == 1
        slow.timeout_s, frozen.timeout_s = TIMEOUT_S, 1.0    # started: the short deadlines
        assert slow.call("sleep", 4 * TIMEOUT_S) == 4 * TIMEOUT_S
        os.kill(pid, signal.SIGSTOP)
        start = time.monotonic()
        with pytest.raises(RoleError, match="Frozen stopped answering during sleep") as info:
            gather([slow.submit("sleep", 6.0), frozen.submit("sleep", 0.1)])
        elapsed = time.monotonic() - start
        assert info.value.role == "Frozen"                   # not Slow, still at work
        assert 1.0 <= elapsed < 3.0, elapsed
    finally:
        teardown([slow, frozen, closing], close_timeout_s=2.0)   # Slow asleep, Frozen stopped
    assert marker.read_text() == "closed"
    for role, method, args in ((closing, "ping", ()), (frozen, "add", (1,))):
        with pytest.raises(RoleError, match=role.name) as info:
            role.call(method, *args)
        assert info.value.role == role.name and "died" in str(info.value)


class SlowStart:
    """A role whose constructor takes ``seconds`` (a key pair, a loaded machine)."""

    def __init__(self, seconds: float):
        time.sleep(seconds)

    def ping(self):
        return "pong"


@pytest.mark.ray
def test_an_actor_is_given_the_time_to_start_and_one_that_never_does_is_named(ray_cluster):
    """Before an actor first answers, its silence is bounded by startup_s (4 x timeout_s), not
    timeout_s: a constructor of 4 s passes with timeout_s = 3; one of 60 s fails naming the
    role within about 4 s of timeout_s = 1."""
    slow = spawn(SlowStart, "ray", 4.0, timeout_s=3.0)
    stuck = None
    try:
        assert slow.call("ping") == "pong" and slow.started
        stuck = spawn(SlowStart, "ray", 60.0, name="Stuck", timeout_s=1.0)
        start = time.monotonic()
        with pytest.raises(RoleError, match=r"Stuck did not start within 4 s \(4 x timeout_s"):
            stuck.call("ping")
        assert 4.0 <= time.monotonic() - start < 7.0
    finally:
        teardown([slow] + ([stuck] if stuck else []), close=None)


@pytest.mark.ray
@pytest.mark.parametrize("fault", ["kill", "stop"])
def test_an_idle_actor_that_dies_or_stops_is_named_by_a_wait_for_another(comp, fault):
    """A role that no call waits for (PPRL's dealer between two batches) is still watched by
    every wait of the process that spawned it: killed or stopped, it is named within about
    its timeout_s, not when the run next calls it.  Once stopped by teardown, it is not
    watched any more."""
    idle = spawn(Adder, "ray", 0, name="Idle", timeout_s=STARTING_S)
    worker = spawn(Adder, "ray", 0, name="Worker", timeout_s=STARTING_S)
    try:
        pid = idle.call("pid")
        assert worker.call("add", 1) == 1
        idle.timeout_s = 1.0
        os.kill(pid, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
        start = time.monotonic()
        expected = "Idle died during its idle time" if fault == "kill" else \
            "Idle stopped answering during its idle time"
        with pytest.raises(RoleError, match=expected) as info:
            worker.call("sleep", 20.0)
        assert info.value.role == "Idle" and "Worker.sleep" in str(info.value)
        assert time.monotonic() - start < 10.0
    finally:
        teardown([idle, worker], close_timeout_s=2.0)
    assert idle not in ray_roles.watched() and worker not in ray_roles.watched()


@pytest.mark.ray
def test_a_failure_is_raised_before_another_roles_deadline(comp):
    slow = spawn(Adder, "ray", 0, name="Sleepy", timeout_s=20.0)
    try:
        start = time.monotonic()
        with pytest.raises(Boom, match="first"):
            gather([slow.submit("sleep", 10.0), comp.submit("fail", "first")])
        assert time.monotonic() - start < 5.0
    finally:
        teardown([slow])


@pytest.mark.ray
def test_teardown_does_not_wait_for_a_busy_role(ray_cluster):
    busy = spawn(Busy, "ray", timeout_s=None)
    busy.call("work", 0.0)                       # started
    busy.submit("work", 30.0)                    # still at work when the run is torn down
    start = time.monotonic()
    teardown([busy], close_timeout_s=1.0)
    assert time.monotonic() - start < 5.0
    with pytest.raises(RoleError, match="died"):
        busy.call("work", 0.0)

