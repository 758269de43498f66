"""Fault injection on real runs: start ``python -m jobs.run``, wait for a role's process, kill or
stop it mid-run, and report how the run ended, how long after the fault, and which of its
processes outlived it.

A run's processes are its descendants, sampled from /proc while it runs (a process killed or
exited leaves its children to init, so they are remembered, not looked up at the end): Ray's
daemons and workers under ``runtime=ray`` (the workers show their actor's class,
``ray::PartyActor.run``), the parties' processes under ``runtime=federated`` (``-m jobs.party
party=<name>``).  Nothing else on the machine is ever counted or signalled.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def processes() -> dict:
    """{pid: (parent pid, command line)} of every live (not zombie) process of this machine."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            raw = Path(entry.path, "cmdline").read_bytes()
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            found[int(entry.name)] = (int(fields[1]),
                                      raw.replace(b"\0", b" ").decode(errors="replace").strip())
    return found


def descendants(root: int, table: dict) -> dict:
    """{pid: command line} of ``root``'s live descendants in ``table`` (`processes`)."""
    children = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = {}, list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found[pid] = table[pid][1]
        todo += children.get(pid, ())
    return found


@dataclass
class Outcome:
    """How a run with an injected fault ended."""

    returncode: int | None
    """None: the run was still going at the deadline (a hang), and was killed."""
    seconds_after_fault: float
    output: str
    leaked: dict
    """{pid: command line} of the run's processes alive after it ended (and a grace period)."""
    parquet_files: list

    @property
    def hung(self) -> bool:
        return self.returncode is None


class FaultyRun:
    """``python -m jobs.run <overrides> results_dir=<results>`` in its own session."""

    def __init__(self, overrides: list, results: Path):
        self.results = Path(results)
        self.seen: dict = {}
        """Every descendant of the run seen so far: {pid: command line}."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jobs.run", *overrides, f"results_dir={self.results}",
             "progress=false"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True)

    def sample(self) -> dict:
        """The run's live descendants now, remembered in `seen`."""
        live = descendants(self.process.pid, processes())
        self.seen.update(live)
        return live

    def alive(self) -> dict:
        """Which processes of `seen` are still alive (and are still the same process)."""
        table = processes()
        return {pid: line for pid, line in self.seen.items()
                if pid in table and table[pid][1] == line}

    def wait_for(self, pattern: str, timeout_s: float = 120.0) -> int:
        """The pid of the run's first new process whose command line matches ``pattern``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the run ended before {pattern!r} appeared: "
                                     f"{self.process.stdout.read().decode()[-2000:]}")
            matches = sorted(pid for pid, line in self.sample().items() if re.search(pattern, line))
            if matches:
                return matches[0]
            time.sleep(0.2)
        raise AssertionError(f"no process matching {pattern!r} within {timeout_s} s")

    def wait_until_busy(self, pid: int, cpu_s: float, timeout_s: float = 120.0) -> None:
        """Until process ``pid`` has used ``cpu_s`` seconds of CPU (past its imports and set-up:
        mid-run)."""
        deadline = time.monotonic() + timeout_s
        while cpu_seconds(pid) < cpu_s:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"process {pid} used {cpu_seconds(pid):.1f} s of CPU, not "
                                     f"{cpu_s} s, before the run ended or {timeout_s} s passed")
            self.sample()
            time.sleep(0.2)

    def wait_for_file(self, folder: Path, pattern: str, timeout_s: float = 120.0) -> None:
        """Until a file matching the glob ``pattern`` exists below ``folder`` (a checkpoint)."""
        deadline = time.monotonic() + timeout_s
        while not any(Path(folder).rglob(pattern)):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"no {pattern} below {folder} before the run ended or "
                                     f"{timeout_s} s passed")
            self.sample()
            time.sleep(0.05)

    def busy(self, pattern: str, cpu_s: float, timeout_s: float = 180.0) -> int:
        """The first of the run's processes matching ``pattern`` to use ``cpu_s`` seconds of CPU
        once `started` (several may match, such as a run's party actors, of which the engine's
        clients work little)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.process.poll() is None:
            for pid, line in sorted(self.sample().items()):
                if re.search(pattern, line) and cpu_seconds(pid) >= cpu_s and started(pid, line):
                    return pid
            time.sleep(0.2)
        ended = self.process.poll() is not None
        raise AssertionError(f"no process matching {pattern!r} used {cpu_s} s of CPU before the "
                             f"run ended or {timeout_s} s passed"
                             + (f": {self.process.stdout.read().decode()[-2000:]}" if ended else ""))

    def inject(self, pid: int, sig: int) -> None:
        self.sample()
        os.kill(pid, sig)
        self.fault_at = time.monotonic()

    def finish(self, deadline_s: float, grace_s: float = 10.0) -> Outcome:
        """Wait up to ``deadline_s`` after the fault for the run to end (else kill it: a hang),
        then up to ``grace_s`` for its processes to go; SIGKILL whatever is left, so that no
        test leaves a process behind even when it finds a leak."""
        code = None
        while time.monotonic() < self.fault_at + deadline_s:
            self.sample()
            code = self.process.poll()
            if code is not None:
                break
            time.sleep(0.2)
        if code is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        after = time.monotonic() - self.fault_at
        output = self.process.stdout.read().decode(errors="replace")
        self.process.stdout.close()
        leaked = self.alive()
        end = time.monotonic() + grace_s
        while leaked and time.monotonic() < end:
            time.sleep(0.25)
            leaked = self.alive()
        for pid in leaked:
            _kill(pid, signal.SIGCONT)
            _kill(pid, signal.SIGKILL)
        return Outcome(code, after, output, leaked, sorted(self.results.glob("*.parquet")))


def started(pid: int, line: str) -> bool:
    """Whether the process ``pid`` (command line ``line``) is past its start-up, so that a
    fault hits it mid-run: a Ray actor out of its constructor (Ray titles its process
    ``ray::<Class>.__init__`` until then), a federated party linked to a peer (an established
    TCP connection).  A party stopped while it starts is given `startup_s` of the timeout."""
    if "jobs.party" in line:
        return any(owner == pid for _, _, owner in _established())
    return "__init__" not in line


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of ``pid`` so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _established() -> list:
    """(local port, peer port, pid) of every established TCP socket on loopback (``ss``)."""
    listing = subprocess.run(["ss", "-tnpH", "state", "established"], capture_output=True,
                             text=True, check=True).stdout
    found = []
    for line in listing.splitlines():
        fields = line.split()
        pids = re.findall(r"pid=(\d+)", line)
        if len(fields) >= 4 and pids:
            found += [(int(fields[2].rpartition(":")[2]), int(fields[3].rpartition(":")[2]),
                       int(pid)) for pid in pids]
    return found


def cut_link(a: int, b: int) -> None:
    """Cut the TCP connection between processes ``a`` and ``b`` as a network would: the kernel
    destroys ``a``'s socket (``ss -K``), so ``a`` sees it aborted and ``b`` gets a reset."""
    sockets = _established()
    ports_of_b = {local for local, _, pid in sockets if pid == b}
    link = [(local, peer) for local, peer, pid in sockets if pid == a and peer in ports_of_b]
    if not link:
        raise AssertionError(f"no TCP connection between processes {a} and {b}")
    local, peer = link[0]
    _destroy(f":{local}", f":{peer}")
    if any((mine, theirs) == (local, peer) for mine, theirs, _ in _established()):
        raise AssertionError(f"ss -K could not cut the connection {local} -> {peer}")


def _destroy(sport: str, dport: str) -> None:
    subprocess.run(["ss", "-K", "src", "127.0.0.1", "sport", "=", sport, "dport", "=", dport],
                   capture_output=True, check=False)


def can_cut_links() -> bool:
    """Whether this machine lets ``ss -K`` destroy sockets (``ss`` installed, root, a kernel
    with INET_DIAG_DESTROY)."""
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    accepted.settimeout(2)
    try:
        _destroy(f":{client.getsockname()[1]}", f":{server.getsockname()[1]}")
        return accepted.recv(1) == b""
    except FileNotFoundError:          # no ss
        return False
    except TimeoutError:               # the connection is still there
        return False
    except ConnectionError:            # reset: cut
        return True
    finally:
        for end in (client, accepted, server):
            end.close()
