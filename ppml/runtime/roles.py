"""Roles: the participants of a role-based protocol, in this process or as Ray actors.

LinUCB-DS's DO, DC, P and Comp, Samba's Controller, Comp, data owners and customer, and the
private contextual bandit's world are each a `Role`: an ordinary object, made by `spawn` either
in this process (``runtime="local"``) or as a Ray actor (``runtime="ray"``) from the same class,
so the protocol code is the same in both.

* ``role.call(method, *args)`` runs a method and returns its value;
* ``role.submit(method, *args)`` starts it and returns a `Pending`; `gather` waits for many at
  once (they run in parallel on Ray); `call_all` does both for a list of calls;
* ``timeout_s`` bounds a role's silence, not its work: an actor's call may run as long as it
  needs while the actor answers liveness checks; an actor that dies, or that stops answering
  them for ``timeout_s`` (a stopped or frozen process, a lost node), fails the wait with
  `RoleError`, which names the role and the method.  An actor that has not answered anything
  yet may still be starting (its process, its constructor): until it does, its silence is
  bounded by `startup_s` of its ``timeout_s``.  Every wait also checks the roles this process
  spawned that no call waits for, so that one killed or stopped while idle is named within its
  ``timeout_s``, not when it is next called (`ppml.runtime.ray_roles`: `Liveness`,
  `watched`).  A role in this process cannot go silent alone: its background calls are bounded
  by ``timeout_s`` from their start;
* a method's own error reaches the caller as itself (on Ray, as Ray's error that is also an
  instance of it), with a note naming the role and the method;
* `teardown` closes and stops every role it is given, each independently: one role's failure to
  close never leaves another alive.

The actors reserve no CPU: roles wait most of the time, and their bulk work runs as Ray tasks
pinned to their own node (`ppml.parallel`).  The actors and the waits for them are in
`ppml.runtime.ray_roles`, imported only when a role is spawned on Ray: a ``runtime=local`` run
never imports Ray (docs/memory.md).
"""

from __future__ import annotations

import concurrent.futures
import logging
import time

from ppml.checks import check_int, check_positive
from ppml.runtime import progress
from ppml.runtime.cluster import cluster_cpus
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S, startup_s

RUNTIMES = ("local", "ray")
"""Where roles run: ``local`` objects in this process, ``ray`` actors."""
TEARDOWN_CHECK_S = 3.0
"""How long `teardown` waits for the liveness checks that decide whom it asks to close."""
CLOSE_TIMEOUT_S = 30.0
"""How long `teardown` lets a role close before it stops it anyway."""

log = logging.getLogger(__name__)


class RoleError(RuntimeError):
    """A role's method failed, or did not answer in time; ``role`` names it."""

    def __init__(self, role: str, message: str):
        super().__init__(message)
        self.role = role

    def __reduce__(self):            # crosses Ray intact when one role calls another
        return type(self), (self.role, str(self))


class Pending:
    """A started call: `gather` (or `result`) gives its value or raises its `RoleError`.
    It holds the value or error of a call made at once, the Ray reference of an actor's call,
    or the future of a background role's call."""

    __slots__ = ("role", "method", "_value", "_error", "_ref", "_future")

    def __init__(self, role: "Role", method: str, value=None, error=None, ref=None,
                 future=None):
        self.role, self.method = role, method
        self._value, self._error, self._ref, self._future = value, error, ref, future

    def result(self):
        return gather([self])[0]


def gather(pendings: list) -> list:
    """The values of ``pendings`` in order; the first failure raises a `RoleError` naming its
    role and method.  Ray calls are waited for together, each role's silence bounded by its
    ``timeout_s`` (`Liveness`)."""
    refs = {p._ref: p for p in pendings if p._ref is not None}
    futures = [p for p in pendings if p._future is not None]
    if not refs and not futures and all(p._error is None for p in pendings):
        return [p._value for p in pendings]             # every role in this process
    for pending in pendings:
        if pending._error is not None:
            raise noted(pending._error, pending)
    values = _finish(futures)
    if refs:                        # actor roles: ray_roles (and Ray) are imported already
        from ppml.runtime.ray_roles import wait
        values.update(wait(refs))
    return [values[p._ref] if p._ref is not None else
            values[p._future] if p._future is not None else p._value for p in pendings]


def _finish(pendings: list) -> dict:
    """The value of every background call (future -> value), each within its role's
    ``timeout_s``: from now for a call in this process, from the last busy note of a call to
    another party (`ppml.runtime.remote`).  The first failure raises as soon as it is known,
    noted with its role: a call's own error, or the first role whose deadline has passed."""
    start = time.monotonic()
    by_future = {p._future: p for p in pendings}
    waiting = set(by_future)

    def deadline(future) -> float:         # a busy note (`heard`) moves it on
        return max(start, getattr(future, "heard", start)) + by_future[future].role.timeout_s

    while waiting:
        deadlines = {f: deadline(f) for f in waiting if by_future[f].role.timeout_s is not None}
        due = list(deadlines.values())
        left = max(min(due) - time.monotonic(), 0.0) if due else None
        waiter = next((f.waiter for f in waiting if hasattr(f, "waiter")), None)
        if waiter is not None and left is not None:   # answers over links: read them meanwhile
            others = any(not hasattr(f, "waiter") for f in waiting)   # local futures: look again
            waiter(lambda: all(f.done() for f in waiting) or any(      # every 50 ms
                f.done() and f.exception() is not None for f in waiting),
                time.monotonic() + (min(left, 0.05) if others else left))
            left = 0.0
        done, waiting = concurrent.futures.wait(waiting, left,
                                                concurrent.futures.FIRST_EXCEPTION)
        for future in done:
            if future.exception() is not None:
                raise noted(future.exception(), by_future[future])
        late = [f for f in waiting if f in deadlines and deadline(f) <= time.monotonic()]
        if late:
            pending = by_future[min(late, key=deadlines.__getitem__)]
            name, seconds = pending.role.name, pending.role.timeout_s
            pending.role.failed = True
            raise RoleError(name, f"{name} went silent during {pending.method}: nothing heard "
                                  f"for {seconds:g} s" if hasattr(pending._future, "heard") else
                                  f"{name} did not answer {pending.method} within {seconds:g} s")
    return {future: future.result() for future in by_future}


def call_all(calls: list) -> list:
    """``[role.call(method, *args) for role, method, args in calls]``, the Ray calls started
    together and waited for together (`gather`); roles in this process are called one after
    the other, at the cost of a method call (a protocol's inner loop may call them per step)."""
    if all(type(role) is LocalRole and role.pool is None for role, _, _ in calls):
        return [role.call(method, *args) for role, method, args in calls]
    return gather([role.submit(method, *args) for role, method, args in calls])


def noted(err: BaseException, pending: Pending) -> BaseException:
    """``err`` with a note naming the role and the method it failed in."""
    err.add_note(f"(in {pending.role.name}.{pending.method})")
    return err


class Role:
    """A participant: its ``name`` (for errors), and the object or actor that plays it."""

    def __init__(self, cls, name: str, timeout_s: float | None):
        self.cls, self.name = cls, name
        self.timeout_s = None if timeout_s is None else check_positive("timeout_s", timeout_s)
        self.failed = False
        """Set when the role died or went silent: `teardown` stops it without asking it to
        close."""
        self.started = True
        """Whether it has answered anything yet (an actor may still be starting: its silence
        is then bounded by `startup_s` of its ``timeout_s``)."""

    def silence_s(self) -> float:
        """How long it may stay silent now: ``timeout_s``, or `startup_s` of it while it
        starts."""
        return self.timeout_s if self.started else startup_s(self.timeout_s)

    def call(self, method: str, *args):
        """``method(*args)`` at the role; its value."""
        return gather([self.submit(method, *args)])[0]

    def submit(self, method: str, *args) -> Pending:
        raise NotImplementedError

    def close_within(self, method: str, timeout_s: float) -> None:
        """``method()`` at the role, waited for at most ``timeout_s``."""
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class LocalRole(Role):
    """A role played by an object in this process: calls run at once in the caller's thread,
    or, for a ``background`` role, one at a time on the role's own thread (as an actor serves
    them), so that the caller goes on while a call waits for it."""

    def __init__(self, obj, name: str, timeout_s: float, background: bool = False):
        super().__init__(type(obj), name, timeout_s)
        self.obj = obj
        self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=name) \
            if background else None

    def call(self, method: str, *args):
        if self.pool is not None:
            return gather([self.submit(method, *args)])[0]
        try:
            return getattr(self.obj, method)(*args)
        except Exception as err:
            err.add_note(f"(in {self.name}.{method})")
            raise

    def submit(self, method: str, *args) -> Pending:
        if self.pool is not None:
            return Pending(self, method, future=self.pool.submit(getattr(self.obj, method), *args))
        try:
            return Pending(self, method, value=getattr(self.obj, method)(*args))
        except Exception as err:
            return Pending(self, method, error=err)

    def close_within(self, method: str, timeout_s: float) -> None:
        if self.pool is None:
            self.call(method)             # in this process nothing else can be running
            return
        try:
            self.pool.submit(getattr(self.obj, method)).result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            raise RoleError(self.name, f"{self.name} did not {method} within {timeout_s:g} s "
                                       "(still busy)") from None

    def stop(self) -> None:
        """A background role's thread ends once its current call returns (a call waiting on a
        closed link fails at once); calls not yet started are dropped."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


def spawn(cls, runtime: str, *args, timeout_s: float | None, name: str | None = None,
          concurrency: int = 1, background: bool = False, **kwargs) -> Role:
    """``cls(*args, **kwargs)`` as a role in ``runtime`` (one of `RUNTIMES`), named ``name``
    (default: the class's ``name`` attribute, else the class name).  ``concurrency`` is how
    many calls an actor serves at once (a role whose method waits for another call needs 2 or
    more).  ``background`` runs a local role's calls on its own thread, as an actor's run
    beside the caller: a role whose call waits for the caller (a seat of the engine, whose
    peer is the caller) needs it; an actor always runs in the background.  ``timeout_s``
    bounds each call (required: the run's ``party_timeout_s``, so that no role keeps a deadline
    of its own); None is for a role that drives the protocol,
    whose own calls to the other roles each have their deadline.  Secrets do not belong in
    ``args``: Ray keeps actor-creation arguments in its control store; hand them over by a method
    call."""
    name = name or getattr(cls, "name", None) or cls.__name__
    if runtime == "local":
        return LocalRole(cls(*args, **kwargs), name, timeout_s, background)
    if runtime == "ray":
        from ppml.runtime.ray_roles import ActorRole   # Ray only for a run that uses it
        return ActorRole(cls, args, kwargs, name, timeout_s,
                         check_int("concurrency", concurrency, 1))
    raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}; got {runtime!r}")


def teardown(roles: list, close: str | None = "close",
             close_timeout_s: float = CLOSE_TIMEOUT_S) -> None:
    """Call ``close`` on every role whose class has it (unless ``close`` is None, or the role
    died or went silent: `Role.failed`), waiting at most ``close_timeout_s`` for all of them
    together (a role still busy with a call, after an
    interrupt or another role's failure, is not waited for), then stop every role.  Each step
    runs for each role whatever happened to the others; failures are logged with the role's
    name, never raised, so a teardown in a ``finally`` clause neither hides the run's own error
    nor leaves a role alive."""
    deadline = time.monotonic() + check_positive("close_timeout_s", close_timeout_s)
    closing = [role for role in roles
               if close is not None and hasattr(role.cls, close) and not role.failed]
    if any(isinstance(role, Role) and not isinstance(role, LocalRole) for role in closing):
        from ppml.runtime.ray_roles import answering   # actor roles: Ray is imported already
        closing = answering(closing, min(close_timeout_s, TEARDOWN_CHECK_S))
    for role in closing:
        try:
            role.close_within(close, max(deadline - time.monotonic(), 0.0))
        except Exception as err:            # noqa: BLE001 - every role is stopped regardless
            log.warning("%s did not close: %s", role.name, err)
    progress.flush(progress.END_WAIT_S)          # the roles' last bars, before they stop
    for role in roles:
        try:
            role.stop()
        except Exception as err:            # noqa: BLE001
            log.warning("%s could not be stopped: %s", role.name, err)


def slots(runtime: str) -> int:
    """How many roles run in parallel: 1 in this process, the cluster's CPUs on Ray."""
    return 1 if runtime == "local" else cluster_cpus()
