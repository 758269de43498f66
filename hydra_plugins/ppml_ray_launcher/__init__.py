"""``hydra/launcher=ray``: the jobs of a ``python -m jobs.run -m`` sweep at once, as Ray tasks on
the cluster (`ray_launcher`).  Hydra instantiates launchers from the ``hydra_plugins`` namespace
package only (docs/architecture.md, "hydra_plugins/")."""
