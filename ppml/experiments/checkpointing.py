"""A run's checkpoints as its config asks for them: where, how often, resuming, restarting.

The parties save and load their own state (`ppml.runtime.checkpoints`); this module is the
driver's side, which sees only public things:

* `plan` turns the run keys ``checkpoint_every``, ``checkpoint_dir``, ``run_id`` and ``resume``
  into the `CheckpointPlan` every party gets;
* the run's folder holds ``settings.json``, the settings that decide its results, written when
  the run starts; ``resume=<run_id>`` compares them with its own and names each key that
  differs, before anything starts;
* `with_restarts` runs an attempt again, resumed, when a party or role died or went silent
  (``restarts`` times at most); the rows then say which steps ran twice (`replayed`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Callable, TypeVar

from ppml.experiments.config import RunConfig
from ppml.runtime.checkpoints import CheckpointPlan, fingerprint
from ppml.runtime.deadlines import peer_lost

log = logging.getLogger(__name__)

T = TypeVar("T")

HOW_TO_RUN = frozenset({
    "run_id", "resume", "restarts", "checkpoint_every", "checkpoint_dir", "results_dir",
    "progress", "party_timeout_s", "ray_address", "placement", "data_dir", "workers",
    "record_views"})
"""Run keys that do not change a run's results: a resumed run may set them differently."""


def folder(config: RunConfig) -> Path:
    """``<checkpoint_dir>/<run_id>``, checkpoint_dir defaulting to <results_dir>/checkpoints."""
    if config.run_id is None:
        raise ValueError("checkpoints need the run's run_id (load_config makes one)")
    root = config.checkpoint_dir or str(Path(config.results_dir) / "checkpoints")
    return Path(root) / config.run_id


def settings(config: RunConfig) -> dict:
    """The run keys that decide its results (every key but `HOW_TO_RUN`)."""
    return {key: value for key, value in config.columns().items() if key not in HOW_TO_RUN}


def plan(config: RunConfig, names: list) -> CheckpointPlan | None:
    """The checkpoint plan of ``config`` for parties ``names`` (None without checkpoints)."""
    if not config.checkpoint_every:
        return None
    return CheckpointPlan(str(folder(config)), config.checkpoint_every, tuple(names),
                          fingerprint(settings(config)), resume=config.resume is not None)


def prepare(config: RunConfig) -> None:
    """Before a run with checkpoints or a resumed one starts: write its settings, or check them
    against the interrupted run's (ValueError naming every key that differs).  `jobs.run`
    calls it before it starts anything, and each experiment again (the same answer)."""
    if config.resume is None and not config.checkpoint_every:
        return
    path = folder(config) / "settings.json"
    mine = settings(config)
    if config.resume is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(mine, indent=1, sort_keys=True, default=str))
        os.replace(temp, path)
        return
    if not config.checkpoint_every:
        raise ValueError(f"resume={config.resume} needs checkpoint_every > 0 (the interrupted "
                         f"run's, to go on saving)")
    if (Path(config.results_dir) / f"{config.run_id}.parquet").exists():
        raise ValueError(f"resume={config.resume}: that run finished "
                         f"({Path(config.results_dir) / config.run_id}.parquet); nothing to resume")
    try:
        theirs = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"resume={config.resume}: no checkpoints of that run in "
                         f"{path.parent}") from None
    ours = json.loads(json.dumps(mine, default=str))
    differ = sorted(key for key in ours.keys() | theirs.keys()
                    if ours.get(key) != theirs.get(key))
    if differ:
        shown = ", ".join(f"{key}={theirs.get(key)!r} (now {ours.get(key)!r})" for key in differ)
        raise ValueError(f"resume={config.resume} must keep the settings of that run: {shown}")


def discard(config: RunConfig) -> None:
    """Delete a finished run's checkpoints (its results are written; they would only keep the
    parties' sealed shares at rest).  Every party's folder sits under the run's on this machine
    for runtime=local, for ray on one machine and for the loopback federated launcher; a party
    started by hand on another machine (`jobs.party`) keeps its folder for its operator to
    delete (docs/reliability.md)."""
    if config.checkpoint_every:
        shutil.rmtree(folder(config), ignore_errors=True)


def with_restarts(config: RunConfig, attempt: Callable[[RunConfig], T]) -> T:
    """``attempt(config)``, and with checkpoints, again from the last checkpoints every time a
    party or role died or went silent (`peer_lost`), at most ``restarts`` times; an error of
    the run itself (a bad value, a bug) is raised at once.  runtime=local holds every party in
    this process, so nothing there is lost that a restart would bring back: it never restarts."""
    for restart in range(config.restarts + 1):
        try:
            return attempt(config)
        except Exception as error:          # noqa: BLE001 - re-raised unless a restart helps
            if not (config.checkpoint_every and config.runtime != "local"
                    and restart < config.restarts and peer_lost(error)):
                raise
            log.warning("run %s: %s; restarting from its last checkpoints (%d of %d)",
                        config.run_id, error, restart + 1, config.restarts)
            config = replace(config, resume=config.run_id)
    raise AssertionError("unreachable")


def kept_key(config: RunConfig, holder: str, make: Callable[[], bytes]) -> bytes:
    """``make()``, kept in ``holder``'s own store when the run checkpoints, so that a resumed
    run has the same one: the federated dealer's secret, or an evaluation harness's copy of the
    dealer's secret, which it needs to replay the dealer's draws in the plaintext reference."""
    own = plan(config, [])
    if own is None:
        return make()
    store = own.store(holder)
    if config.resume is not None and 0 in store.steps():
        return store.load(0)["key"]
    key = make()
    store.save(0, {"key": key})
    return key


def replayed(replays: list, horizon: int) -> list:
    """Per step (0-based), whether it ran twice: after each resume, the steps after the
    checkpoint it went on from, up to the last one a party had finished before
    (`ppml.runtime.checkpoints.RankCheckpoints.replays`)."""
    return [any(start < step + 1 <= end for start, end in replays) for step in range(horizon)]
