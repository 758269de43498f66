"""Roles played by Ray actors (``runtime="ray"``), and the waits for them.

`ppml.runtime.roles` is the roles' interface and their form in this process; a role spawned
with ``runtime="ray"`` is an `ActorRole` from here, and `roles.gather` waits for its calls with
`wait`.  Split out so that a run without Ray never imports it (docs/memory.md):
`ppml.runtime.roles` imports this module only when an actor role is spawned or waited for.

* ``timeout_s`` bounds a role's silence, not its work: an actor's call may run as long as it
  needs while the actor answers liveness checks (`LIVENESS`, answered on a thread of their own
  beside the call); an actor that dies, or that stops answering them for ``timeout_s``, fails
  the wait with `RoleError`, which names the role and the method (`Liveness`);
* every wait also checks the roles this process spawned that no call waits for (`watched`),
  so that one killed or stopped while idle is named within its ``timeout_s``.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref

import ray

from ppml.runtime import progress
from ppml.runtime.cluster import ensure_ray
from ppml.runtime.deadlines import LIVENESS, STARTUP_FACTOR
from ppml.runtime.roles import Pending, Role, RoleError, noted

CHECKS_PER_TIMEOUT = 4
"""A busy actor is checked every ``timeout_s`` / 4 (at most every `CHECK_EVERY_S`)."""
CHECK_EVERY_S = 5.0
STOP_TIMEOUT_S = 5.0
"""How long stopping an actor may take before it counts as a failure (logged by `teardown`)."""

log = logging.getLogger(__name__)


def wait(refs: dict) -> dict:
    """The value of every ref.  The first failure raises as soon as it is known: a call's own
    error, a dead role, or a role that left a liveness check unanswered for its ``timeout_s``
    (`Liveness`; naming that role, not another still at work).  The roles this process spawned
    and has not stopped are checked too while they are idle (`watched`): a role killed or
    stopped between two of its calls is named within its ``timeout_s``, not when the run
    next calls it."""
    values, pending = {}, list(refs)
    waited = ", ".join(dict.fromkeys(f"{p.role.name}.{p.method}" for p in refs.values()))
    liveness = Liveness({p.role for p in refs.values()} | watched(), waited)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1, timeout=liveness.next_check())
        if ready and pending:                       # and every other call already answered
            more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
            ready += more
        for ref in ready:
            values[ref] = _value(refs[ref])
            liveness.heard(refs[ref].role)
            refs[ref].role.started = True
        liveness.check({refs[ref].role: refs[ref].method for ref in pending})
    return values


_SPAWNED: "weakref.WeakSet[ActorRole]" = weakref.WeakSet()
"""The actor roles this process spawned and has not stopped (`watched`)."""
_SPAWNED_LOCK = threading.Lock()
"""Guards `_SPAWNED`: an actor serving calls on several threads may spawn or stop roles."""


def watched() -> set:
    """The roles every wait of this process checks, busy or idle: the actors it spawned that
    are neither stopped nor known to have failed, and that have a ``timeout_s``."""
    with _SPAWNED_LOCK:
        return {role for role in _SPAWNED if not role.failed and role.timeout_s is not None}


class Liveness:
    """Liveness checks of the actors a wait watches: those whose calls it waits for, and the
    idle roles of `watched`.

    Each role is sent a check (`ActorRole.ping`) once it has been quiet for a quarter of its
    ``timeout_s``; a check unanswered for ``timeout_s`` fails the wait, naming the role and the
    call it was running (or that it was idle, and what the wait was for).  Roles with
    ``timeout_s`` None are never checked."""

    def __init__(self, roles: set, waited: str):
        start = time.monotonic()
        self.last = {role: start for role in roles if role.timeout_s is not None}
        """role -> when it last answered (or the wait began)."""
        self.checks = {}
        """role -> (the ref of its check in flight, when it was sent)."""
        self.waited = waited
        """The calls the wait is for, as "role.method, ..." (named when an idle role fails)."""

    def heard(self, role) -> None:
        if role in self.last:
            self.last[role] = time.monotonic()

    def next_check(self) -> float | None:
        """How long the wait may block before `check` should look again (None: for ever, when
        no role is checked)."""
        return min((_interval(role) for role in self.last), default=None)

    def check(self, busy: dict) -> None:
        """Look at every role still checked: ``busy`` maps the roles whose calls are still
        awaited to their methods; the others are checked while they stay in `watched`."""
        now = time.monotonic()
        idle = watched()
        for role in self.last:
            if role not in busy and role not in idle:
                continue
            doing = busy.get(role) or f"its idle time (the run waiting for {self.waited})"
            if role in self.checks:
                ref, sent = self.checks[role]
                answered, _ = ray.wait([ref], timeout=0)
                if answered:
                    del self.checks[role]
                    _value(Pending(role, doing, ref=ref))   # a dead role raises
                    self.heard(role)
                    role.started = True
                elif now - sent > role.silence_s():
                    role.failed = True
                    raise RoleError(role.name, _silent(role, doing))
            elif now - self.last[role] >= _interval(role):
                self.checks[role] = (role.ping(), now)


def _silent(role, method: str) -> str:
    """Why a wait for ``role``'s ``method`` failed: it stopped answering, or never started."""
    if role.started:
        return (f"{role.name} stopped answering during {method}: no reply to a liveness check "
                f"within {role.timeout_s:g} s")
    return (f"{role.name} did not start within {role.silence_s():g} s ({STARTUP_FACTOR} x "
            f"timeout_s: its process and constructor; is the machine overloaded?)")


def _interval(role) -> float:
    return min(role.timeout_s / CHECKS_PER_TIMEOUT, CHECK_EVERY_S)


def _value(pending: Pending):
    """A finished Ray call's value, or its failure naming the role."""
    try:
        return ray.get(pending._ref)
    except ray.exceptions.RayTaskError as err:
        raise noted(err, pending)
    except ray.exceptions.RayActorError as err:
        pending.role.failed = True
        raise RoleError(pending.role.name, f"{pending.role.name} died during "
                                           f"{pending.method}: {err}") from err


class ActorRole(Role):
    """A role played by a Ray actor (no CPU reserved); the handle pickles with the role, so a
    role can be handed to another role that calls it."""

    def __init__(self, cls, args: tuple, kwargs: dict, name: str, timeout_s: float,
                 concurrency: int = 1):
        super().__init__(cls, name, timeout_s)
        self.started = False
        ensure_ray()
        progress.relay()                   # before the actor: its bars go to the driver
        actor = ray.remote(num_cpus=0, max_concurrency=concurrency,
                           concurrency_groups={LIVENESS: 1})(cls)
        self.actor = actor.remote(*args, **kwargs)
        with _SPAWNED_LOCK:
            _SPAWNED.add(self)

    @classmethod
    def attach(cls, actor, name: str, timeout_s: float) -> "ActorRole":
        """A role for an actor made elsewhere (declared with a `LIVENESS` concurrency group),
        so that waits for it count its silence (the Ray runtime's dealer)."""
        role = cls.__new__(cls)
        Role.__init__(role, type(actor), name, timeout_s)
        role.actor = actor
        return role

    def submit(self, method: str, *args) -> Pending:
        return Pending(self, method, ref=getattr(self.actor, method).remote(*args))

    def ping(self):
        """A liveness check: Ray's own ready call, on the actor's `LIVENESS` thread."""
        return self.actor.__ray_ready__.options(concurrency_group=LIVENESS).remote()

    def close_within(self, method: str, timeout_s: float) -> None:
        ref = getattr(self.actor, method).remote()
        try:
            ray.get(ref, timeout=timeout_s)
        except ray.exceptions.GetTimeoutError:
            raise RoleError(self.name, f"{self.name} did not {method} within {timeout_s:g} s "
                                       "(still busy); stopping it") from None

    def stop(self) -> None:
        """Kill the actor and wait (a few seconds at most) until Ray reports it dead, so that
        nothing of the role runs after its teardown (``ray.kill`` only starts the kill)."""
        with _SPAWNED_LOCK:
            _SPAWNED.discard(self)
        ray.kill(self.actor)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                ray.get(self.actor.__ray_ready__.remote(), timeout=STOP_TIMEOUT_S)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                return
            time.sleep(0.01)
        raise RoleError(self.name, f"{self.name} was still alive {STOP_TIMEOUT_S:g} s after "
                                   "it was killed")


def answering(roles: list, within_s: float) -> list:
    """The roles that answer a liveness check within ``within_s`` (a role in this process
    always does); the others are marked `Role.failed`: a role stopped or frozen in another
    role's call, which the caller never saw fail, is not waited for to close."""
    checks = {role: role.ping() for role in roles if isinstance(role, ActorRole)}
    if checks:
        ray.wait(list(checks.values()), num_returns=len(checks), timeout=within_s)
    for role, ref in checks.items():
        if not ray.wait([ref], timeout=0)[0]:
            role.failed = True
            log.warning("%s did not answer a liveness check within %g s: stopping it without "
                        "closing", role.name, within_s)
    return [role for role in roles if not role.failed]
