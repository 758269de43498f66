"""Ray plumbing: party actors that hold only their own secrets, the dealer actor, and the links.

``ppml.mpc.run(program, parties, runtime="ray", ...)`` runs a protocol here; see
docs/ray-runtime.md for the design and its measured round latency.
"""
