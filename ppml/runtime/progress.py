"""Progress bars: one per phase of a run, on the driver's stderr, whatever process does the work.

Every long phase (key generation, an offline pool or the dealer, the steps) opens one `bar`
and advances it (a phase of one piece: `stage`); what the bar does depends on the process it
is opened in:

* in a driver (``python -m jobs.run``, a benchmark, a federated party's process): a tqdm bar
  on stderr, if this process shows progress (`showing`: on by default; every registered
  experiment runs within ``showing(config.progress)``);
* in a Ray worker (a party actor, a role actor): no output of its own, which Ray would
  forward line by line with a ``(PartyActor pid=...)`` prefix; the step counts go to the
  driver's relay (`Relay`), and the driver draws the bar.  Without a relay (the driver shows
  no progress) the bar is silent.

A relayed update carries the bar's description, unit, total and a count: public numbers, never
a value of the protocol.  The driver creates its relay when a Ray run starts (`relay`, called
by the Ray runtime before it makes actors) and polls it from a background thread, every
`POLL_S`; `flush` applies what is waiting (the runtime calls it when a Ray run ends, so a
phase's bar is complete before the driver prints anything else).  Why a relay polled by the
driver and not ``ray.experimental.tqdm_ray``: docs/decisions.md, "Progress: one bar per
phase, drawn by the driver".
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm import tqdm

POLL_S = 0.25
"""How often the driver polls its relay, and a relayed bar sends its count at most."""
WAIT_S = 5.0
"""The longest a bar waits for the relay (its last count, the driver's poll); then it gives up
on the bar, never on the run."""
END_WAIT_S = 30.0
"""The longest the end of a Ray run waits for the relay (`flush`), so that a phase's bar is
complete before the driver prints anything else, even while the relay's worker starts on a busy
machine."""
RELAY_NAME = "ppml-progress-relay"
"""The relay's actor name, in the driver's Ray namespace (its workers look it up by name)."""

_shown = True                  # this process shows progress (`showing`)
_lock = threading.Lock()       # guards _relay, _poller and _drawn
_relay = None                  # the driver's relay actor, once a Ray run started
_poller = None                 # the driver's thread polling it
_drawn: dict = {}              # relayed bar id -> the driver's tqdm


@contextmanager
def showing(shown: bool) -> Iterator[None]:
    """Within it, this process shows progress or not (``progress`` of the run's config): a
    driver draws bars, and its Ray workers' relayed bars, only if so.  The previous setting
    comes back afterwards."""
    global _shown
    before, _shown = _shown, bool(shown)
    try:
        yield
    finally:
        _shown = before


def _ray():
    """Ray, if this process has imported it (a run that never uses Ray does not import it for
    its bars: docs/memory.md)."""
    return sys.modules.get("ray")


def _in_ray_worker() -> bool:
    ray = _ray()
    return ray is not None and ray.is_initialized() and \
        ray.get_runtime_context().worker.mode == ray.WORKER_MODE


class Bar:
    """One phase's bar: ``update(n)`` after n more units, ``close()`` at the end (or use it as
    a context manager).  This base bar shows nothing: the bar of a disabled phase."""

    def update(self, n: int = 1) -> None:
        """``n`` more units of the phase done."""

    def close(self) -> None:
        """The phase is over."""

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Drawn(Bar):
    """A tqdm bar on this process's stderr."""

    def __init__(self, desc: str, total: int | None, unit: str, initial: int):
        self._bar = tqdm(desc=desc, total=total, unit=unit, initial=initial, file=sys.stderr,
                         dynamic_ncols=True)

    def update(self, n: int = 1) -> None:
        self._bar.update(n)

    def reach(self, count: int) -> None:
        """``count`` units done in all (a relayed bar's count)."""
        self._bar.update(count - self._bar.n)

    def close(self) -> None:
        self._bar.close()


class _Relayed(Bar):
    """A Ray worker's bar: its count sent to the driver's relay at most every `POLL_S` (the
    sends are not waited for; the last, at `close`, is)."""

    def __init__(self, relay, desc: str, total: int | None, unit: str, initial: int):
        self._relay, self._id = relay, uuid.uuid4().hex
        self._count, self._sent_at = initial, time.monotonic()
        self._relay.post.remote(("open", self._id, desc, total, unit, initial))

    def update(self, n: int = 1) -> None:
        self._count += n
        if self._relay is not None and time.monotonic() - self._sent_at >= POLL_S:
            self._relay.post.remote(("count", self._id, self._count))
            self._sent_at = time.monotonic()

    def close(self) -> None:
        if self._relay is not None:
            relay, self._relay = self._relay, None
            ray = _ray()
            try:
                ray.get(relay.post.remote(("close", self._id, self._count)), timeout=WAIT_S)
            except ray.exceptions.RayError:    # the driver is gone: a bar never fails a run
                pass


def bar(desc: str, total: int | None, unit: str = "step", initial: int = 0,
        enabled: bool = True) -> Bar:
    """A bar for one phase of ``total`` ``unit``s (``initial`` of them already done: a resumed
    run), named ``desc``.  ``enabled=False`` (a party that is not the one showing this phase)
    gives a silent bar; so does a process that shows no progress.  In a Ray worker the bar is
    drawn by the driver (module docstring)."""
    if not enabled:
        return Bar()
    if _in_ray_worker():
        try:
            relay = _ray().get_actor(RELAY_NAME)
        except ValueError:                  # the driver shows no progress
            return Bar()
        return _Relayed(relay, desc, total, unit, initial)
    return _Drawn(desc, total, unit, initial) if _shown else Bar()


def track(items, desc: str, total: int | None = None, unit: str = "step", initial: int = 0,
          enabled: bool = True):
    """The elements of ``items``, one `bar` step each (``total``: ``len(items)`` by default)."""
    total = len(items) if total is None and hasattr(items, "__len__") else total
    with bar(desc, total, unit, initial, enabled) as phase:
        for item in items:
            yield item
            phase.update()


@contextmanager
def stage(desc: str, unit: str = "stage", enabled: bool = True) -> Iterator[None]:
    """A bar of one ``unit`` around one phase (a set-up, a key generation): it reaches 1/1 when
    the phase ends without an error, and closes at 0/1 if the phase fails.  ``enabled`` as in
    `bar`."""
    with bar(desc, 1, unit, enabled=enabled) as phase:
        yield
        phase.update()


class Relay:
    """The driver's mailbox for its workers' bars: ``post`` an event, ``take`` all waiting (a
    Ray actor of no CPU, made by `relay`)."""

    def __init__(self):
        self._events: list = []

    def post(self, event: tuple) -> None:
        self._events.append(event)

    def take(self) -> list:
        events, self._events = self._events, []
        return events


def relay() -> None:
    """In a driver that shows progress, with Ray running: make the relay its Ray workers' bars
    report to (once) and start polling it.  Elsewhere nothing."""
    global _relay, _poller
    ray = _ray()
    if not _shown or ray is None or not ray.is_initialized() or _in_ray_worker():
        return
    with _lock:
        if _relay is None:
            _relay = ray.remote(num_cpus=0)(Relay).options(name=RELAY_NAME,
                                                           get_if_exists=True).remote()
        if _poller is None or not _poller.is_alive():
            _poller = threading.Thread(target=_poll, name="progress-relay", daemon=True)
            _poller.start()


def _poll() -> None:
    while _relay is not None:
        time.sleep(POLL_S)
        try:
            flush()
        except Exception:            # noqa: BLE001 - Ray shut down under the poll
            with _lock:
                _forget()


def flush(wait_s: float = WAIT_S) -> None:
    """Draw every update waiting in the relay (nothing without one), waiting for it at most
    ``wait_s``: a relay slower than that (its worker still starting on a busy machine) keeps its
    updates for the next flush; a dead one is forgotten.  A bar never fails a run."""
    with _lock:
        if _relay is None:
            return
        ray = _ray()
        if not ray.is_initialized():
            _forget()
            return
        try:
            events = ray.get(_relay.take.remote(), timeout=wait_s)
        except ray.exceptions.GetTimeoutError:
            return
        except ray.exceptions.RayError:       # the relay died
            _forget()
            return
        for kind, key, *rest in events:
            if kind == "open" and _shown:
                desc, total, unit, initial = rest
                _drawn[key] = _Drawn(desc, total, unit, initial)
            elif key in _drawn:
                _drawn[key].reach(rest[0])
                if kind == "close":
                    _drawn.pop(key).close()


def close() -> None:
    """Before Ray shuts down: draw what is waiting and forget the relay (the next Ray run makes
    a new one)."""
    flush(END_WAIT_S)
    with _lock:
        _forget()


def _forget() -> None:
    """The relay is gone (Ray shut down): close its bars."""
    global _relay
    _relay = None
    for drawn in _drawn.values():
        drawn.close()
    _drawn.clear()
