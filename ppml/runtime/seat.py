"""A seat of the secret-sharing engine inside a role: one compute party that a role holds for a
whole run, running one program per call on the same keys and dealer, rounds continuing.

`ppml.runtime.spmd.run` starts fresh parties for one program.  A role-based protocol that
computes on shares between two of its own roles, step after step (Samba's selection between the
Controller and Comp, docs/samba.md), gives each of them a seat instead:

1. each role makes its seat (`make`), which tells its `address`;
2. its keys reach the role by method call, sealed to it (`ppml.crypto.agreement`), never as
   creation arguments: the key of each pair of seats, and its key shared with the dealer;
3. every seat connects (`connect`) at the same time;
4. each role calls `run` (program, its inputs) once per step, every seat at once.

A seat program is written once for both kinds of seat: ``program(ctx, inputs)`` gets
``inputs`` = {rank: that party's inputs} for the parties held in this process and returns
{rank: that party's output}.

* `Seat` (``runtime="ray"``): its own party over authenticated links (`ppml.runtime.links`),
  in its role's actor; rounds are messages between processes.
* `LocalSeat` (``runtime="local"``): the seats of one process meet at a `_Table`, the in-process
  engine of their parties (found by the lowest rank's address, as a socket would be), which
  runs each program once for all of them along the held-party axis (`ppml.mpc.comm.LocalComm`,
  as the local runtime of `spmd.run` does) and hands each seat its own output and view: one
  hand-over between threads per step instead of one per round.  Like every local runtime it
  simulates the parties in one process; it is not a trust boundary.

A role that checkpoints keeps its seat's `snapshot` (where its party's pair streams, dealer
material and round counters stand: public numbers, no key) and gives it back to `restore` once
the seats have linked up again.

Party 0 asks the dealer for its corrections (`RoleDealer`: a role that answers
``corrections(kind, spec, batch, count)``, the next batch asked for ahead); the other parties
derive their material from their dealer keys, with no message.
"""

from __future__ import annotations

import numpy as np

import secrets
import threading

from ppml.checks import check_int
from ppml.mpc.comm import LocalComm
from ppml.mpc.context import Context, EngineConfig
from ppml.mpc.dealer import DealerStore
from ppml.crypto.rng import fresh_key
from ppml.mpc.keys import PartyKeys, pair
from ppml.runtime.cluster import node_address
from ppml.runtime.link_comm import LinkComm
from ppml.runtime.links import Links
from ppml.runtime.tls import Identity, Trust
from ppml.runtime.mailbox import Mailbox
from ppml.runtime.roles import DEFAULT_TIMEOUT_S



def make(runtime: str, rank: int, config: EngineConfig, timeout_s: float = DEFAULT_TIMEOUT_S):
    """Seat ``rank`` of ``config``'s parties for a role of ``runtime`` ("local" or "ray")."""
    return (LocalSeat if runtime == "local" else Seat)(rank, config, timeout_s)


def pinned(certificates: dict) -> Trust | None:
    """The trust of a seat that accepts exactly these peers' certificates (rank -> PEM, as
    `certificate` gives them; ``party-<rank>``), or None for local seats (no certificates)."""
    if any(pem is None for pem in certificates.values()):
        return None
    return Trust.pinned({f"party-{rank}": pem for rank, pem in certificates.items()})


def _pairs_of(rank: int, ranks: int) -> dict:
    """Every pair of ``rank``, its key left to be agreed (None)."""
    return {pair(rank, j): None for j in range(ranks) if j != rank}


def _check_keys(rank: int, config: EngineConfig, pair_keys: dict, dealer_key, dealer) -> list:
    """The pairs of seat ``rank``; ValueError when one of its keys is missing or misplaced."""
    peers = [pair(rank, j) for j in range(config.ranks) if j != rank]
    missing = [ij for ij in peers if ij not in pair_keys]
    if missing:
        raise ValueError(f"seat {rank} lacks the keys of pairs {missing}")
    if (rank < config.parties) != (dealer_key is not None):
        raise ValueError(f"seat {rank} needs a dealer key exactly when it is a compute party "
                         f"(parties: {config.parties})")
    if (rank == 0) != (dealer is not None):
        raise ValueError("party 0, and only party 0, takes its corrections from the dealer")
    return peers


class Seat:
    """Rank ``rank`` of ``config``'s parties (and clients), held by one role, over TLS links;
    seat r is ``party-<r>``, with a self-signed certificate made here (`certificate`), which
    the other seats are handed and pin."""

    def __init__(self, rank: int, config: EngineConfig, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.rank = check_int("rank", rank, 0, config.ranks - 1, what="a party index")
        self.config, self.timeout_s = config, timeout_s
        self.names = [f"party-{r}" for r in range(config.ranks)]
        self._links = Links(Identity.self_signed(self.names[rank]), node_address(), Mailbox(),
                            {name: r for r, name in enumerate(self.names)})
        self.ctx: Context | None = None

    @property
    def address(self) -> tuple:
        """Where the seats of higher rank connect to this one."""
        return self._links.address

    @property
    def certificate(self) -> bytes:
        """This seat's certificate (public): what its peers pin."""
        return self._links.identity.certificate

    def connect(self, addresses: list, trust: Trust, pair_keys: dict | None,
                dealer_key: bytes | None, dealer=None) -> None:
        """Link up with every other seat (they connect at the same time), and make the context.

        ``addresses[j]``: seat j's `address`; ``trust``: whom this seat accepts
        (`Trust.pinned` of the other seats' `certificate`); ``pair_keys[(i, j)]`` (i < j): the
        key of each pair this seat is in, or None to use the keys agreed over the links (the
        seeded INSECURE mode passes keys derived from its seed); ``dealer_key``: the key this
        compute party shares with the dealer (None for a client); ``dealer``: party 0's source
        of corrections (a `RoleDealer`).
        """
        _check_keys(self.rank, self.config, _pairs_of(self.rank, self.config.ranks)
                    if pair_keys is None else pair_keys, dealer_key, dealer)
        self._links.connect(self.names, {self.names[r]: a for r, a in enumerate(addresses)
                                         if r < self.rank}, trust, self.timeout_s)
        self.ctx = link_context(self._links, self.names, self.rank, self.config, self.timeout_s,
                                pair_keys, dealer_key, dealer)

    def run(self, program, *inputs):
        """This party's output of ``program`` on its ``inputs`` (every seat runs it at once)."""
        if self.ctx is None:
            raise RuntimeError(f"seat {self.rank} is not connected")
        return program(self.ctx, {self.rank: inputs})[self.rank]

    def received(self) -> list:
        """Every ring element this seat received since the last call (its view, in order;
        needs ``record_views``)."""
        return drain_view(self.ctx.comm.views[self.rank])

    def stats(self):
        """This party's online rounds and bytes sent so far (`ppml.mpc.comm.PartyStats`)."""
        return self.ctx.comm.stats[self.rank]

    def snapshot(self) -> dict:
        """This party's engine state (`Context.snapshot`): public positions, no key."""
        return own_snapshot(self.ctx, self.rank)

    def restore(self, state: dict) -> None:
        """Go on from `snapshot`'s ``state`` (after `connect`, with the keys of this run)."""
        self.ctx.restore([state])

    def close(self) -> None:
        """Close the links: a peer still waiting for this seat fails at once."""
        self._links.close()


def own_snapshot(ctx: Context, rank: int) -> dict:
    """Rank ``rank``'s part of ``ctx``'s snapshot (a seat's own party)."""
    return ctx.snapshot()[ctx.comm.held_ranks.index(rank)]


def link_context(links: Links, names: list, rank: int, config: EngineConfig, timeout_s: float,
                 pair_keys: dict | None, dealer_key: bytes | None, dealer=None) -> Context:
    """The engine context of rank ``rank`` (party ``names[rank]``) over its connected
    ``links``: ``pair_keys`` as given, or when None the keys agreed over the links;
    ``dealer_key`` and ``dealer`` as `Seat.connect` takes them."""
    peers = _check_keys(rank, config, _pairs_of(rank, config.ranks) if pair_keys is None
                        else pair_keys, dealer_key, dealer)
    if pair_keys is None:
        pair_keys = {ij: links.agreed[names[sum(ij) - rank]] for ij in peers}
    keys = PartyKeys(pairs={ij: pair_keys[ij] for ij in peers},
                     dealer={} if dealer_key is None else {rank: dealer_key})

    def send(peer: int, frame: bytes) -> None:
        links.send(names[peer], frame)

    comm = LinkComm(rank, config.parties, send, links.mailbox, timeout_s, config.record_views,
                    config.clients)
    return Context(comm, keys, DealerStore(comm.held, keys.dealer, dealer), config)


class RoleDealer:
    """Party 0's source of corrections from a dealer played by a role, which answers
    ``corrections(kind, spec, batch, count)``; each material's next batch is asked for as soon
    as one is taken (on Ray it is made while party 0 computes)."""

    def __init__(self, role):
        self._role = role
        self._ahead = {}  # material key -> ((batch, count), its pending call)

    def _ask(self, material, batch: int, count: int):
        return self._role.submit("corrections", material.kind, material.spec, batch, count)

    def corrections(self, material, batch: int, count: int) -> dict:
        ahead = self._ahead.pop(material.key, None)
        pending = ahead[1] if ahead is not None and ahead[0] == (batch, count) else \
            self._ask(material, batch, count)
        self._ahead[material.key] = ((batch + 1, count), self._ask(material, batch + 1, count))
        return pending.result()


def drain_view(entries: list) -> list:
    """The ring elements of view ``entries`` in order, which it empties."""
    values = [int(v) for *_, payload in entries
              for piece in (payload if isinstance(payload, list) else [payload])
              for v in np.asarray(piece).reshape(-1).tolist()]
    entries.clear()
    return values


_TABLES: dict = {}
"""This process's tables by the token of their lowest rank's address."""
_TABLES_LOCK = threading.Lock()


class _Table:
    """Where the local seats of one engine meet: their keys make one context holding every
    party, and each program runs once all of them have brought their inputs."""

    def __init__(self, config: EngineConfig, timeout_s: float):
        self.config, self.timeout_s = config, timeout_s
        self._ready = threading.Condition()
        self._keys, self._dealer = {}, None
        self._inputs, self._outputs, self._restored = {}, {}, {}
        self._closed = self._failed = None
        self.ctx: Context | None = None

    def _wait(self, rank: int, done, what: str) -> None:
        if not self._ready.wait_for(lambda: done() or self._closed is not None
                                    or self._failed is not None, self.timeout_s):
            raise TimeoutError(f"seat {rank}'s peers did not {what} within "
                               f"{self.timeout_s:g} s (timeout_s)")
        if self._failed is not None:
            raise ConnectionError(f"the program failed while seat {rank} waited: "
                                  f"{type(self._failed).__name__}: {self._failed}")
        if not done():
            raise ConnectionError(f"seat {self._closed} closed while seat {rank} waited to "
                                  f"{what}")

    def join(self, rank: int, pair_keys: dict, dealer_key, dealer) -> None:
        with self._ready:
            self._keys[rank] = (pair_keys, dealer_key)
            self._dealer = self._dealer or dealer
            if len(self._keys) == self.config.ranks:
                pairs = {ij: k for keys, _ in self._keys.values() for ij, k in keys.items()
                         if k is not None}
                pairs.update({ij: fresh_key() for keys, _ in self._keys.values()
                              for ij in keys if ij not in pairs})
                dealers = {r: k for r, (_, k) in self._keys.items() if k is not None}
                comm = LocalComm(self.config.parties, self.config.record_views,
                                 self.config.clients)
                store = DealerStore(comm.held, dealers, self._dealer)
                self.ctx = Context(comm, PartyKeys(pairs, dealers), store, self.config)
                self._ready.notify_all()
            self._wait(rank, lambda: self.ctx is not None, "connect")

    def run(self, rank: int, program, inputs: tuple):
        with self._ready:
            if self._closed is not None:
                raise ConnectionError(f"seat {self._closed} has closed")
            self._inputs[rank] = inputs
            if len(self._inputs) == self.config.ranks:    # the last to come runs it for all
                inputs, self._inputs = self._inputs, {}
                try:
                    self._outputs = program(self.ctx, inputs)
                except BaseException as err:
                    self._failed = err                     # the others fail too, at once
                    raise
                finally:
                    self._ready.notify_all()
            else:
                try:
                    self._wait(rank, lambda: rank in self._outputs, "run their part")
                except TimeoutError as err:               # no late peer runs on stale inputs
                    self._inputs.pop(rank, None)
                    self._failed = err
                    raise
            return self._outputs.pop(rank)

    def restore(self, rank: int, state: dict) -> None:
        """Seat ``rank``'s engine state; the engine goes back to them once every seat's is in
        (each role restores its own seat before any program runs)."""
        with self._ready:
            self._restored[rank] = state
            if len(self._restored) == self.config.ranks:
                states, self._restored = self._restored, {}
                self.ctx.restore([states[r] for r in self.ctx.comm.held_ranks])

    def close(self, rank: int) -> None:
        with self._ready:
            self._closed = rank if self._closed is None else self._closed
            self._ready.notify_all()


class LocalSeat:
    """A seat whose peers are seats in this process (module docstring): the same calls as
    `Seat`; its address names the table of the lowest rank."""

    def __init__(self, rank: int, config: EngineConfig, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.rank = check_int("rank", rank, 0, config.ranks - 1, what="a party index")
        self.config = config
        self.address = ("in-process", secrets.token_hex(16))
        self.certificate = None                     # no links: nothing to pin
        self._table = None
        if rank == 0:
            with _TABLES_LOCK:
                _TABLES[self.address[1]] = self._table = _Table(config, timeout_s)

    def connect(self, addresses: list, trust, pair_keys: dict | None, dealer_key: bytes | None,
                dealer=None) -> None:
        """Meet the other seats at the lowest rank's table (they come at the same time);
        ``trust`` is unused (no links), and pair keys left None are drawn fresh by the table."""
        if pair_keys is None:
            pair_keys = _pairs_of(self.rank, self.config.ranks)
        peers = _check_keys(self.rank, self.config, pair_keys, dealer_key, dealer)
        with _TABLES_LOCK:
            self._table = _TABLES.get(tuple(addresses[0])[1])
        if self._table is None:
            raise ConnectionError(f"no seat 0 at {addresses[0]} in this process")
        self._table.join(self.rank, {ij: pair_keys[ij] for ij in peers}, dealer_key, dealer)

    @property
    def ctx(self) -> Context | None:
        return None if self._table is None else self._table.ctx

    def run(self, program, *inputs):
        if self.ctx is None:
            raise RuntimeError(f"seat {self.rank} is not connected")
        return self._table.run(self.rank, program, inputs)

    def received(self) -> list:
        return drain_view(self.ctx.comm.views[self.rank])

    def stats(self):
        return self.ctx.comm.stats[self.rank]

    def snapshot(self) -> dict:
        return own_snapshot(self.ctx, self.rank)

    def restore(self, state: dict) -> None:
        self._table.restore(self.rank, state)

    def close(self) -> None:
        if self._table is not None:
            self._table.close(self.rank)
        if self.rank == 0:
            with _TABLES_LOCK:
                _TABLES.pop(self.address[1], None)
