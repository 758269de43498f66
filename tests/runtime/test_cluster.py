"""ppml/runtime/cluster.py: joining a cluster that is not there fails fast, naming the address."""

import socket
import time

import pytest

from ppml.runtime.cluster import check_reachable


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
