"""Test-only experiments and a command line that runs them through jobs.run's Hydra main.

``probe`` plays ``horizon`` steps and reports whether Ray was running; ``probe_fails`` raises.
Tests load this file in-process (runpy) and also run it as a script, because a child process
(needed for Hydra's multirun and for a Ray driver of its own) cannot see registrations made in
the test process::

    python tests/jobs/probe_job.py experiment=probe hydra.searchpath=[file://<dir>] [overrides]

where <dir>/experiment/probe.yaml selects the experiment.
"""

import ray

from jobs import cli
from jobs.run import command
from ppml.experiments.registry import register
from ppml.experiments.results import RunOutput


@register("probe")
def probe(config):
    rows = [{"step": t, "arm": t % config.arms, "reward": 1.0} for t in range(config.horizon)]
    summary = {"secure_cumulative_reward": float(config.horizon), "ray": ray.is_initialized()}
    return RunOutput(rows=rows, summary=summary)


@register("probe_fails")
def probe_fails(config):
    raise RuntimeError("protocol aborted")


if __name__ == "__main__":
    cli.run_command(command)
