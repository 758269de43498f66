"""Bulk Paillier work split into chunks: in this process, or as Ray tasks and actors pinned to
this node.

LinUCB-DS spends its time in three steps (Ciucanu et al., section 5, Fig. 6): theta_hat*
(d encrypted dot products), the list of B_i* (K dot products) and Comp's K decryptions.  The
authors parallelise them with ``multiprocessing`` and ship the secret key to the worker
processes every round.  Here:

* `run_batches` runs a function over batches in-process (``workers <= 1``), or the first batch
  in-process while the others run as Ray tasks pinned to the caller's node
  (``NodeAffinitySchedulingStrategy(soft=False)``), submitted first so that both overlap: the
  inputs (a party's plaintexts) and outputs (obfuscators r^n, which decrypt whatever they
  obfuscate) never leave the node.  Arguments shared by several tasks are put in the object
  store once.
* `Resident` holds an object in-process and, with ``workers > 1``, in ``workers - 1``
  long-lived Ray actors pinned to the owner's node; `Decryptor` is a private key held that way.
  A batch of work is one share per process: the actors' shares are submitted first (one actor
  call each), the owner's process computes its own share meanwhile, then collects theirs.  A
  round of LinUCB-DS thus costs one actor call per extra worker and step, overlapped with the
  owner's own share, instead of one call per chunk with the owner idle.  The key reaches each
  actor once, as the argument of one actor method call (worker to worker on that node); it is
  never a task argument and never an actor *creation* argument, which Ray keeps in the GCS
  (possibly on another node) to restart actors.  The actors are not restartable: if one dies,
  calls raise and a new Decryptor must be made.
"""

from __future__ import annotations

import functools

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from ppml.checks import check_int
from ppml.crypto.paillier import ops


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


def check_workers(workers: int) -> int:
    """Return ``workers`` if it is a positive integer, else raise a ValueError."""
    return check_int("workers", workers, 1, what="an integer")


def pinned_here() -> NodeAffinitySchedulingStrategy:
    """A strategy that runs a task or actor on this process's node, or fails (soft=False)."""
    if not ray.is_initialized():
        raise RuntimeError("workers > 1 runs Ray tasks on this node: call ray.init() first, "
                           "or use workers=1")
    return NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(),
                                          soft=False)


@functools.cache
def _as_task(fn):
    return ray.remote(fn)


def run_batches(fn, batches: list[tuple], workers: int) -> list:
    """``[fn(*batch) for batch in batches]``: in this process if ``workers <= 1``; else the
    batches after the first as Ray tasks pinned to this node, submitted before this process
    computes the first.  For public computations and their own outputs only; never pass a
    private key."""
    check_workers(workers)
    if workers == 1 or len(batches) <= 1:
        return [fn(*batch) for batch in batches]
    remote = batches[1:]
    uses: dict[int, list] = {}
    for batch in remote:
        for arg in batch:
            uses.setdefault(id(arg), [arg, 0])[1] += 1
    shared = {key: ray.put(arg) for key, (arg, count) in uses.items() if count > 1}
    task = _as_task(fn).options(scheduling_strategy=pinned_here())
    refs = [task.remote(*(shared.get(id(arg), arg) for arg in batch)) for batch in remote]
    return [fn(*batches[0])] + ray.get(refs)


def dot_table(public_key, encrypted_rows, plain_rows, workers: int = 1) -> list:
    """`ops.dot_table` split over ``workers`` chunks of the longer of the two row lists."""
    if len(encrypted_rows) >= len(plain_rows):
        parts = run_batches(ops.dot_table, [(public_key, chunk, plain_rows)
                                            for chunk in split(encrypted_rows, workers)], workers)
        return [row for part in parts for row in part]
    parts = run_batches(ops.dot_table, [(public_key, encrypted_rows, chunk)
                                        for chunk in split(plain_rows, workers)], workers)
    return [[c for part in parts for c in part[row]] for row in range(len(encrypted_rows))]


@ray.remote(num_cpus=0)
class _Holder:
    """One worker process on this node that holds one object, loaded once."""

    def load(self, obj) -> None:
        self._obj = obj

    def map(self, method: str, batches: list[tuple]) -> list:
        return [getattr(self._obj, method)(*batch) for batch in batches]


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
            holder = _Holder.options(scheduling_strategy=pinned_here())
            self._actors = [holder.remote() for _ in range(workers - 1)]
            self._loading = [actor.load.remote(obj) for actor in self._actors]

    def map(self, method: str, batches: list[tuple]) -> list:
        """``[obj.method(*batch) for batch in batches]``, in ``workers`` contiguous shares: the
        actors' shares submitted first (one call each), the first share computed here
        meanwhile."""
        if self._obj is None:
            raise RuntimeError("this Resident was closed")
        if self._loading:
            ray.get(self._loading)
            self._loading = []
        shares = split(batches, self.workers)
        refs = [actor.map.remote(method, share) for actor, share in zip(self._actors, shares[1:])]
        out = [getattr(self._obj, method)(*batch) for batch in shares[0]]
        for part in ray.get(refs) if refs else []:        # ray.get would start Ray
            out.extend(part)
        return out

    def close(self) -> None:
        """Drop the object and stop the actors (their copies go with their processes)."""
        for actor in self._actors:
            ray.kill(actor)
        self._actors, self._loading, self._obj = [], [], None

    def __reduce__(self):
        raise TypeError("a Resident may hold its owner's secrets and cannot be pickled; make one "
                        "inside the owner's process")


class Decryptor:
    """Bulk CRT decryption by the key owner, in-process or split over this process and
    ``workers - 1`` actors (`Resident`).

    Make it once, inside the key owner's process (its party actor); the actors sit on that
    process's node.  Pick ``workers`` no larger than the cores the owner may use.
    ``decrypt_raw`` has the signature of `keys.PrivateKey.decrypt_raw`, so either can decrypt an
    `EncryptedArray`.  A Decryptor cannot be pickled: the key stays with its owner.
    """

    def __init__(self, private_key, workers: int = 1):
        self.public_key = private_key.public_key
        self._holder = Resident(private_key, workers)
        self.workers = workers

    def decrypt_raw(self, ciphertexts) -> list:
        """Residues in [0, n) of the ciphertexts, in order (see `keys.PrivateKey.decrypt_raw`)."""
        chunks = split(ciphertexts, self.workers)
        parts = self._holder.map("decrypt_raw", [(chunk,) for chunk in chunks])
        return [m for part in parts for m in part]

    def close(self) -> None:
        """Stop the actors (their copies of the key go with their processes)."""
        self._holder.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        raise TypeError("a Decryptor holds a private key and cannot be pickled; make one inside "
                        "the key owner's process")
