"""How parties run: the one layer of ppml that talks to Ray (with ppml/parallel.py below it).

* `spmd`: ``spmd.run(program, parties, runtime=...)`` runs one program in every party of the
  secret-sharing engine, in this process (``local``) or as Ray actors (``ray``: `ray_spmd`,
  `party`, `dealer_actor`, `links`, `wire`, `mailbox`, `link_comm`, `placement`);
* `roles`: the participants of role-based protocols (LinUCB-DS, Samba, the bandit's world),
  spawned as objects or actors, called with a deadline, torn down together;
* `cluster`: starting or joining Ray, in one place.

docs/architecture.md and docs/ray-runtime.md describe the design.
"""
