"""ppml/runtime/federated.py and remote.py: parties in their own trust domains.

Nodes meet over TLS links with certificates of one authority; a served role answers only the
methods each peer was given; a party holds its own keys and no handle of another; a party that
never comes, or dies, fails the run naming it, and the launcher leaves no process behind.
"""

import os
import signal
import subprocess
import sys
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import ray

from ppml.runtime import federated
from ppml.runtime.deadlines import LOST_EXIT
from ppml.runtime.federated import Node, Peers, launch, loopback
from ppml.runtime.links import LinkError
from ppml.runtime.roles import RoleError
from ppml.runtime.tls import Identity

NAMES = ["server", "alice", "bob"]


def identities(directory: Path, names: list) -> dict:
    return {n: Identity.load(n, str(directory / f"{n}.crt"), str(directory / f"{n}.key"))
            for n in names}


def nodes_up(directory: Path, talks: dict, timeout_s: float = 10.0, ranks=None) -> dict:
    """A node per party of ``talks`` (name -> peers), linked up in threads: name -> (node,
    error)."""
    peers = Peers.load(directory / "peers.yaml")
    ids = identities(directory, list(talks))
    nodes = {n: Node(ids[n], peers, talks[n], ranks or {}, timeout_s) for n in talks}

    def connect(name):
        try:
            nodes[name].connect()
            return nodes[name], None
        except ConnectionError as exc:
            return nodes[name], exc

    with ThreadPoolExecutor(len(nodes)) as pool:
        return dict(zip(nodes, pool.map(connect, nodes)))


class Vault:
    """A served role: ``double`` for everyone, ``secret`` for nobody."""

    def double(self, x):
        return 2 * x

    def fail(self):
        raise ValueError("x must be positive")

    def secret(self):
        return b"the vault's key"

    def slow(self, seconds):
        time.sleep(seconds)
        return seconds


@pytest.fixture
def star(tmp_path):
    loopback(tmp_path, NAMES)
    up = nodes_up(tmp_path, {"server": ["alice", "bob"], "alice": ["server"],
                             "bob": ["server"]})
    assert all(err is None for _, err in up.values())
    nodes = {n: node for n, (node, _) in up.items()}
    nodes["server"].serve(Vault(), {"alice": {"double", "fail"}, "bob": {"double"}})
    yield nodes
    for node in nodes.values():
        node.close()


def test_a_served_role_answers_only_what_each_peer_may_call(star):
    alice, bob = star["alice"].remote("server"), star["bob"].remote("server")
    assert alice.call("double", 21) == 42 and bob.call("double", (1,)) == (1, 1)
    with pytest.raises(PermissionError, match="bob may not call server.fail"):
        bob.call("fail")
    with pytest.raises(PermissionError, match="alice may not call server.secret"):
        alice.call("secret")
    with pytest.raises(ValueError, match="x must be positive") as err:
        alice.call("fail")
    assert "server" in " ".join(getattr(err.value, "__notes__", []))
    with pytest.raises(TypeError, match="cannot cross between parties"):
        alice.call("double", object())                       # data only, never code


def held_by(root) -> list:
    """Every object ``root`` holds through attributes, containers and bound methods (not
    through modules, functions' globals or threads: what the party's objects hold)."""
    reachable, todo, seen = [], [root], set()
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType,
                                                types.FrameType, threading.Thread)):
            continue
        seen.add(id(obj))
        reachable.append(obj)
        if isinstance(obj, dict):
            todo.extend(list(obj.keys()) + list(obj.values()))
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo.extend(obj)
        elif isinstance(obj, types.MethodType):
            todo.append(obj.__self__)
        else:
            todo.extend(vars(obj).values() if hasattr(obj, "__dict__") else ())
            todo.extend(getattr(obj, slot) for slot in getattr(type(obj), "__slots__", ())
                        if hasattr(obj, slot))
    return reachable


def test_a_party_holds_only_its_own_keys_and_no_handle_of_another(star):
    for name, node in star.items():
        assert node.links.identity.name == name
        assert set(node.links.agreed) == set(node.roster) - {name}
        reachable = held_by(node)
        assert any(o is node.links.identity for o in reachable)   # the walk reaches its own
        assert not [o for o in reachable if isinstance(o, ray.actor.ActorHandle)]
        others = [star[n].links.identity for n in star if n != name]
        assert not [o for o in reachable if any(o is other for other in others)]
    assert star["alice"].links.agreed["server"] == star["server"].links.agreed["alice"]
    assert star["alice"].links.agreed["server"] != star["bob"].links.agreed["server"]


def test_a_long_call_is_waited_for_and_a_silent_server_is_named(tmp_path):
    """The caller's timeout counts silence: busy notes (every second) carry a 4 s call past
    a 3 s timeout; once they stop (as from a stopped process) the caller names the server
    about 3 s after it last heard from it."""
    loopback(tmp_path, ["server", "alice"])
    up = nodes_up(tmp_path, {"server": ["alice"], "alice": ["server"]}, timeout_s=3.0)
    nodes = {n: node for n, (node, _) in up.items()}
    try:
        nodes["server"].serve(Vault(), {"alice": {"slow"}})
        server = nodes["alice"].remote("server")
        assert server.call("slow", 4.0) == 4.0
        nodes["server"]._pool._stop.set()                  # no more busy notes
        start = time.monotonic()
        with pytest.raises(RoleError, match="server went silent during slow: nothing heard "
                                            "for 3 s") as info:
            server.call("slow", 8.0)
        assert info.value.role == "server" and 3.0 <= time.monotonic() - start < 4.5
    finally:
        for node in nodes.values():
            node.close()


def test_a_broken_link_fails_the_waiting_call_naming_the_party(star):
    star["server"].close()
    with pytest.raises((RoleError, ConnectionError), match="server"):
        star["alice"].remote("server").call("double", 1)


def test_a_silent_peer_is_named_while_another_keeps_its_link_alive(star, monkeypatch):
    """The server waits for alice and bob to close; alice goes silent (stopped: no frame, not
    even a keepalive) while bob's keepalives go on: the wait fails naming alice, not bob, after
    party_timeout_s."""
    monkeypatch.setattr(star["alice"].links, "send", lambda *args, **kwargs: None)
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"^alice sent server nothing for 2 s"):
        star["server"].links.wait_closed(["alice", "bob"], 2.0)
    assert 2.0 <= time.monotonic() - start < 4.0


def test_a_party_that_never_starts_fails_its_peers_naming_it(tmp_path):
    loopback(tmp_path, NAMES)
    up = nodes_up(tmp_path, {"server": ["alice", "bob"], "alice": ["server"]}, timeout_s=0.5)
    err = up["server"][1]
    assert isinstance(err, LinkError) and err.peer == "bob"      # given the time to start
    assert "bob did not connect to server within 2 s (4 x timeout_s)" in str(err)
    for node, _ in up.values():
        node.close()


@pytest.mark.parametrize("edit, message", [
    (lambda text: text.replace("port: ", "port: 7"), "a TCP port"),
    (lambda text: text.replace("name: bob", "name: alice"), "names a party twice"),
    (lambda text: text.replace("bob.crt", "nobody.crt"), "bob's certificate"),
    (lambda text: text.replace("authority:", "authorities:"), "exactly the keys"),
    (lambda text: text.replace("name: bob", "name: Bob"), "DNS label"),
])
def test_peers_yaml_is_checked(tmp_path, edit, message):
    loopback(tmp_path, NAMES)
    path = tmp_path / "peers.yaml"
    path.write_text(edit(path.read_text()))
    with pytest.raises(ValueError, match=message):
        Peers.load(path)


def running(directory: Path) -> list:
    """Processes whose command line names ``directory`` (the launcher's parties)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(directory).encode() in cmdline:
            found.append(int(pid))
    return found


SMALL = ["experiment=private_cb", "parties=2", "arms=10", "dims=4", "horizon=3", "seed=1",
         "progress=false", "party_timeout_s=20"]


def test_the_launcher_sees_a_stopped_party():
    """What the launcher watches for the party that no other waits for (an idle one, or the
    last one running): a process stopped by SIGSTOP, and no longer once it goes on."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert not federated._stopped(sleeper.pid)
        sleeper.send_signal(signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while not federated._stopped(sleeper.pid):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        sleeper.send_signal(signal.SIGCONT)
        time.sleep(0.2)
        assert not federated._stopped(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not federated._stopped(sleeper.pid)                   # gone


@pytest.mark.slow
@pytest.mark.parametrize("shown", [None, "stranger"])     # its stderr also on the launcher's
def test_the_launcher_stops_every_party_when_one_fails(tmp_path, capfd, shown):
    names = ["party-0", "party-1", "puller", "rewarder", "dealer", "world", "stranger"]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="stranger failed .*not a party of private_cb"):
        launch(names, SMALL, tmp_path / "run", timeout_s=60, shown=shown)
    assert ("party stranger failed" in capfd.readouterr().err) == (shown == "stranger")
    assert time.monotonic() - start < 40
    assert running(tmp_path / "run") == []


@pytest.mark.slow
def test_a_launcher_stopped_by_a_signal_leaves_no_party_behind(tmp_path):
    script = (f"from pathlib import Path; from ppml.runtime.federated import launch; "
              f"launch({['party-0', 'party-1', 'puller', 'rewarder', 'dealer', 'world']!r}, "
              f"{SMALL[:-1] + ['horizon=100000', 'party_timeout_s=60']!r}, "
              f"Path({str(tmp_path / 'run')!r}), 600)")
    launcher = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 60
    while len(running(tmp_path / "run")) < 6:               # every party has started
        assert time.monotonic() < deadline and launcher.poll() is None
        time.sleep(0.2)
    launcher.terminate()
    assert launcher.wait(timeout=30) != 0
    assert running(tmp_path / "run") == []


@pytest.mark.slow
def test_a_party_killed_mid_run_fails_its_peers_naming_it(tmp_path):
    names = ["party-0", "party-1", "puller", "rewarder", "dealer", "world"]
    loopback(tmp_path, names)
    config = ["experiment=private_cb", "parties=2", "arms=10", "dims=4", "horizon=100000",
              "seed=1", "progress=true", "party_timeout_s=20"]
    processes = {n: subprocess.Popen(
        [sys.executable, "-m", "jobs.party", f"party={n}", f"peers={tmp_path / 'peers.yaml'}",
         *config], stdout=open(tmp_path / f"{n}.log", "wb"), stderr=subprocess.STDOUT,
        start_new_session=True) for n in names}
    try:
        deadline = time.monotonic() + 60
        while b"step" not in (tmp_path / "party-0.log").read_bytes():   # tqdm: steps running
            assert time.monotonic() < deadline and processes["party-0"].poll() is None
            time.sleep(0.2)
        processes["party-1"].kill()
        killed = time.monotonic()
        for name in ("party-0", "puller", "rewarder"):       # the failure spreads, as a
            assert processes[name].wait(timeout=30) == LOST_EXIT   # lost peer (resumable)
            assert f"party {name} failed" in (tmp_path / f"{name}.log").read_text()
        log = (tmp_path / "party-0.log").read_text()        # its peer names it, and the step
        named = ("the link to party 1 closed" in log         # found waiting for party 1, or
                 or "the link from party-0 to party-1 is closed" in log)   # sending to it
        assert named and "at step" in log, log[-500:]
        assert time.monotonic() - killed < 25
        for name in ("dealer", "world"):                      # their clients closed or died
            assert processes[name].wait(timeout=30) in (0, LOST_EXIT)
    finally:
        for p in processes.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    assert running(tmp_path) == []
