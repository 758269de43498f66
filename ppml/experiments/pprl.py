"""Sakuma et al.'s experiments (section 6) with the plaintext methods: the random walk
partitioned by time (Table 2) and load balancing partitioned by observation (Table 3, Fig. 5).

``python -m jobs.run experiment=pprl pprl.task=random_walk pprl.selection=random`` runs each
method of ``pprl.methods`` for ``pprl.trials`` trials; every trial of every method meets the
same environment draws (``data_seed``).  Rows: one per trial (random walk: ``steps_to_goal``,
``reached_goal``) or per trial and episode (load balancing: ``episode_reward``, the mean global
reward per step), each with its ``method``; PPRL's rows (by observation: each trial's last
episode row) add ``q_equal_reference``,
``action_agreement``, ``online_s`` and its counts of encryptions, decryptions, divisions and
comparisons (greedy selection and Q-learning's max).
Each trial's row (by observation: its last episode's) has its ``learning_s``.
``key_bits`` sizes the agents' Paillier keys; ``seed`` seeds them (INSECURE).  With
``record_views=true`` the first PPRL trial writes each agent's view (docs/pprl.md).
With ``checkpoint_every`` PPRL's agents (by observation: and the world) checkpoint their trials
(either backend; on the shares backend the trials on one engine as a group), the driver keeps
every finished trial (`Finished`; federated: each trial resumes at its end), and each row says
whether its trial ``replayed`` steps after a resume.  The table gives, per method, Table 2's
accuracy (mean steps to the goal over the trials that reach it, and how many do) or the mean
reward of the last tenth of the episodes, and the seconds of learning.  docs/pprl.md has the
numbers.
"""

from __future__ import annotations

import dataclasses
import itertools
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa

from ppml.experiments import checkpointing
from ppml.experiments.config import RunConfig
from ppml.experiments.federation import run_parties
from ppml.experiments.registry import register
from ppml.experiments.results import RunOutput
from ppml.experiments.table import format_table
from ppml.parallel import run_batches, split
from ppml.privacy.views import VIEW_SCHEMA, ViewRecorder
from ppml.protocols.pprl.observation import observation_result, run_observation_protocol
from ppml.protocols.pprl.protocol import run_time_protocol, time_result
from ppml.protocols.pprl.reference import (TrialResult, run_observation_partitioned,
                                           run_time_partitioned)
from ppml.protocols.pprl.shares_observation import observation_results, run_shares_trials
from ppml.protocols.pprl.shared_division import fixed_point
from ppml.protocols.pprl.shares_time import run_shares_time_trials, trial_result
from ppml.runtime import progress as progress_
from ppml.runtime.cluster import ensure_ray


def check_inputs(config: RunConfig) -> None:
    """What the run would find only in its parties' programs, checked before it starts any:
    the shares backend's fixed point must fit the ring (``pprl.scale_bits``,
    `shared_division.fixed_point`)."""
    options = config.pprl
    if options.backend == "shares" and "pprl" in options.method_list():
        agents = 1 if options.partition == "time" else config.parties
        fixed_point(options, options.task_reward_bound(agents))


@register("pprl", check=check_inputs)
def pprl(config: RunConfig, _checked: None) -> RunOutput:
    options = config.pprl
    by_time = options.partition == "time"
    checkpointing.prepare(config)
    finished = Finished(config)
    rows, shown, views = [], [], {}
    for method in options.method_list():
        seconds, mine = 0.0, []
        for result in _results(config, method, finished):
            views = views or result.views
            seconds += result.seconds
            replayed = any(start < end for start, end in result.replays)
            trial_rows = [{"method": method, **row, "replayed": replayed} for row in result.rows]
            trial_rows[-1]["learning_s"] = result.seconds             # the trial's (Table 3)
            mine += trial_rows
        rows += mine
        shown.append({"method": method, **_accuracy(mine, by_time, options.episodes),
                      "learning_s": seconds, **_agreement(mine)})
    summary = {"methods": len(shown), "trials": options.trials}
    return RunOutput(rows=rows, summary=summary, table=format_table(shown, list(shown[0])),
                     views=views)


def _results(config: RunConfig, method: str, finished: "Finished") -> list:
    """Every trial's result of ``method``, in trial order: a resumed run's ``finished`` ones
    as they were, the others run.  Trials run in groups: together on one engine (the shares
    backend by observation, `PPRLOptions.trials_together`), else one by one; with ``workers``
    > 1 the groups of a plaintext method or of the shares backend are split among that many
    processes (this one and Ray tasks on this node), each trial as it would run alone.
    Paillier's PPRL spends its ``workers`` on its own bulk work instead."""
    options = config.pprl
    if method == "pprl" and config.runtime == "federated":
        return checkpointing.with_restarts(config, run_federated)
    together = 1
    if method == "pprl":        # the shares backend on Ray: one set of actors for every trial
        together = options.trials if options.backend == "shares" and config.runtime == "ray" \
            else options.trials_together
    kept = finished.kept(method, options.trials)
    groups = [group for first in range(0, options.trials, together)
              if not set(group := list(range(first, min(first + together, options.trials))))
              <= kept.keys()]
    spread = method != "pprl" or options.backend == "shares"
    if config.workers == 1 or not spread or len(groups) <= 1:
        _groups(config, method, groups, config.progress, finished)
    else:
        ensure_ray()
        parts = split(groups, config.workers)
        done = run_batches(_groups, [(config, method, part, config.progress and k == 0)
                                     for k, part in enumerate(parts)], config.workers)
        for part, results in zip(parts, done):
            kept_results = iter(results)
            for group in part:
                finished.add(method, group, list(itertools.islice(kept_results, len(group))))
    return [kept.get(trial) or finished.results[method, trial]
            for trial in range(options.trials)]


def _groups(config: RunConfig, method: str, groups: list, progress: bool,
            finished: "Finished | None" = None) -> list:
    """The results of ``groups`` of trials of ``method``, one group after the other (a Ray
    task's share of `_results`, or all of it, each group noted in ``finished`` as it ends)."""
    results = []
    with progress_.bar(f"pprl {method}", sum(map(len, groups)), unit="trial",
                       enabled=progress) as bar:
        for group in groups:
            done = [_plaintext(config, method, trial) for trial in group] \
                if method != "pprl" else _encrypted(config, group, progress)
            if finished is not None:
                finished.add(method, group, done)
            results += done
            bar.update(len(group))
    return results


def _plaintext(config: RunConfig, method: str, trial: int):
    """One trial of a plaintext method (CRL, CRL in fixed point, IDRL, RDRL)."""
    options = config.pprl
    if options.partition == "time":
        return run_time_partitioned(options, method, config.parties, config.data_seed, trial)
    return run_observation_partitioned(options, method, config.data_seed, trial, config.parties)


def _encrypted(config: RunConfig, trials: list, progress: bool) -> list:
    """The PPRL protocol the config names (partition and backend) on ``trials``: together on
    the shares backend (`PPRLOptions.trials_together`; on Ray every trial), else one.  With
    checkpoints a group's are in `trial_plan` of its first trial."""
    options, record = config.pprl, config.record_views and 0 in trials
    if options.backend == "shares":
        run = run_shares_trials if options.partition == "observation" else \
            run_shares_time_trials
        more = {"progress": progress and len(trials) > 1} \
            if options.partition == "observation" else {}
        return checkpointing.with_restarts(config, lambda attempt: run(
            options, config.parties, config.data_seed, trials, key_seed=config.seed,
            record_views=record, runtime=config.runtime, timeout_s=config.party_timeout_s,
            checkpoints=trial_plan(attempt, trials[0]), **more))
    trial, = trials
    run = run_time_protocol if options.partition == "time" else run_observation_protocol
    return [checkpointing.with_restarts(config, lambda attempt: run(
        options, config.parties, config.data_seed, trial, config.key_bits,
        config.insecure_key_bits_ok, key_seed=config.seed, record_views=record,
        workers=config.workers, runtime=config.runtime, progress=config.progress,
        timeout_s=config.party_timeout_s, checkpoints=trial_plan(attempt, trial)))]


def run_federated(config: RunConfig) -> list:
    """Every trial of PPRL with the agents, the dealer and (by observation) the world each
    their own process on loopback (`ppml.experiments.pprl_parties`); each trial's result as
    `run_time_protocol` or `run_observation_protocol` gives it, the first with each agent's
    view (``record_views``: sent in the agent's outputs after the run, EVALUATION ONLY) and
    (Paillier) the steps it replayed after a restart (agent-0's ``replays``)."""
    outs = run_parties(config)
    driver, options = outs["agent-0"], config.pprl
    agents = [f"agent-{i}" for i in range(config.parties)]
    if options.backend == "shares" and options.partition == "time":
        return [trial_result(options, config.parties, config.data_seed, trial,
                             [outs[agent]["trials"][trial] for agent in agents])
                for trial in range(options.trials)]
    if options.backend == "shares":
        return observation_results(options, config.parties, config.data_seed,
                                   [outs[agent]["groups"] for agent in agents],
                                   outs["world"]["report"])
    results = []
    for trial in range(options.trials):
        reports = [outs[f"agent-{i}"]["reports"][trial] for i in range(config.parties)]
        measured = (driver["seconds"][trial], driver["setup_s"][trial])
        if options.partition == "time":
            result = time_result(options, config.parties, config.data_seed, trial,
                                 driver["values"][trial], reports, *measured)
        else:
            result = observation_result(options, config.parties, config.data_seed, trial,
                                        driver["values"][trial], reports,
                                        outs["world"]["reports"][trial], *measured,
                                        driver["offline_s"][trial])
        result.replays = [tuple(replay) for replay in driver["replays"][trial]]
        results.append(result)
    if config.record_views:                        # each agent's view of the first trial
        results[0].views = {f"agent-{i}": ViewRecorder.of(outs[f"agent-{i}"]["views"][0]).table()
                            for i in range(config.parties)}
    return results


def trial_plan(config: RunConfig, trial: int):
    """The checkpoint plan of PPRL's trial ``trial``, or of the group of trials run together
    that it begins: its agents' (its driver's, its world's) stores in
    ``<run>/pprl-trial-<trial>/`` (None without checkpoints)."""
    plan = checkpointing.plan(config, [f"agent-{i}" for i in range(config.parties)])
    return plan and dataclasses.replace(plan, folder=str(Path(plan.folder) /
                                                         f"pprl-trial-{trial}"))


class Finished:
    """The trials of the run that have finished, each kept by the driver in its own store
    (``<run>/finished/<method>-<trial>/``: its rows, seconds, replays and views, its own
    results), so that a resumed run takes them as they were and runs the others only; a
    trial's (or its group's) own checkpoints go once it is kept.  A group run together
    finishes as one.  Without checkpoints it keeps nothing."""

    def __init__(self, config: RunConfig):
        self.config = config
        plan = checkpointing.plan(config, [])
        self.plan = plan and dataclasses.replace(plan, folder=str(Path(plan.folder) /
                                                                  "finished"))
        self.results: dict = {}
        """(method, trial) -> the result of a trial this run finished."""

    def kept(self, method: str, trials: int) -> dict:
        """trial -> result of the trials of ``method`` an interrupted run finished."""
        if self.plan is None or self.config.resume is None:
            return {}
        stores = {trial: self.plan.store(f"{method}-{trial}") for trial in range(trials)}
        return {trial: _result(store.load(0)) for trial, store in stores.items()
                if store.steps()}

    def add(self, method: str, trials: list, results: list) -> None:
        """``results`` of ``trials`` of ``method`` (one, or a group run together), finished:
        kept (with checkpoints: saved, the trials' own checkpoints deleted)."""
        for trial, result in zip(trials, results, strict=True):
            self.results[method, trial] = result
            if self.plan is not None:
                self.plan.store(f"{method}-{trial}").save(0, _data(result))
        if self.plan is not None and method == "pprl":
            shutil.rmtree(trial_plan(self.config, trials[0]).folder, ignore_errors=True)


def _data(result: TrialResult) -> dict:
    """What `Finished` keeps of a trial's result, as data."""
    return {"rows": result.rows, "seconds": result.seconds, "replays": result.replays,
            "views": {name: view.to_pylist() for name, view in result.views.items()}}


def _result(data: dict) -> TrialResult:
    """The trial's result that `_data` kept."""
    return TrialResult(data["rows"], data["seconds"],
                       views={name: pa.Table.from_pylist(view, schema=VIEW_SCHEMA)
                              for name, view in data["views"].items()},
                       replays=[tuple(replay) for replay in data["replays"]])


def _agreement(rows: list) -> dict:
    """PPRL's rows: in how many trials the table equals the fixed-point reference's (a trial's
    row, or by observation its last episode's, carries the comparison)."""
    compared = [r["q_equal_reference"] for r in rows if r.get("q_equal_reference") is not None]
    if not compared:
        return {"q_equal_reference": ""}
    return {"q_equal_reference": f"{sum(compared)}/{len(compared)}"}


def _accuracy(rows: list, by_time: bool, episodes: int) -> dict:
    """Table 2's accuracy (by time) or the mean reward of the last tenth of the episodes."""
    if by_time:
        reached = [r["steps_to_goal"] for r in rows if r["reached_goal"]]
        return {"mean_steps_to_goal": float(np.mean(reached)) if reached else None,
                "reached_goal": f"{len(reached)}/{len(rows)}"}
    last = [r["episode_reward"] for r in rows if r["episode"] >= episodes - max(1, episodes // 10)]
    return {"final_reward_per_step": float(np.mean(last))}
