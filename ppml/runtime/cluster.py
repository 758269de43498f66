"""The one place where ppml starts or joins Ray.

`ensure_ray` starts a private local instance on first need (a run with ``runtime=ray`` or
``workers > 1`` and no cluster joined); `connected` joins the cluster a run names
(``ray_address``) or starts a private one, and leaves it when the run ends; `warm_up` starts
worker processes before a benchmark's timed part.

A private instance runs its workers at the driver's priority (`start_local`); a cluster joined
keeps its own settings.

Ray is imported by each function when it is called, not with this module: the modules that
start Ray only for ``runtime=ray`` or ``workers > 1`` import this one either way, and a run
without Ray should not pay Ray's import (docs/memory.md).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ppml.runtime import progress
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S


WORKER_NICENESS = 0
"""How much less priority a private instance's workers get than the driver that starts it.
Ray's default, 15, keeps its own processes responsive under busy workers; but ppml's workers are
the run's parties and roles, which wait on each other and on the driver every round: on a shared
machine Samba's step took 41 ms at 15 against 29-33 ms at 0 (docs/ray-runtime.md, "Overhead
over the local runtime").  Workers of a driver run under ``nice`` keep its priority, and so
stay below other work as the driver does."""


def start_local(num_cpus: int | None = None, dashboard: bool = False) -> None:
    """Start a private local Ray instance with ``num_cpus`` (default: every CPU here), its
    workers at the driver's priority (`WORKER_NICENESS`)."""
    import ray
    ray.init(address="local", num_cpus=num_cpus or os.cpu_count(), include_dashboard=dashboard,
             _system_config={"worker_niceness": WORKER_NICENESS})


def ensure_ray() -> None:
    """Start a private local Ray instance (every CPU, no dashboard) unless Ray is running."""
    import ray
    if not ray.is_initialized():
        start_local()


@contextmanager
def connected(address: str | None = None, num_cpus: int | None = None,
              dashboard: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S) -> Iterator[None]:
    """Join the cluster at ``address`` ('auto' inside ``ray job submit``, or host:port), or
    with None start a private local instance with ``num_cpus`` (default: every CPU of this
    machine); leave it afterwards.  If Ray is already running here, use it and leave it on.
    A host:port that does not answer within ``timeout_s`` (Ray itself would retry for many
    minutes) raises ConnectionError naming it."""
    import ray
    if address is not None:
        check_reachable(address, timeout_s)
    if ray.is_initialized():
        yield
        return
    if address is None:
        start_local(num_cpus, dashboard)
    else:
        ray.init(address=address)
    try:
        yield
    finally:
        progress.close()
        ray.shutdown()


@contextmanager
def two_local_nodes(cpus: int, store_bytes: int) -> Iterator[None]:
    """A local two-node Ray cluster (the head and a second raylet on this machine), each node
    with ``cpus`` CPUs, an object store of ``store_bytes`` and the custom resource ``party_<i>``,
    this process joined to it; shut down afterwards.  A RuntimeError if Ray already runs here."""
    import ray
    from ray.cluster_utils import Cluster
    if ray.is_initialized():
        raise RuntimeError("a two-node cluster is made here: run it where Ray is not running in "
                           "this process")
    made = Cluster(initialize_head=True, head_node_args={
        "num_cpus": cpus, "resources": {"party_0": 1}, "include_dashboard": False,
        "object_store_memory": store_bytes})
    made.add_node(num_cpus=cpus, resources={"party_1": 1}, object_store_memory=store_bytes)
    ray.init(address=made.address)
    try:
        yield
    finally:
        progress.close()
        ray.shutdown()
        made.shutdown()


def check_reachable(address: str, timeout_s: float) -> None:
    """ConnectionError naming ``address`` (host:port) unless a TCP connection to it opens
    within ``timeout_s``; other forms ('auto', ray://...) are left to Ray."""
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or "/" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ConnectionError(f"ray_address={address}: no Ray cluster answers there within "
                              f"{timeout_s:g} s (party_timeout_s): {exc}") from None


def _pid() -> int:
    return os.getpid()


def warm_up(workers: int) -> None:
    """Start ``workers`` worker processes now (untimed), by running a trivial task on each."""
    import ray
    ray.get([ray.remote(_pid).remote() for _ in range(workers)])


NODE_ADDRESS_ENV = "PPML_NODE_ADDRESS"
"""Where a federated party's own listeners bind (``jobs.party`` sets it to the party's host in
peers.yaml)."""


def node_address() -> str:
    """The address this process's peers reach it at: ``$PPML_NODE_ADDRESS`` if set (a
    federated party), else its Ray node's IP, or the loopback interface when Ray is not running
    here (every party in this process)."""
    if os.environ.get(NODE_ADDRESS_ENV):
        return os.environ[NODE_ADDRESS_ENV]
    ray = sys.modules.get("ray")            # never imported here: not running here either
    return ray.util.get_node_ip_address() if ray and ray.is_initialized() else "127.0.0.1"


def cluster_cpus() -> int:
    """CPUs of the cluster this process is part of (starting a private instance if none)."""
    import ray
    ensure_ray()
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
