"""The mailbox: messages numbered by their sender, duplicates ignored, clear failures."""

import threading

import pytest

from ppml.runtime.mailbox import Mailbox


def test_duplicate_delivery_is_ignored_before_and_after_collect():
    box = Mailbox()
    assert box.deliver(1, 0, "open", "first")
    assert not box.deliver(1, 0, "open", "again")            # retried delivery, still waiting
    assert box.collect({0: 1}, timeout_s=1.0) == {0: ("open", "first")}
    assert not box.deliver(1, 0, "open", "late duplicate")   # message already collected
    box.deliver(2, 0, "open", "next")
    assert box.collect({0: 2}, timeout_s=1.0) == {0: ("open", "next")}


def test_collect_waits_for_every_sender_of_the_round():
    box = Mailbox()
    box.deliver(2, 1, "b", "early")                           # a later message may come first
    threading.Timer(0.05, box.deliver, (1, 1, "a", "x")).start()
    threading.Timer(0.10, box.deliver, (1, 2, "a", "y")).start()
    assert box.collect({1: 1, 2: 1}, timeout_s=5.0) == {1: ("a", "x"), 2: ("a", "y")}
    assert box.collect({1: 2}, timeout_s=1.0) == {1: ("b", "early")}


def test_each_sender_numbers_its_own_messages():
    box = Mailbox()
    box.deliver(5, 1, "open", "fifth from 1")                 # 1 sent this party more before
    box.deliver(1, 2, "open", "first from 2")
    assert box.collect({1: 5, 2: 1}, timeout_s=1.0) == {1: ("open", "fifth from 1"),
                                                        2: ("open", "first from 2")}
    assert not box.deliver(3, 1, "open", "an old number of 1")


def test_a_silent_peer_times_out_with_a_clear_error():
    box = Mailbox()
    box.deliver(3, 1, "open", "here")
    with pytest.raises(TimeoutError, match=r"no message from party 2 for round 3 within 0.05 s"):
        box.collect({1: 3, 2: 3}, timeout_s=0.05, where="round 3")


def test_a_closed_link_fails_the_wait_at_once():
    box = Mailbox()
    threading.Timer(0.05, box.close, (1, "the peer closed the connection")).start()
    with pytest.raises(ConnectionError, match="link to party 1 closed .* round 4"):
        box.collect({1: 4}, timeout_s=30.0, where="round 4")


def test_messages_that_came_before_the_link_closed_are_still_collected():
    box = Mailbox()
    box.deliver(1, 0, "open", "last words")
    box.close(0, "the peer closed the connection")
    assert box.collect({0: 1}, timeout_s=1.0) == {0: ("open", "last words")}
