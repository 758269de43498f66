"""Run one experiment: ``python -m jobs.run [experiment=<name>] [key=value ...]``.

Hydra composes conf/config.yaml with the overrides (``-m`` sweeps over comma-separated values),
`load_config` validates it, the experiment's inputs are loaded and checked
(`registry.check_inputs`), and only then is Ray started or joined when ``runtime=ray``; the
registered experiment runs, and its rows go to one Parquet file in ``results_dir``. The summary
table and the path written are printed at the end.

A config or input error (a bad key or value, a missing dataset) is refused before anything
starts, in one line with exit status 2 (`jobs.cli`; ``--verbose`` or HYDRA_FULL_ERROR=1 shows
its traceback); in a sweep (``-m``) it stops the sweep at the job it refuses.  With
``-m hydra/launcher=ray`` the jobs run at once as Ray tasks (hydra_plugins/ppml_ray_launcher):
a refused job fails alone, and the sweep ends with its error once the others have ended.
"""

import datetime as dt
import logging
import secrets
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from jobs import cli
from ppml.experiments import checkpointing
from ppml.experiments import registry  # importing the package registers every experiment
from ppml.experiments.config import RunConfig, load_config, refuse_renamed
from ppml.experiments.results import RunOutput, write_run
from ppml.experiments.table import FULL_ROWS_NOTE
from ppml.runtime import cluster

log = logging.getLogger(__name__)

# Absolute, so `main` finds the configs however it is started: `python -m jobs.run` or imported
# by another script (Hydra would resolve a relative path against the importing package).
CONF_DIR = str(Path(__file__).resolve().parent.parent / "conf")

RUN_TOKEN = secrets.token_hex(4)
"""This process's token in its Hydra folder (conf/config.yaml: ``${ppml.run_token:}``): two runs
started in the same second get two folders."""
OmegaConf.register_new_resolver("ppml.run_token", lambda: RUN_TOKEN, replace=True)


def run(cfg: DictConfig) -> Path:
    """Validate, run and record one experiment; returns the Parquet file written.  A config or
    input error is a `jobs.cli.InputError`, raised before Ray or anything else starts."""
    with cli.checking():
        config = load_config(cfg)
        experiment = registry.get(config.experiment)
        checkpointing.prepare(config)      # a resume that cannot work fails before Ray starts
        inputs = registry.check_inputs(config)      # so does a missing dataset
    if config.seed is not None:
        log.warning(
            "INSECURE: seeded reproducible mode (seed=%d); shares, masks and keys are predictable",
            config.seed,
        )
    if config.checkpoint_every:
        print(f"run_id: {config.run_id} (checkpoints every {config.checkpoint_every} steps in "
              f"{checkpointing.folder(config)})", flush=True)
    started_at = dt.datetime.now(dt.timezone.utc)
    try:
        with ray_runtime(config):
            output = experiment(config, inputs)          # the inputs read once
    except Exception:
        if config.checkpoint_every:
            print(f"run {config.run_id} failed; to go on from its last checkpoints, run the "
                  f"same command with resume={config.run_id}", file=sys.stderr, flush=True)
        raise
    path = write_run(config.results_dir, config.columns(), output, started_at=started_at)
    checkpointing.discard(config)
    print(summary_text(output))
    print(FULL_ROWS_NOTE)
    print(f"results: {path}")
    return path


@contextmanager
def ray_runtime(config: RunConfig) -> Iterator[None]:
    """Start or join Ray for ``runtime=ray`` or ``workers > 1`` (and leave it afterwards):
    ray_address None starts a private local instance using every CPU of this machine;
    otherwise the driver joins the cluster at ray_address ('auto' inside ``ray job submit``)."""
    if config.runtime != "ray" and config.workers == 1:
        yield
        return
    with cluster.connected(config.ray_address, timeout_s=config.party_timeout_s):
        yield


def summary_text(output: RunOutput) -> str:
    """The experiment's own table if it gave one, else the summary values one per line."""
    if output.table is not None:
        return output.table
    return _format_mapping(output.summary) if output.summary else "(no summary values)"


def _format_mapping(values: Mapping[str, Any]) -> str:
    """``key  value`` lines with the keys aligned."""
    width = max(len(key) for key in values)
    return "\n".join(f"{key:<{width}}  {value}" for key, value in values.items())


@hydra.main(config_path=CONF_DIR, config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> Path:
    """Hydra entry point (one call per job of a sweep): the Parquet file written (the Ray
    launcher reports it); a config or input error ends the command here, in one line (else
    Hydra would add its own line to it)."""
    with cli.reporting():
        return run(cfg)


def command(argv: list | None = None) -> None:
    """``python -m jobs.run`` with the arguments ``argv`` (default: this command line's): a key
    of the old flat namespace, and what Hydra refuses while it composes the config (a misspelt
    key, a wrong type, an unknown experiment), are input errors too.  Hydra parses ``argv`` as
    it parses a command line (flags such as ``-m`` before the overrides); the wrappers
    (jobs.bench_ops, jobs.federated_local) call it with their own arguments added."""
    argv = sys.argv[1:] if argv is None else list(argv)
    with cli.checking():
        refuse_renamed(argv)
    given, sys.argv[1:] = sys.argv[1:], argv      # Hydra reads sys.argv; the caller's is kept
    try:
        with cli.checking(cli.COMPOSITION_ERRORS):
            main()
    finally:
        sys.argv[1:] = given


if __name__ == "__main__":
    cli.run_command(command)
