"""How long a party or role may stay silent before a run fails naming it: one default for every
runtime (the run key ``party_timeout_s`` sets it per run; docs/reliability.md).

A wait for another party is bounded by its silence, not by its work: a Ray actor answers
liveness checks while a long call runs (`ppml.runtime.roles.Liveness`), and an engine party's
peers hear its rounds.  So the default can stay short without cutting a long turn or a large
aggregation short.
"""

LIVENESS = "liveness"
"""A Ray actor's concurrency group for liveness checks: one thread beside its calls
(`ppml.runtime.roles.Liveness`)."""

DEFAULT_TIMEOUT_S = 30.0
"""Seconds of silence after which a wait for a party or role fails, naming it.  Raise it for
clusters whose nodes start on demand (an autoscaler's node may take minutes to come)."""
