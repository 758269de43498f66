"""How long a party or role may stay silent before a run fails naming it: one default for every
runtime (the run key ``party_timeout_s`` sets it per run; docs/reliability.md).

A wait for another party is bounded by its silence, not by its work: a Ray actor answers
liveness checks while a long call runs (`ppml.runtime.ray_roles.Liveness`), and an engine party's
peers hear its rounds.  So the default can stay short without cutting a long turn or a large
aggregation short.
"""

LIVENESS = "liveness"
"""A Ray actor's concurrency group for liveness checks: one thread beside its calls
(`ppml.runtime.ray_roles.Liveness`)."""

DEFAULT_TIMEOUT_S = 30.0
"""Seconds of silence after which a wait for a party or role fails, naming it.  Raise it for
clusters whose nodes start on demand (an autoscaler's node may take minutes to come)."""

STARTUP_FACTOR = 4
"""A party or role that has not started yet (its process being made, its imports, its
constructor: a Paillier key pair, say) may take this many times ``timeout_s`` before a wait for
it fails: starting a process on a loaded machine takes far longer than a round (`startup_s`)."""

LOST_EXIT = 75
"""A federated party's exit code when it failed because a peer died or went silent (EX_TEMPFAIL:
the run may go on from its checkpoints), as opposed to 1 for an error of its own."""


def startup_s(timeout_s: float) -> float:
    """How long a party or role may take to start (`STARTUP_FACTOR` x ``timeout_s``); one that
    dies meanwhile still fails the wait at once."""
    return STARTUP_FACTOR * timeout_s


def peer_lost(error: BaseException) -> bool:
    """Whether ``error`` says a party or role died or went silent (a run with checkpoints may
    then resume), not that something was wrong with the run itself (that would fail again).

    A timeout or a broken connection is a loss; so is the runtimes' own report of one: an error
    with a ``lost`` attribute (the Ray runtime's `PartyError`, the federated launcher's
    `PartyFailed`) says which it is, and a role's `RoleError` is raised only for a role that
    died or stopped answering (a method's own error keeps its type), also when a role that
    called it raised it on (Ray's error of that call is then a `RoleError` too)."""
    if isinstance(error, (TimeoutError, ConnectionError)):
        return True
    if hasattr(error, "lost"):
        return bool(error.lost)
    return any(kind.__name__ == "RoleError" for kind in type(error).__mro__)
