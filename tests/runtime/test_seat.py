"""ppml/runtime/seat.py: the engine between two roles, step after step.

Party 1 is a role (a background object with a `LocalSeat`, or an actor with a `Seat` on
links); party 0 is the test itself, as Samba's Controller is the driver.  With seeded keys both
kinds of seat compute exactly what the local runtime of `spmd.run` computes.
"""

import numpy as np
import pytest

import ppml.mpc as mpc
from ppml.mpc.context import EngineConfig
from ppml.mpc.dealer import Dealer, material
from ppml.mpc.keys import dealer_party_key, dealer_secret_key, pair_key
from ppml.mpc.local import in_process
from ppml.runtime import roles
from ppml.runtime import seat as seats
from ppml.runtime.deadlines import DEFAULT_TIMEOUT_S
from ppml.runtime.seat import LocalSeat, RoleDealer, Seat

SEED = 21
CONFIG = EngineConfig(2, seed=SEED, record_views=True)


class Member:
    """A role holding seat ``rank``."""

    def __init__(self, rank: int, config: EngineConfig, runtime: str):
        self.seat = seats.make(runtime, rank, config, timeout_s=20)

    def address(self):
        return self.seat.address, self.seat.certificate

    def connect(self, addresses, certificate, key, dealer_key):
        self.seat.connect(addresses, seats.pinned({0: certificate}),
                          None if key is None else {(0, 1): key}, dealer_key)

    def run(self, program, *inputs):
        return self.seat.run(program, *inputs)

    def received(self):
        return self.seat.received()

    def close(self):
        self.seat.close()


class DealerRole:
    """The dealer as a role: its keys, and party 0's corrections on request."""

    def __init__(self, seed: int):
        self.dealer = Dealer({p: dealer_party_key(seed, p) for p in range(2)},
                             dealer_secret_key(seed))

    def corrections(self, kind, spec, batch, count):
        return self.dealer.corrections(material(kind, spec), batch, count)


def step(ctx, inputs):
    """Party 0's scores, party 1's weights, the argmax to party 1 (a seat program)."""
    x = ctx.share(inputs[0][0] if ctx.holds(0) else None, owner=0, shape=(5,))
    w = ctx.share(np.linspace(1, 2, 5) if ctx.holds(1) else None, owner=1, shape=(5,))
    onehot = ctx.value_at(mpc.reveal_argmax(x * w, to=1, ties="first"), 1)
    return {p: onehot if p == 1 else None for p in ctx.held}


def steps(runtime: str) -> tuple:
    """Three steps between the test (party 0) and a Member role (party 1); (what party 1
    got each step, what each seat received, party 0's operation counts)."""
    member = roles.spawn(Member, runtime, 1, CONFIG, runtime, background=True, timeout_s=30)
    dealer = roles.spawn(DealerRole, runtime, SEED, timeout_s=DEFAULT_TIMEOUT_S)
    seat = seats.make(runtime, 0, CONFIG, timeout_s=20)
    try:
        address, certificate = member.call("address")
        joining = member.submit("connect", [seat.address, address], seat.certificate,
                                pair_key(SEED, 0, 1), dealer_party_key(SEED, 1))
        seat.connect([seat.address, address], seats.pinned({1: certificate}),
                     {(0, 1): pair_key(SEED, 0, 1)}, dealer_party_key(SEED, 0),
                     RoleDealer(dealer))
        joining.result()
        got = []
        for k in range(3):
            scores = np.arange(5.0) * (k - 1) ** 2 - k
            theirs = member.submit("run", step)
            assert seat.run(step, scores) is None
            got.append(theirs.result())
        return got, seat.received(), member.call("received"), seat.stats()
    finally:
        seat.close()
        roles.teardown([member, dealer])


def local_steps() -> tuple:
    ctx = in_process(CONFIG)
    got = [ctx.value_at(mpc.reveal_argmax(
        ctx.share(np.arange(5.0) * (k - 1) ** 2 - k, owner=0, shape=(5,))
        * ctx.share(np.linspace(1, 2, 5), owner=1, shape=(5,)), to=1, ties="first"), 1)
        for k in range(3)]
    return got, ctx.comm.stats[0]


@pytest.mark.parametrize("runtime", [
    "local", pytest.param("ray", marks=pytest.mark.ray)])
def test_two_seats_compute_what_the_local_runtime_computes(runtime, request):
    if runtime == "ray":
        request.getfixturevalue("ray_cluster")
    got, seen_0, seen_1, stats = steps(runtime)
    expected, local_stats = local_steps()
    weights = np.linspace(1, 2, 5)
    for k, onehot in enumerate(got):
        product = (np.arange(5.0) * (k - 1) ** 2 - k) * weights
        assert onehot.tolist() == np.eye(5, dtype=int)[list(product).index(max(product))].tolist()
        assert np.array_equal(onehot, expected[k])
    assert (stats.rounds, stats.bytes_sent) == (local_stats.rounds, local_stats.bytes_sent)
    assert seen_0 and seen_1 and len(seen_1) > len(seen_0)     # party 1 also gets the result


@pytest.mark.parametrize("kind", [LocalSeat, Seat])
def test_a_closed_peer_fails_the_waiting_seat_at_once(kind):
    runtime = "local" if kind is LocalSeat else "ray"
    member = roles.spawn(Member, "local", 1, CONFIG, runtime, background=True,
                         timeout_s=DEFAULT_TIMEOUT_S)
    seat = kind(0, CONFIG, timeout_s=20)
    try:
        address, certificate = member.call("address")
        joining = member.submit("connect", [seat.address, address], seat.certificate, None,
                                dealer_party_key(SEED, 1))
        seat.connect([seat.address, address], seats.pinned({1: certificate}), None,
                     dealer_party_key(SEED, 0),
                     RoleDealer(roles.spawn(DealerRole, "local", SEED,
                                            timeout_s=DEFAULT_TIMEOUT_S)))
        joining.result()
        member.call("close")
        with pytest.raises(ConnectionError, match="closed"):
            seat.run(step, np.zeros(5))
    finally:
        seat.close()
        roles.teardown([member])


def test_a_failing_program_fails_every_local_seat():
    member = roles.spawn(Member, "local", 1, CONFIG, "local", background=True, timeout_s=30)
    seat = LocalSeat(0, CONFIG, timeout_s=20)
    try:
        joining = member.submit("connect", [seat.address, member.call("address")[0]], None,
                                pair_key(SEED, 0, 1), dealer_party_key(SEED, 1))
        seat.connect([seat.address, None], None, {(0, 1): pair_key(SEED, 0, 1)},
                     dealer_party_key(SEED, 0),
                     RoleDealer(roles.spawn(DealerRole, "local", SEED,
                                            timeout_s=DEFAULT_TIMEOUT_S)))
        joining.result()
        theirs = member.submit("run", step)
        errors = []
        for call in (lambda: seat.run(step, np.zeros(4)),    # 4 scores where 5 are shared
                     theirs.result):
            with pytest.raises((ValueError, ConnectionError), match="shape") as err:
                call()
            errors.append(type(err.value))
        # the seat that came last ran the program and raised its error; the other was told
        assert sorted(e.__name__ for e in errors) == ["ConnectionError", "ValueError"]
    finally:
        seat.close()
        roles.teardown([member])


@pytest.mark.parametrize("kind", [LocalSeat, Seat])
def test_seat_checks_its_keys(kind):
    seat = kind(0, CONFIG)
    try:
        with pytest.raises(ValueError, match="lacks the keys of pairs"):
            seat.connect([seat.address, None], None, {}, b"k" * 32)
        with pytest.raises(ValueError, match="dealer key exactly when"):
            seat.connect([seat.address, None], None, {(0, 1): b"k" * 32}, None)
        with pytest.raises(ValueError, match="only party 0"):
            seat.connect([seat.address, None], None, None, b"k" * 32)
        with pytest.raises(RuntimeError, match="not connected"):
            seat.run(print)
    finally:
        seat.close()
    with pytest.raises(ValueError, match="rank"):
        kind(2, CONFIG)
