"""Bulk work of one party as Ray tasks and actors pinned to that party's own node.

The one place below `ppml.runtime` that talks to Ray, so that `ppml.crypto` and `ppml.mpc` need
not: Hannun et al. (section 5) split the weight updates over arms, and Ciucanu et al.'s LinUCB-DS
(section 5, Fig. 6) spends its time in bulk dot products and decryptions.  Everything here runs
on the caller's node (``NodeAffinitySchedulingStrategy(soft=False)``): a party's plaintexts and
its obfuscators never leave its own machine.

* `run_batches`: the first batch in this process while the others run as pinned tasks;
  `over_rows` cuts arrays into contiguous row ranges (arms) for it, and `workers_for` keeps
  work below its measured crossover size in this process;
* `Resident`: an object (a private key, fixed-base tables) loaded once into pinned actors and
  used batch after batch;
* `Streams`: generator tasks that make values in the background (obfuscators) while the caller
  works, handed over as they arrive.

Why these shapes, and what they measured: docs/paillier.md ("Bulk work") and docs/mpc.md.

With ``workers=1`` everything runs in this process and Ray is never imported: Ray is imported,
and the tasks and actors defined, at the first work that uses other workers (`_remote`), so a
``runtime=local`` run does not pay Ray's import and memory (docs/memory.md).
"""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace

from ppml.checks import check_int


def split(items, parts: int) -> list[list]:
    """Contiguous chunks of ``items`` of near-equal length: min(parts, len(items)) of them (at
    least one)."""
    items = list(items)
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    chunks, start = [], 0
    for index in range(parts):
        end = start + size + (index < extra)
        chunks.append(items[start:end])
        start = end
    return chunks


WORKERS_TIMEOUT_S = 1800.0
"""The longest this process waits for its own workers' share of one call (`run_batches`,
`Resident`): a worker that died or hangs fails the call with a TimeoutError instead of
blocking it for ever; generous, since one share may be minutes of bulk work."""


def _gather(refs: list) -> list:
    """``ray.get(refs)`` within `WORKERS_TIMEOUT_S`."""
    if not refs:
        return []
    import ray
    try:
        return ray.get(refs, timeout=WORKERS_TIMEOUT_S)
    except ray.exceptions.GetTimeoutError:
        raise TimeoutError(f"this party's Ray workers did not finish their share within "
                           f"{WORKERS_TIMEOUT_S:g} s") from None


def check_workers(workers: int) -> int:
    """Return ``workers`` if it is a positive integer, else raise a ValueError."""
    return check_int("workers", workers, 1, what="an integer")


def pinned_here():
    """A strategy that runs a task or actor on this process's node, or fails (soft=False)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if not ray.is_initialized():
        raise RuntimeError("workers > 1 runs Ray tasks on this node: call ray.init() first, "
                           "or use workers=1")
    return NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(),
                                          soft=False)


def _apply(fn, *args):
    """The task of `run_batches` (a Ray task through `_remote`)."""
    return fn(*args)


def in_one_task(fn, *args):
    """``fn(*args)`` in one Ray task pinned to this node (what moving a piece of work out of
    this process costs, for `jobs.bench_per_arm`)."""
    task = _remote().apply.options(scheduling_strategy=pinned_here())
    return _gather([task.remote(fn, *args)])[0]


def run_batches(fn, batches: list[tuple], workers: int) -> list:
    """``[fn(*batch) for batch in batches]``: in this process if ``workers <= 1``; else the
    batches after the first as Ray tasks pinned to this node, submitted before this process
    computes the first.  For public computations and their own outputs only; never pass a
    private key."""
    check_workers(workers)
    if workers == 1 or len(batches) <= 1:
        return [fn(*batch) for batch in batches]
    import ray
    remote = batches[1:]
    uses: dict[int, list] = {}
    for batch in remote:
        for arg in batch:
            uses.setdefault(id(arg), [arg, 0])[1] += 1
    shared = {key: ray.put(arg) for key, (arg, count) in uses.items() if count > 1}
    task = _remote().apply.options(scheduling_strategy=pinned_here())
    refs = [task.remote(fn, *(shared.get(id(arg), arg) for arg in batch)) for batch in remote]
    return [fn(*batches[0])] + _gather(refs)


def workers_for(work: int, workers: int, min_work: int) -> int:
    """How many of ``workers`` to spread ``work`` (a size: elements, or arms x d^2 products) over:
    all of them from ``min_work`` on, else 1 (this process alone).  ``min_work`` is the crossover
    measured for that kind of work (`jobs.bench_per_arm`): below it, moving the operands
    through Ray's object store costs more than the arithmetic it spreads."""
    return workers if work >= min_work else 1


def over_rows(fn, arrays: list, sliced: list, rows: int, workers: int, axis: int = 0) -> list:
    """``[fn(*part) for part]`` over ``workers`` contiguous ranges of ``rows`` rows (by
    `run_batches`: the first range in this process): the arrays flagged in ``sliced`` are cut
    along ``axis``, the others go whole to every call.  Hannun et al., section 5: the weight
    updates are "trivially parallelizable over arms"; the caller joins the parts."""
    batches = []
    for chunk in split(range(rows), workers):
        cut = (slice(None),) * axis + (slice(chunk[0], chunk[-1] + 1),)
        batches.append([a[cut] if s else a for a, s in zip(arrays, sliced)])
    return run_batches(fn, batches, workers)


def _stream(make, source, count: int, chunk: int):
    """A generator task (through `_remote`): ``count`` values of ``make(source, c)``, ``chunk``
    at a time."""
    for start in range(0, count, chunk):
        yield make(source, min(chunk, count - start))


@cache
def _remote() -> SimpleNamespace:
    """This module's Ray task and actor classes (``apply``, ``stream``, ``holder``), made at the
    first work with ``workers > 1``; importing Ray here, not at the top, is what keeps it out of
    a ``workers=1`` run."""
    import ray
    return SimpleNamespace(apply=ray.remote(_apply), stream=ray.remote(_stream),
                           holder=ray.remote(num_cpus=0)(_Holder))


class Streams:
    """Pinned generator tasks making values in the background, taken as they arrive."""

    def __init__(self):
        self._tasks: list = []

    def start(self, make, source, count: int, chunk: int) -> None:
        """A task yielding ``count`` values of ``make(source, c)``, ``chunk`` per message."""
        task = _remote().stream.options(scheduling_strategy=pinned_here())
        self._tasks.append(task.remote(make, source, count, chunk))

    def arrived(self) -> list:
        """The next chunk a task has sent, or [] if none is waiting (finished tasks are dropped
        on the way)."""
        if not self._tasks:
            return []
        import ray
        while self._tasks:
            ready, _ = ray.wait(self._tasks, num_returns=1, timeout=0)
            if not ready:
                return []
            try:
                return ray.get(next(ready[0]))
            except StopIteration:
                self._tasks.remove(ready[0])
        return []

    def __len__(self) -> int:
        """Tasks that may still send values."""
        return len(self._tasks)

    def close(self) -> None:
        """Cancel every task."""
        if self._tasks:
            import ray
            for task in self._tasks:
                ray.cancel(task)
        self._tasks = []


class _Holder:
    """One worker process on this node that holds one object, loaded once (a Ray actor through
    `_remote`)."""

    def load(self, obj) -> None:
        self._obj = obj

    def make(self, make) -> None:
        self._obj = make()

    def map(self, method: str, batches: list[tuple]) -> list:
        return [getattr(self._obj, method)(*batch) for batch in batches]

    def apply(self, fn, args: tuple):
        return fn(self._obj, *args)


class Resident:
    """An object used batch after batch: held in this process, and with ``workers > 1`` also
    loaded once into ``workers - 1`` long-lived Ray actors pinned to this node (``num_cpus=0``:
    ``workers`` alone bounds the parallelism).  For state too costly to ship with every task: a
    private key (`Decryptor`), or LinUCB-DS's fixed-base tables (whose pickle carries only their
    bases; each actor rebuilds them once, while this process goes on: the first `map` waits for
    the loads).  Make it inside the owner's process; the object reaches each actor once, as the
    argument of one actor method call, never as a task or actor-creation argument."""

    def __init__(self, obj, workers: int = 1):
        self.workers = check_workers(workers)
        self._obj = obj
        self._actors = []
        self._loading = []
        if workers > 1:
            holder = _remote().holder.options(scheduling_strategy=pinned_here())
            self._actors = [holder.remote() for _ in range(workers - 1)]
            self._loading = [actor.load.remote(obj) for actor in self._actors]

    @classmethod
    def own(cls, make, workers: int = 1) -> "Resident":
        """``workers`` objects, each made where it is used: ``make()`` in this process and, in
        each of ``workers - 1`` pinned actors, its own ``make()`` there (``make``: a class or
        module function, public code).  For keys that must not move even to the party's own
        workers (each worker's HPKE key pair, `ppml.protocols.masked_lark.helper_keys`); use
        `each`, which gives every object its own arguments."""
        resident = cls(None, 1)
        resident.workers = check_workers(workers)
        resident._obj = make()
        if workers > 1:
            holder = _remote().holder.options(scheduling_strategy=pinned_here())
            resident._actors = [holder.remote() for _ in range(workers - 1)]
            resident._loading = [actor.make.remote(make) for actor in resident._actors]
        return resident

    def each(self, fn, args: list[tuple]) -> list:
        """``[fn(object_k, *args[k]) for k]``: ``fn`` (a module function) on every object with
        its own arguments (``workers`` tuples, the first for this process's object), the
        actors' calls submitted first."""
        if self._obj is None:
            raise RuntimeError("this Resident was closed")
        if len(args) != self.workers:
            raise ValueError(f"each needs one argument tuple per object ({self.workers}), got "
                             f"{len(args)}")
        if self._loading:
            _gather(self._loading)
            self._loading = []
        refs = [actor.apply.remote(fn, a) for actor, a in zip(self._actors, args[1:])]
        return [fn(self._obj, *args[0])] + _gather(refs)

    def map(self, method: str, batches: list[tuple]) -> list:
        """``[obj.method(*batch) for batch in batches]``, in ``workers`` contiguous shares: the
        actors' shares submitted first (one call each), the first share computed here
        meanwhile."""
        if self._obj is None:
            raise RuntimeError("this Resident was closed")
        if self._loading:
            _gather(self._loading)
            self._loading = []
        shares = split(batches, self.workers)
        refs = [actor.map.remote(method, share) for actor, share in zip(self._actors, shares[1:])]
        out = [getattr(self._obj, method)(*batch) for batch in shares[0]]
        for part in _gather(refs):                        # no refs: Ray not needed
            out.extend(part)
        return out

    def close(self) -> None:
        """Drop the object and stop the actors (their copies go with their processes)."""
        if self._actors:
            import ray
            for actor in self._actors:
                ray.kill(actor)
        self._actors, self._loading, self._obj = [], [], None

    def __reduce__(self):
        raise TypeError("a Resident may hold its owner's secrets and cannot be pickled; make one "
                        "inside the owner's process")
