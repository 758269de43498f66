"""Federated runs of an experiment (``runtime=federated``): each family's parties, and the
harness that starts them.

A family that runs federated registers its form (`register_parties`): the names of its parties
in roster order, what one party does (``party(config, name, identity, peers)``, run by
``python -m jobs.party``), returning that party's own outputs (data only), and which party
drives the run: the one that shows the progress bars (the others show none).  The experiment, in
the harness process, calls `run_parties`: one OS process per party on loopback
(`ppml.runtime.federated.launch`), each with the run's config as its overrides; it gets back
each party's outputs and goes on as after any other runtime (the plaintext reference, the
rows).  docs/federated.md.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ppml.experiments.config import RunConfig
from ppml.runtime.federated import launch

@dataclass(frozen=True)
class Form:
    """A family's federated form: ``names(config)`` in roster order, ``party(config, name,
    identity, peers)`` -> that party's outputs, and ``driver`` the party that shows progress."""

    names: Callable
    party: Callable
    driver: str


_FORMS: dict = {}


def register_parties(experiment: str, names: Callable, party: Callable, driver: str) -> None:
    if experiment in _FORMS:
        raise ValueError(f"experiment {experiment!r} already has a federated form")
    _FORMS[experiment] = Form(names, party, driver)


def form(experiment: str) -> Form:
    """The federated form of ``experiment``; ValueError naming those that have one."""
    if experiment not in _FORMS:
        raise ValueError(f"experiment {experiment!r} has no federated form (runtime=federated "
                         f"runs: {', '.join(sorted(_FORMS)) or 'none'})")
    return _FORMS[experiment]


def overrides(config: RunConfig) -> list:
    """``config`` as Hydra command-line overrides (every key, so a party composes exactly this
    config whatever its experiment file's defaults)."""
    return [f"{key}={_hydra_value(value)}" for key, value in config.columns().items()]


def _hydra_value(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_hydra_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def run_parties(config: RunConfig) -> dict:
    """Run every party of ``config``'s experiment as its own process on loopback; returns
    {party name: its outputs}.  The run's folder (``<results_dir>/.federated/<run>``: peers.yaml,
    certificates, each party's log) is kept; the parties' private keys and output files (the
    evaluation's secrets among them) are deleted after the run."""
    names, driver = form(config.experiment).names(config), form(config.experiment).driver
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    directory = Path(config.results_dir) / ".federated" / f"{stamp}-{secrets.token_hex(4)}"
    try:
        return launch(names, overrides(config), directory, config.party_timeout_s,
                      shown=driver if config.progress else None)
    finally:
        for secret in [*directory.glob("*.key"), *directory.glob("*.out")]:
            secret.unlink()
