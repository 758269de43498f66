"""``runtime=federated``: one trust domain per party, parties meeting only over TLS links.

Each party of a run is its own OS process, started by its own command (``python -m jobs.party
party=<name> peers=<peers.yaml> ...``), possibly on its own machine with its own Ray instance
for its bulk tasks.  No Ray handle, object reference or closure crosses between parties: the
only cross-party traffic is `ppml.runtime.links` (mutually authenticated TLS 1.3), carrying the
engine's rounds and the calls of `ppml.runtime.remote`.

* `Peers`: ``peers.yaml``, the run's roster: the federation's certificate authority, and per
  party (in roster order) its host, port and certificate, which every party pins.
* `Node`: one party's end: its identity, its links to the peers it talks to, the calls it
  makes (`remote`) and the role it serves (`serve`), and, for a party of the secret-sharing
  engine, its context (`context`).
* `launch`: the loopback convenience (``jobs.federated_local``): a fresh authority and one
  certificate per party, one process per party on 127.0.0.1, their outputs collected; any
  party's failure or a timeout stops every process and names the party.

docs/federated.md has the commands, what crosses between parties and what each one keeps.
"""

from __future__ import annotations

import codecs
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from ppml.checks import check_int
from ppml.mpc.context import Context, EngineConfig
from ppml.mpc.dealer import Dealer, material
from ppml.mpc.keys import dealer_party_key, dealer_secret_key, pair, pair_key
from ppml.runtime import codec, progress
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S, LOST_EXIT
from ppml.runtime.links import Links
from ppml.runtime.mailbox import Mailbox
from ppml.runtime.remote import Caller, RemoteRole, serve
from ppml.runtime.seat import RoleDealer, link_context
from ppml.runtime.tls import Authority, Identity, Trust, check_name, fingerprint



@dataclass(frozen=True)
class Party:
    """One entry of ``peers.yaml``."""

    name: str
    host: str
    port: int
    certificate: bytes
    certificate_file: Path


class Peers:
    """A run's roster (``peers.yaml``): ``authority`` (PEM) and `Party` entries in order."""

    def __init__(self, authority: bytes, parties: list):
        self.authority = authority
        self.parties = {p.name: p for p in parties}
        self.order = [p.name for p in parties]

    @classmethod
    def load(cls, path) -> "Peers":
        """Read ``peers.yaml``: ``authority: <CA certificate file>`` and ``parties:`` a list
        of {name, host, port, certificate}; paths relative to the file."""
        path = Path(path)
        try:
            spec = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"peers={path}: cannot read it: {exc}") from None
        if not isinstance(spec, dict) or set(spec) != {"authority", "parties"} \
                or not isinstance(spec["parties"], list):
            raise ValueError(f"peers={path} must have exactly the keys authority and parties "
                             f"(a list of name, host, port, certificate)")
        parties = []
        for entry in spec["parties"]:
            if not isinstance(entry, dict) or set(entry) != {"name", "host", "port",
                                                             "certificate"}:
                raise ValueError(f"peers={path}: each party needs exactly name, host, port and "
                                 f"certificate, got {entry!r}")
            name = check_name(entry["name"])
            port = check_int(f"{name}'s port", entry["port"], 1, 65535, what="a TCP port")
            file = path.parent / entry["certificate"]
            parties.append(Party(name, str(entry["host"]), port,
                                 _read(file, f"{name}'s certificate"), file))
        names = [p.name for p in parties]
        if len(set(names)) != len(names):
            raise ValueError(f"peers={path} names a party twice: {names}")
        return cls(_read(path.parent / spec["authority"], "the authority"), parties)

    def write(self, path, files: dict) -> None:
        """Write this roster to ``path``; ``files`` names each certificate's file (by party
        name, and ``authority``), relative to ``path``'s folder."""
        spec = {"authority": files["authority"],
                "parties": [{"name": n, "host": self.parties[n].host,
                             "port": self.parties[n].port, "certificate": files[n]}
                            for n in self.order]}
        Path(path).write_text(yaml.safe_dump(spec, sort_keys=False))

    def trust(self, me: str, peers: list) -> Trust:
        """What party ``me`` accepts: the authority, and each of ``peers`` by its pinned
        certificate."""
        return Trust(self.authority, {p: fingerprint(self.parties[p].certificate)
                                      for p in peers if p != me})


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{what} ({path}) cannot be read: {exc}") from None


class Node:
    """Party ``identity.name`` of ``peers``, linked to ``talks_to`` (names of the roster).

    ``ranks``: the engine rank of each party of the engine's program (empty when this run has
    none), so that engine frames reach this node's mailbox."""

    def __init__(self, identity: Identity, peers: Peers, talks_to: list, ranks: dict,
                 timeout_s: float = DEFAULT_TIMEOUT_S):
        self.name = identity.name
        if self.name not in peers.parties:
            raise ValueError(f"party={self.name} is not in peers.yaml (parties: {peers.order})")
        unknown = [p for p in talks_to if p not in peers.parties]
        if unknown:
            raise ValueError(f"{self.name} talks to {unknown}, which peers.yaml does not name")
        self.peers, self.timeout_s, self.ranks = peers, timeout_s, dict(ranks)
        self.roster = [p for p in peers.order if p in talks_to or p == self.name]
        me = peers.parties[self.name]
        self.links = Links(identity, me.host, Mailbox(), self.ranks, port=me.port)
        self._caller = Caller(self.links)
        self._pool = None

    def connect(self) -> None:
        """Link up with every peer this party talks to, each given the time to start its
        process (`ppml.runtime.deadlines.startup_s` of ``timeout_s``)."""
        addresses = {p: (self.peers.parties[p].host, self.peers.parties[p].port)
                     for p in self.roster}
        self.links.connect(self.roster, addresses, self.peers.trust(self.name, self.roster),
                           self.timeout_s, starting=True)

    def remote(self, peer: str) -> RemoteRole:
        """The role ``peer`` serves, reached over this party's link to it."""
        return RemoteRole(self._caller, peer, self.timeout_s)

    def serve(self, role, allowed: dict, pass_caller: bool = False, workers: int = 4) -> None:
        """Answer the peers' calls on ``role`` (`ppml.runtime.remote.serve`), ``workers`` at
        a time; before `connect`, so that no call comes before the role is there."""
        self._pool = serve(self.links, role, allowed, pass_caller, workers)

    def context(self, config: EngineConfig, dealer: str) -> Context:
        """This party's engine context over its (connected) links
        (`ppml.runtime.seat.link_context`): pair keys agreed over each link (the seeded
        INSECURE mode: derived from the seed) and, for a compute party, its dealer key from
        the party ``dealer`` (`serve_dealer`), which is party 0's source of corrections too;
        a client of the engine has neither."""
        rank = self.ranks[self.name]
        service = self.remote(dealer) if rank < config.parties else None
        dealer_key = None if service is None else service.call("dealer_key")
        return self._context(config, dealer_key, service if rank == 0 else None)

    def join(self, config: EngineConfig, dealer: str, family: str) -> Context:
        """`connect`, then this party's engine `context`: the phase that waits for the other
        parties to start, under the "<family> set-up (links, keys)" bar (which only the
        driving party's process shows, `jobs.party`)."""
        with progress.stage(f"{family} set-up (links, keys)"):
            self.connect()
            return self.context(config, dealer)

    def _context(self, config: EngineConfig, dealer_key: bytes | None,
                 dealer: RemoteRole | None) -> Context:
        rank = self.ranks[self.name]
        names = sorted(self.ranks, key=self.ranks.get)
        pair_keys = None if config.seed is None else {
            pair(rank, j): pair_key(config.seed, rank, j) for j in range(config.ranks)
            if j != rank}
        return link_context(self.links, names, rank, config, self.timeout_s, pair_keys,
                            dealer_key, None if dealer is None else RoleDealer(dealer))

    def wait_closed(self, peers: list) -> None:
        """Block until every one of ``peers`` has closed its link (a serving party's end of
        the run), at most ``timeout_s`` after the last frame."""
        self.links.wait_closed(peers, self.timeout_s)

    def close(self) -> None:
        self.links.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


class DealerService:
    """The dealer as a party of its own: each compute party (``ranks``: name -> rank) asks once
    for its dealer key, which the dealer made; party 0 asks for its corrections.  It holds the
    dealer's keys and nothing else."""

    def __init__(self, ranks: dict, seed: int | None, secret: bytes | None = None):
        self._ranks = dict(ranks)
        self._keys = {r: dealer_party_key(seed, r) for r in self._ranks.values()}
        self.secret = dealer_secret_key(seed) if secret is None else secret
        self._dealer = Dealer(self._keys, self.secret)
        self._given = set()

    def dealer_key(self, caller: str) -> bytes:
        if caller in self._given:
            raise PermissionError(f"{caller} has already taken its dealer key")
        self._given.add(caller)
        return self._keys[self._ranks[caller]]

    def corrections(self, caller: str, kind: str, spec, batch: int, count: int) -> dict:
        return self._dealer.corrections(material(kind, tuple(spec)), batch, count)


def serve_dealer(node: "Node", ranks: dict, seed: int | None,
                 secret: bytes | None = None) -> bytes:
    """Run the dealer party on ``node`` (not yet connected) until every compute party has
    closed its link; returns the dealer's secret (for an evaluation harness that replays its
    draws: the seeded mode derives it, otherwise the dealer reports it after the run).
    ``secret``: the dealer's own secret instead (one it kept for a resumed run)."""
    service = DealerService(ranks, seed, secret)
    first = min(ranks, key=ranks.get)
    node.serve(service, {name: {"dealer_key"} | ({"corrections"} if name == first else set())
                         for name in ranks}, pass_caller=True)
    node.connect()
    node.wait_closed(list(ranks))
    return service.secret


def free_ports(count: int, host: str = "127.0.0.1") -> list:
    """``count`` ports free on ``host`` now (the loopback launcher's roster)."""
    sockets = [socket.create_server((host, 0)) for _ in range(count)]
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def loopback(directory: Path, names: list, host: str = "127.0.0.1") -> Peers:
    """A fresh federation on ``host`` in ``directory``: an authority, and for each party its
    key (readable by its owner only) and certificate, and ``peers.yaml``.  The launcher plays
    every organisation's administrator here; in a deployment each party makes its own key
    and sends a request (docs/federated.md)."""
    authority = Authority()
    files = {"authority": "authority.crt"}
    (directory / files["authority"]).write_bytes(authority.certificate)
    parties = []
    for name, port in zip(names, free_ports(len(names), host), strict=True):
        identity = Identity(name)
        identity.install(authority.issue(identity.request()))
        cert_path, _ = identity.save(str(directory))
        files[name] = os.path.basename(cert_path)
        parties.append(Party(name, host, port, identity.certificate, Path(cert_path)))
    peers = Peers(authority.certificate, parties)
    peers.write(directory / "peers.yaml", files)
    return peers


class PartyFailed(RuntimeError):
    """A party's process of a federated run exited with an error.  ``lost``: it was killed, or
    failed because a peer died or went silent (exit code `deadlines.LOST_EXIT`)."""

    def __init__(self, party: str, code: int, message: str):
        super().__init__(message)
        self.party, self.code, self.lost = party, code, code < 0 or code == LOST_EXIT


def launch(names: list, overrides: list, directory: Path, timeout_s: float,
           shown: str | None = None) -> dict:
    """Run one ``python -m jobs.party`` process per party of ``names`` on loopback, with the
    same config ``overrides``; returns each party's output.  Each party's output goes to its
    log in ``directory``; the stderr of party ``shown`` (the one that shows the run's progress
    bars) also to this process's stderr.  The first party to fail stops
    every process and raises `PartyFailed` naming the party, the tail of its log and the
    parties still running then (a stopped or frozen party is one of them: the others fail
    waiting for it); no process is left behind.

    The run has no deadline of its own (a long run is no fault): each party bounds its waits
    for the others by ``party_timeout_s``.  What no party waits for is watched here: a party
    whose process is stopped (SIGSTOP, state T in /proc) for ``timeout_s`` fails the run,
    named, also when it is idle (a role needed at the start only) or the last one running."""
    directory.mkdir(parents=True, exist_ok=True)
    loopback(directory, names)
    processes, copying = {}, []
    handled = (signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, _exit_on_signal) for sig in handled} \
        if threading.current_thread() is threading.main_thread() else {}
    try:
        for name in names:
            path = directory / f"{name}.log"
            path.write_bytes(b"")
            log = open(path, "ab")
            processes[name] = subprocess.Popen(
                [sys.executable, "-m", "jobs.party", f"party={name}",
                 f"peers={directory / 'peers.yaml'}", f"out={directory / (name + '.out')}",
                 *overrides], stdout=log,
                stderr=subprocess.PIPE if name == shown else subprocess.STDOUT,
                start_new_session=True)
            log.close()
            if name == shown:
                copying.append(threading.Thread(target=_copy_stderr, daemon=True,
                                                args=(processes[name].stderr, path)))
                copying[-1].start()
        stopped_since: dict = {}
        while True:
            codes = {n: p.poll() for n, p in processes.items()}     # poll every one
            failed = [n for n, code in codes.items() if code not in (None, 0)]
            running = [n for n, code in codes.items() if code is None]
            if failed:
                for thread in copying:            # the shown party's last words, into its log
                    thread.join(COPY_WAIT_S)
                first = min(failed, key=lambda n: _finished_at(directory / f"{n}.log"))
                still = f" (still running then: {', '.join(running)})" if running else ""
                raise PartyFailed(first, codes[first], f"{first} failed (exit code "
                                  f"{codes[first]}){still}: "
                                  f"{_tail(directory / (first + '.log'))}")
            if not running:
                break
            now = time.monotonic()
            for name in running:
                if _stopped(processes[name].pid):
                    stopped_since.setdefault(name, now)
                else:
                    stopped_since.pop(name, None)
            late = [n for n, since in stopped_since.items() if now - since > timeout_s]
            if late:
                raise PartyFailed(late[0], -signal.SIGSTOP, f"{', '.join(late)} stopped (its "
                                  f"process in state T) for {timeout_s:g} s (party_timeout_s)")
            time.sleep(0.05)
        return {name: codec.decode((directory / f"{name}.out").read_bytes()) for name in names}
    finally:
        stop(processes.values())
        for thread in copying:            # daemons: a pipe a stray child holds is left
            thread.join(COPY_WAIT_S)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


COPY_WAIT_S = 1.0
"""How long a failed run waits for the shown party's stderr to reach its log (a child process
of the party may hold the pipe open until it is stopped)."""


def _copy_stderr(pipe, log: Path) -> None:
    """A party's stderr, as it comes, to its log and to this process's stderr (its progress
    bars: a party's tqdm redraws its line without a newline, so it is copied by the chunk)."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with pipe, open(log, "ab") as out:
        while chunk := os.read(pipe.fileno(), 4096):
            out.write(chunk)
            out.flush()
            try:                          # the display failing never fails the party
                sys.stderr.write(text.decode(chunk))
                sys.stderr.flush()
            except (OSError, UnicodeError):
                pass


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (by a signal or a tracer), as /proc says; False where
    there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


def stop(processes) -> None:
    """Stop every party's process group (its children too, also where the party itself has
    exited): SIGTERM, up to 5 s, then SIGKILL."""
    processes = list(processes)
    for p in processes:
        _signal(p, signal.SIGTERM)
    deadline = time.monotonic() + 5.0
    for p in processes:
        try:
            p.wait(max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            pass
    for p in processes:
        _signal(p, signal.SIGKILL)
        p.wait()


def _exit_on_signal(signum, frame):
    raise SystemExit(f"the launcher got signal {signum}; stopping every party")


def _signal(process, sig) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def _finished_at(log: Path) -> float:
    """When a party's log was last written: the first of several failures is the cause."""
    try:
        return log.stat().st_mtime
    except OSError:
        return float("inf")


def _tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:])
