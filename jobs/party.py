"""Run one party of a federated run: ``python -m jobs.party party=<name> peers=<peers.yaml>
experiment=<name> [key=<file>] [out=<file>] [key=value ...]``.

The party loads its own TLS identity (its certificate as ``peers.yaml`` lists it, and its
private key: ``key=``, by default the certificate's path with the suffix ``.key``), links up
with the peers it talks to, plays its role and writes its own outputs to ``out`` (data only,
`ppml.runtime.codec`; nothing is written without ``out``).  The other keys are the run's config,
composed by Hydra as ``python -m jobs.run`` composes it; every party of a run must be given the
same.  ``runtime`` is ``federated`` whatever is given.  Exit code 0 when the party's role is
done; with the error (naming the party) when it failed, 75 (`deadlines.LOST_EXIT`) when a peer
died or went silent, 1 otherwise.  docs/federated.md.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys

from hydra import compose, initialize_config_dir

from jobs.cli import InputError, checking, run_command
from jobs.run import CONF_DIR
from ppml.experiments import registry  # noqa: F401 - registers the experiments and forms
from ppml.experiments.config import load_config, refuse_renamed
from ppml.experiments.federation import form
from ppml.runtime import codec, progress
from ppml.runtime.cluster import NODE_ADDRESS_ENV
from ppml.runtime.deadlines import LOST_EXIT, peer_lost
from ppml.runtime.federated import Peers
from ppml.runtime.tls import Identity

OWN_KEYS = ("party", "peers", "key", "out")
"""Keys of this command, not of the run's config."""

log = logging.getLogger("jobs.party")


def split(argv: list) -> tuple:
    """({party, peers, key, out} given, the config overrides)."""
    own, rest = {}, []
    for arg in argv:
        key, eq, value = arg.partition("=")
        if eq and key in OWN_KEYS:
            own[key] = value
        else:
            rest.append(arg)
    missing = [k for k in ("party", "peers") if k not in own]
    if missing:
        raise InputError(f"jobs.party needs {' and '.join(f'{k}=' for k in missing)} "
                         f"(usage: python -m jobs.party party=<name> peers=<peers.yaml> "
                         f"experiment=<name> [key=<file>] [out=<file>] [key=value ...])")
    return own, rest


def main(argv: list) -> int:
    own, overrides = split(argv)
    name = own["party"]
    with checking():
        refuse_renamed(overrides)
        with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
            cfg = compose(config_name="config", overrides=overrides)
        config = dataclasses.replace(load_config(cfg), runtime="federated")
        peers = Peers.load(own["peers"])
        if name not in peers.parties:
            raise ValueError(f"party={name} is not in {own['peers']} (parties: {peers.order})")
    try:
        os.environ[NODE_ADDRESS_ENV] = peers.parties[name].host   # where its own seats listen
        certificate = peers.parties[name].certificate_file
        identity = Identity.load(name, str(certificate),
                                 own.get("key", str(certificate.with_suffix(".key"))))
        shown = config.progress and name == form(config.experiment).driver
        with progress.showing(shown):             # the driving party's bars only
            outputs = form(config.experiment).party(config, name, identity, peers)
    except Exception as exc:                      # noqa: BLE001 - reported, exit code 1
        notes = "".join(f" ({note})" for note in getattr(exc, "__notes__", ()))
        print(f"party {name} failed: {type(exc).__name__}: {exc}{notes}", file=sys.stderr,
              flush=True)
        return LOST_EXIT if peer_lost(exc) else 1
    if "out" in own:                              # the party's own: readable by it only
        fd = os.open(own["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(codec.encode(outputs))
    print(f"party {name} done", flush=True)
    return 0


if __name__ == "__main__":
    run_command(lambda: main(sys.argv[1:]))
