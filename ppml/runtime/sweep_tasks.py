"""The jobs of a sweep as Ray tasks, run at once on the cluster (``python -m jobs.run -m
hydra/launcher=ray``; the Hydra side is hydra_plugins/ppml_ray_launcher, docs/ray-runtime.md,
"Sweeps over the cluster").

`run_jobs` joins the cluster at ``address`` (or starts a private local instance, shut down when
the sweep ends: `cluster.connected`) and runs each job, a picklable callable of no arguments, as
one Ray task of ``num_cpus`` CPUs.  At most as many jobs are in flight as the cluster's CPUs
hold, so a job starts when it is submitted and its ``job_timeout_s`` counts from then: a job
still running after it is cancelled (its worker killed), as is every running job when the
sweep is interrupted.  One job's failure never stops the others: every job's `Outcome` comes
back, in the order given.  One bar over the jobs.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ppml.checks import check_positive
from ppml.runtime import cluster, progress
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S

CANCEL_WAIT_S = 5.0
"""How long a cancelled job's task may take to end (its worker killed) before it is left."""


@dataclass(frozen=True)
class Outcome:
    """What one job gave: its return ``value``, or the ``error`` that ended it (its own, Ray's
    when its worker died, or a TimeoutError past ``job_timeout_s``)."""

    value: Any = None
    error: BaseException | None = None


def run_jobs(jobs: Sequence[Callable[[], Any]], names: Sequence[str], *,
             address: str | None = None, num_cpus: float = 1.0,
             job_timeout_s: float, connect_timeout_s: float = DEFAULT_TIMEOUT_S,
             shown: bool = True) -> list[Outcome]:
    """Run every job of ``jobs`` (named ``names``, as the errors and the bar say) as a Ray task
    on the cluster at ``address`` (None: a private local instance, every CPU of this machine);
    the jobs' `Outcome`\\ s in order.  ``connect_timeout_s`` bounds reaching the cluster;
    ``shown``: whether this process draws the bar over the jobs."""
    if len(names) != len(jobs):
        raise ValueError(f"names must name each of the {len(jobs)} jobs, got {len(names)}")
    num_cpus = check_positive("num_cpus", num_cpus)
    job_timeout_s = check_positive("job_timeout_s", job_timeout_s)
    import ray
    outcomes: list[Outcome | None] = [None] * len(jobs)
    with cluster.connected(address, dashboard=False, timeout_s=connect_timeout_s), \
            progress.showing(shown), progress.bar("sweep", len(jobs), unit="job") as bar:
        slots = max(1, int(ray.cluster_resources().get("CPU", 0) // num_cpus))
        task = ray.remote(_call).options(num_cpus=num_cpus, max_retries=0)
        waiting, running = deque(range(len(jobs))), {}    # ref -> (job index, deadline)
        try:
            while waiting or running:
                while waiting and len(running) < slots:
                    index = waiting.popleft()
                    running[task.remote(jobs[index])] = (index, time.monotonic() + job_timeout_s)
                first = min(deadline for _, deadline in running.values())
                ready, _ = ray.wait(list(running), num_returns=1,
                                    timeout=max(0.0, first - time.monotonic()))
                for ref in ready:
                    outcomes[running.pop(ref)[0]] = _outcome(ray, ref)
                    bar.update()
                for ref, (index, deadline) in list(running.items()):
                    if deadline <= time.monotonic():
                        del running[ref]
                        _cancel(ray, ref)
                        outcomes[index] = Outcome(error=TimeoutError(
                            f"{names[index]}: still running after job_timeout_s="
                            f"{job_timeout_s:g} s; cancelled"))
                        bar.update()
        finally:                        # interrupted (Ctrl-C): no job goes on without the sweep
            for ref in running:
                ray.cancel(ref, force=True)
    return outcomes


def _call(job: Callable[[], Any]) -> Any:
    """A job, in its Ray task."""
    return job()


def _outcome(ray, ref) -> Outcome:
    """A finished job's value, or the error it (or its worker) ended with."""
    try:
        return Outcome(value=ray.get(ref, timeout=CANCEL_WAIT_S))
    except Exception as error:          # noqa: BLE001 - each job's error is its outcome
        return Outcome(error=error)


def _cancel(ray, ref) -> None:
    """Stop a job past its timeout: its worker killed, its end waited for a little."""
    ray.cancel(ref, force=True)
    ray.wait([ref], timeout=CANCEL_WAIT_S)
