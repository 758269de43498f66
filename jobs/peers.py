"""Make a federation on this machine for trying the three-terminal form of a federated run:
``python -m jobs.peers experiment=<name> dir=<folder> [host=127.0.0.1] [key=value ...]``.

Writes into ``dir`` a fresh certificate authority, each party's key (readable by its owner
only) and certificate, and ``peers.yaml`` with a free port per party on ``host``, for the
parties of the experiment's federated form under the given config keys (``parties=3`` gives
three feature parties).  Then start each party with ``python -m jobs.party party=<name>
peers=<dir>/peers.yaml ...`` (docs/federated.md).  In a deployment each organisation makes its
own key and only the certificates travel; this command plays every administrator at once.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hydra import compose, initialize_config_dir

from jobs.cli import InputError, checking, run_command
from jobs.run import CONF_DIR
from ppml.experiments import registry  # noqa: F401 - registers the experiments and forms
from ppml.experiments.config import load_config
from ppml.experiments.federation import form
from ppml.runtime.federated import loopback


def main(argv: list) -> int:
    own = {a.partition("=")[0]: a.partition("=")[2] for a in argv
           if a.partition("=")[0] in ("dir", "host")}
    if "dir" not in own:
        raise InputError("jobs.peers needs dir=<folder> (usage: python -m jobs.peers "
                         "experiment=<name> dir=<folder> [host=127.0.0.1] [key=value ...])")
    overrides = [a for a in argv if a.partition("=")[0] not in ("dir", "host")]
    with checking(), initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        config = load_config(compose(config_name="config", overrides=overrides))
        names = form(config.experiment).names(config)
    directory = Path(own["dir"])
    directory.mkdir(parents=True, exist_ok=True)
    loopback(directory, names, own.get("host", "127.0.0.1"))
    print(f"{directory / 'peers.yaml'}: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    run_command(lambda: main(sys.argv[1:]))
