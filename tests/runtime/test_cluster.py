"""ppml/runtime/cluster.py: joining a cluster that is not there fails fast, naming the address;
a private instance runs its workers at the driver's priority."""

import os
import socket
import time

import pytest
import ray

from ppml.runtime.cluster import (WORKER_NICENESS, check_reachable, connected, ensure_ray,
                                  two_local_nodes)


def test_a_closed_port_is_refused_at_once_naming_it():
    start = time.monotonic()
    with pytest.raises(ConnectionError, match=r"ray_address=127\.0\.0\.1:1: no Ray cluster "
                                              r"answers there within 5 s"):
        check_reachable("127.0.0.1:1", 5.0)
    assert time.monotonic() - start < 2.0


def test_an_unknown_host_is_refused_naming_it():
    with pytest.raises(ConnectionError, match=r"ray_address=no-such-host\.invalid:6379"):
        check_reachable("no-such-host.invalid:6379", 2.0)


def test_a_listening_address_and_other_forms_pass():
    with socket.create_server(("127.0.0.1", 0)) as server:
        check_reachable("127.0.0.1:%d" % server.getsockname()[1], 2.0)
    check_reachable("auto", 0.1)                    # left to Ray
    check_reachable("ray://head:10001", 0.1)


def test_a_private_instance_s_workers_run_at_the_driver_s_priority(monkeypatch):
    """Ray lowers its workers' priority by 15 unless told otherwise; a private instance tells
    it 0 (whichever function starts it), a cluster joined is left as it is."""
    started = []
    monkeypatch.setattr(ray, "is_initialized", lambda: bool(started))
    monkeypatch.setattr(ray, "init", lambda **options: started.append(options))
    monkeypatch.setattr(ray, "shutdown", lambda: started.clear())
    ensure_ray()
    assert started == [{"address": "local", "num_cpus": os.cpu_count(),
                        "include_dashboard": False, "_system_config": {"worker_niceness": 0}}]
    assert WORKER_NICENESS == 0
    started.clear()
    with connected(num_cpus=2):
        assert started[0]["_system_config"] == {"worker_niceness": 0}
    monkeypatch.setattr("ppml.runtime.cluster.check_reachable", lambda *args: None)
    with connected("127.0.0.1:6379"):
        assert started == [{"address": "127.0.0.1:6379"}]


def test_two_local_nodes_refuse_a_process_where_ray_runs(ray_cluster):
    with pytest.raises(RuntimeError, match="two-node cluster is made here"):
        with two_local_nodes(1, 1 << 28):
            pass
