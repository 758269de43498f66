"""``hydra/launcher=ray``: every job of a ``python -m jobs.run -m`` sweep at once, each a Ray task
on the cluster, each writing its own Parquet file into ``results_dir`` as under Hydra's basic
launcher.  A thin adapter: `ppml.runtime.sweep_tasks` runs the tasks (the one layer that talks
to Ray); docs/ray-runtime.md, "Sweeps over the cluster".

It follows Hydra's `BasicLauncher` (hydra/_internal/core_plugins/basic_launcher.py), but every
job's config is composed here, on the driver, before any job starts (an override Hydra refuses
stops the sweep before anything runs).  Each task gets the task function, its job's config and
Hydra's singletons (as Hydra's joblib and Ray launchers ship them) and calls
`hydra.core.utils.run_job` in its worker (`run_in_task`).  A job that fails (its error, a
refused config, its worker's death, its timeout) comes back as a failed `JobReturn` while the
others go on; the launcher logs every failed job by its overrides, and then Hydra's sweeper
raises the first failure (a refused config: one line, exit status 2, as in a single run).  The
file a job returns (jobs.run's Parquet file) comes back with its return, and is written under
the same path on the driver's node when the job ran on another, so every job's results land in
the one ``results_dir``.

Options (``hydra.launcher.<key>=...``), `RayLauncherConf`.
"""

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import (JobReturn, JobStatus, configure_log, filter_overrides, run_job,
                              setup_globals)
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict

from ppml.runtime import sweep_tasks

log = logging.getLogger(__name__)


@dataclass
class RayLauncherConf:
    """The launcher's options: ``address`` of the cluster (default: the run's ``ray_address``;
    null starts a private local instance, shut down when the sweep ends); ``num_cpus`` each
    job's task holds; ``job_timeout_s``, the longest a job may run (then it is cancelled and
    fails); ``connect_timeout_s``, the longest reaching the cluster may take (default: the
    run's ``party_timeout_s``)."""

    _target_: str = "hydra_plugins.ppml_ray_launcher.ray_launcher.RayLauncher"
    address: Optional[str] = "${oc.select:ray_address,null}"
    num_cpus: float = 1.0
    job_timeout_s: float = 24 * 3600.0
    connect_timeout_s: float = "${oc.select:party_timeout_s,30}"  # type: ignore[assignment]


ConfigStore.instance().store(group="hydra/launcher", name="ray", node=RayLauncherConf,
                             provider="ppml")


class RayLauncher(Launcher):
    """Hydra's launcher interface over `sweep_tasks.run_jobs` (options: `RayLauncherConf`)."""

    def __init__(self, address: Optional[str] = None, num_cpus: float = 1.0,
                 job_timeout_s: float = RayLauncherConf.job_timeout_s,
                 connect_timeout_s: float = 30.0) -> None:
        self.options = {"address": address, "num_cpus": num_cpus,
                        "job_timeout_s": job_timeout_s, "connect_timeout_s": connect_timeout_s}
        self.config: Optional[DictConfig] = None
        self.task_function: Optional[TaskFunction] = None
        self.hydra_context: Optional[HydraContext] = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction,
              config: DictConfig) -> None:
        self.config, self.task_function, self.hydra_context = config, task_function, hydra_context

    def launch(self, job_overrides: Sequence[Sequence[str]],
               initial_job_idx: int) -> Sequence[JobReturn]:
        """Run the jobs ``job_overrides`` (numbered from ``initial_job_idx``) at once; their
        returns in order, a failed job's with its error."""
        setup_globals()
        assert self.config is not None and self.task_function is not None
        assert self.hydra_context is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        where = self.options["address"] or "a private local Ray instance"
        log.info(f"Launching {len(job_overrides)} jobs as Ray tasks on {where}")
        names, jobs, state = [], [], Singleton.get_state()
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            names.append(f"#{idx} : {' '.join(filter_overrides(overrides))}")
            log.info(f"\t{names[-1]}")
            sweep_config = self.hydra_context.config_loader.load_sweep_config(
                self.config, list(overrides))
            with open_dict(sweep_config):
                sweep_config.hydra.job.id = idx
                sweep_config.hydra.job.num = idx
            jobs.append(functools.partial(run_in_task, self.hydra_context, self.task_function,
                                          sweep_config, state))
        outcomes = sweep_tasks.run_jobs(
            jobs, names, **self.options,
            shown=bool(OmegaConf.select(self.config, "progress", default=True)))
        returns = [_kept(*outcome.value) if outcome.error is None else
                   JobReturn(overrides=list(overrides), status=JobStatus.FAILED,
                             _return_value=outcome.error)
                   for outcome, overrides in zip(outcomes, job_overrides)]
        _report(names, returns)
        return returns


def run_in_task(hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig,
                state: Any) -> tuple:
    """One job, in its Ray task: Hydra's globals and singletons as the driver had them, then
    `run_job` as Hydra's basic launcher calls it (the job's folder under the sweep's).  Its
    `JobReturn`, and the bytes of the file it returned (jobs.run: its Parquet file; None if it
    returned no path of a file), for the driver to keep (`_kept`)."""
    setup_globals()
    Singleton.set_state(state)
    ret = run_job(hydra_context=hydra_context, task_function=_exit_as_error(task_function),
                  config=config, job_dir_key="hydra.sweep.dir",
                  job_subdir_key="hydra.sweep.subdir")
    written = ret._return_value if ret.status == JobStatus.COMPLETED else None
    return ret, (written.read_bytes() if isinstance(written, Path) and written.is_file()
                 else None)


def _kept(ret: JobReturn, data: Optional[bytes]) -> JobReturn:
    """``ret``, its file (``data``) written under the same path on this node if the job ran
    on another, so that every job's results land in the driver's ``results_dir``."""
    if data is not None and not Path(ret._return_value).exists():
        from ppml.experiments.results import copy_run
        copy_run(ret._return_value, data)
    return ret


def _exit_as_error(task_function: TaskFunction) -> TaskFunction:
    """``task_function`` with its exit (``jobs.cli.reporting`` ends a refused config with
    SystemExit(2) while it handles the InputError) turned into that error, so the job fails
    alone instead of ending its worker; an exit of status 0 is a job that completed."""

    @functools.wraps(task_function)
    def task(cfg: DictConfig) -> Any:
        try:
            return task_function(cfg)
        except SystemExit as exit_:
            if exit_.code in (None, 0):
                return None
            raise (exit_.__context__ or
                   RuntimeError(f"the job exited with status {exit_.code}")) from None

    return task


def _report(names: list, returns: list) -> None:
    """Log each job's end (what it returned: the Parquet file jobs.run wrote, or its error) and
    which jobs failed."""
    failed = []
    for name, ret in zip(names, returns):
        if ret.status == JobStatus.COMPLETED:
            log.info(f"{name} : completed" + (f": {ret._return_value}"
                                              if ret._return_value is not None else ""))
        else:
            failed.append(name)
            log.error(f"{name} : failed: {type(ret._return_value).__name__}: "
                      f"{ret._return_value}")
    if failed:
        log.error(f"{len(failed)} of {len(names)} jobs failed: {'; '.join(failed)} (every other "
                  f"job's results are written)")
