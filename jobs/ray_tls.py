"""Certificates for Ray's own TLS inside one party's cluster (``RAY_USE_TLS=1``).

    python -m jobs.ray_tls authority dir=<folder>     # once, on the party's own machine
    python -m jobs.ray_tls node dir=<folder>          # on every node, before `ray start`

``authority`` makes the party's Ray certificate authority (``authority.crt`` and its key, the
key readable by its owner only).  cluster.yaml copies that folder to the party's nodes, where
``node`` makes the node's own key and a certificate for its host name, ``localhost`` and its IP
addresses (``node.crt``, ``node.key``), signed by the authority; Ray's gRPC between the nodes
of the party's cluster then runs over mutual TLS (``RAY_TLS_SERVER_CERT``,
``RAY_TLS_SERVER_KEY``, ``RAY_TLS_CA_CERT``).  This authority is the party's own: it has
nothing to do with the federation's, which certifies the parties to each other
(docs/federated.md).
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec

from jobs.cli import InputError, run_command
from ppml.runtime.tls import Authority, write_private_key


def addresses() -> list:
    """This machine's IP addresses (loopback included)."""
    found = {"127.0.0.1"}
    for info in socket.getaddrinfo(socket.gethostname(), None):
        found.add(info[4][0])
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))            # no packet: picks the outgoing address
            found.add(s.getsockname()[0])
    except OSError:
        pass
    return sorted(a for a in found if ":" not in a)


def main(argv: list) -> int:
    what = argv[0] if argv else ""
    options = dict(a.partition("=")[::2] for a in argv[1:])
    if what not in ("authority", "node") or "dir" not in options:
        raise InputError("usage: python -m jobs.ray_tls authority|node dir=<folder>")
    directory = Path(os.path.expanduser(options["dir"]))
    directory.mkdir(parents=True, exist_ok=True)
    if what == "authority":
        Authority("ppml party Ray CA").save(str(directory))
        print(f"{directory}/authority.crt, authority.key (keep the key to this party)")
        return 0
    authority = Authority.load(str(directory))
    key = ec.generate_private_key(ec.SECP256R1())
    names = [socket.gethostname().lower(), "localhost"]
    (directory / "node.crt").write_bytes(authority.issue_host(key.public_key(), names,
                                                              addresses()))
    write_private_key(str(directory / "node.key"), key)
    print(f"{directory}/node.crt for {', '.join(names + addresses())}")
    return 0


if __name__ == "__main__":
    run_command(lambda: main(sys.argv[1:]))
