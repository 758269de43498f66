"""One actor per node of a local multi-node cluster, called together: the parties of a
benchmark placed on the nodes of `cluster.two_local_nodes` (``party_<i>`` resources)."""

from __future__ import annotations

ACTOR_TIMEOUT_S = 3600.0
"""The longest a call on every node's actor is waited for (a benchmark's largest size)."""


def one_per_node(cls, nodes: int) -> list:
    """An actor of ``cls`` (one CPU) on each node ``party_0`` .. ``party_<nodes-1>``."""
    import ray
    actor = ray.remote(num_cpus=1)(cls)
    return [actor.options(resources={f"party_{i}": 1}).remote() for i in range(nodes)]


def call_all(actors: list, method: str, *args) -> list:
    """``method(*args)`` on every actor at once; their results, in order."""
    import ray
    return ray.get([getattr(a, method).remote(*args) for a in actors], timeout=ACTOR_TIMEOUT_S)
