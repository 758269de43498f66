"""The per-process handle a protocol program receives: sharing, opening, material and stats.

One :class:`Context` serves the parties held in this process (all of them in the local runtime,
one in the Ray runtime).  Share arrays carry the held-party axis first; everything a protocol
does to shares goes through the helpers here or through :mod:`ppml.mpc.comm`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppml.checks import check_int, check_shape
from ppml.crypto.fixed import (MAX_PRODUCT_SCALE, check_precision_bits, decode, encode_words,
                               to_signed)
from ppml.mpc.local_tasks import SPLIT_MIN_ELEMENTS
from ppml.mpc.ranges import encode_input
from ppml.mpc.ring import ARITHMETIC, BINARY, Ring, pad
from ppml.mpc.tensor import ArithmeticShared, BinaryShared

TRUNCATION_MODES = ("bounded", "exact", "probabilistic")


class PerParty(list):
    """A value that differs by party, indexed by party; ``spmd.run`` gives element i to party i."""


@dataclass(frozen=True)
class EngineConfig:
    """The public settings every party of one program run shares; each checked once, here."""

    parties: int
    """Compute parties (ranks 0..parties-1), >= 2."""
    precision_bits: int = 20
    """L, the fixed-point fractional bits of reals (`ppml.crypto.fixed`)."""
    truncation: str = "bounded"
    """One of `TRUNCATION_MODES` (docs/mpc.md, "Truncation")."""
    seed: int | None = None
    """None: every key from the OS CSPRNG.  An int: INSECURE reproducible keys."""
    clients: int = 0
    """Ranks after the parties that hold no shares but input secrets and receive revealed
    values (Hannun et al.'s p' and p'')."""
    workers: int = 1
    """Ray tasks per party for large party-local products (`local_tasks`)."""
    record_views: bool = False
    """Keep every opened value each party receives (the tests of its view)."""
    split_min_elements: int | None = None
    """With ``workers > 1``: products with this many output elements per party or more are
    split over the workers (`local_tasks`); None: the crossover measured here,
    `local_tasks.SPLIT_MIN_ELEMENTS`."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "parties", check_int("parties", self.parties, 2,
                                                      what="an integer"))
        check_precision_bits(self.precision_bits)
        if self.truncation not in TRUNCATION_MODES:
            raise ValueError(f"truncation must be one of {TRUNCATION_MODES}, got "
                             f"{self.truncation!r}")
        if self.seed is not None:
            check_int("seed", self.seed, 0)
        object.__setattr__(self, "clients", check_int("clients", self.clients, 0,
                                                      what="an integer"))
        check_int("workers", self.workers, 1, what="an integer")
        if self.split_min_elements is not None:
            check_int("split_min_elements", self.split_min_elements, 1, what="an integer")
        if not isinstance(self.record_views, bool):
            raise ValueError(f"record_views must be a bool, got {self.record_views!r}")

    @property
    def ranks(self) -> int:
        """Parties and clients."""
        return self.parties + self.clients


class Context:
    """What a program gets in one process: the held parties' comm, keys and dealer store, and
    the run's `EngineConfig` (trusted: it was checked when made)."""

    def __init__(self, comm, keys, store, config: EngineConfig):
        self.comm = comm
        self.keys = keys
        self.store = store
        self.precision_bits = config.precision_bits
        self.truncation = config.truncation
        self._party_0_at = comm.index(0)  # where party 0's shares sit, if held here
        self.workers = config.workers     # Ray tasks for large party-local products
        self.split_min_elements = (SPLIT_MIN_ELEMENTS if config.split_min_elements is None
                                   else config.split_min_elements)
        self._givers: dict = {}           # id of an input array -> the parties that gave it

    @property
    def parties(self) -> int:
        return self.comm.parties

    @property
    def held(self) -> tuple:
        return self.comm.held

    def holds(self, rank: int) -> bool:
        """Whether this process runs ``rank`` (a compute party or a client)."""
        return self.comm.holds(rank)

    def value_at(self, value, rank: int):
        """``rank``'s part of a per-party value (a reveal's result), or None if not run here."""
        if isinstance(value, PerParty):
            return value[self.comm.held_ranks.index(rank)] if self.holds(rank) else None
        return value if self.holds(rank) else None

    def constant(self, value, frac_bits: int | None = None, wide: bool = False):
        """Shares of a public constant: party 0 holds its encoding, the others zero (local).

        ``value`` must lie in the product range (reals |v| < 2^(31-L), integers with
        frac_bits=0 |v| < 2^31), or in the ring's with ``wide=True`` (`ppml.mpc.ranges`).  The
        tensor keeps the value it holds (``public``), so that functions check their domain on it.
        """
        frac = self._scale(frac_bits)
        encoded = encode_input(value, frac, "constant", wide)
        zeros = np.zeros((len(self.held),) + encoded.shape, dtype=np.uint64)
        held = decode(encoded, frac) if frac else to_signed(encoded).copy()
        return ArithmeticShared(self, self.add_public(zeros, encoded, inplace=True), frac,
                                public=held)

    def _scale(self, frac_bits) -> int:
        """An input's scale: the context precision L by default, else ``frac_bits`` in
        [0, `MAX_PRODUCT_SCALE`] (0 for integers, 2L for a state kept at 2L)."""
        if frac_bits is None:
            return self.precision_bits
        return check_int("frac_bits", frac_bits, 0, MAX_PRODUCT_SCALE, what="an integer")

    # -- sharing -----------------------------------------------------------------------------
    def note_inputs(self, inputs: dict) -> None:
        """Remember which parties gave each input array or list of ``inputs`` ({party: {name:
        value}}), for a context that runs every party's program at once on their merged
        inputs (the local runtime): `share` then refuses a value that only other parties gave,
        as the other runtimes do, where the owner itself would pass None.  Numbers and strings
        are not tracked (Python shares one object among equal small ones)."""
        for party, values in inputs.items():
            for value in values.values():
                if isinstance(value, (np.ndarray, list)):
                    self._givers.setdefault(id(value), set()).add(party)

    def _check_owned(self, value, owner: int) -> None:
        """Refuse an input that its owner did not give: None, or (`note_inputs`) a value that
        only other parties gave; the same message in every runtime."""
        givers = self._givers.get(id(value))
        if value is None:
            raise ValueError(f"party {owner} owns the input but passed value=None")
        if givers is not None and owner not in givers:
            raise ValueError(f"party {owner} owns the input but passed value=None (the value "
                             f"given is party {', '.join(map(str, sorted(givers)))}'s)")

    def share(self, value, owner: int, shape=None, frac_bits: int | None = None,
              wide: bool = False):
        """Arithmetic sharing of ``owner``'s real array (fixed point), or integers with
        frac_bits=0.

        ``value`` must lie in the product range: reals |v| < 2^(31-L), integers |v| < 2^31, so
        that a product of two inputs fits the ring.  ``wide=True`` takes the ring's range
        (reals |v| < 2^(62-L), integers in the signed 64-bit range) and leaves every product's
        range to the caller (`ppml.mpc.ranges`; docs/mpc.md, "Ranges").  Parties other than the
        owner pass None; they learn only the shape (given here, or sent by the owner in one
        round).  Shares are derived from pairwise-shared keys, so no share travels over the
        network.
        """
        frac = self._scale(frac_bits)
        encoded = None
        if self.holds(self.comm.check_party(owner, "owner")):
            self._check_owned(value, owner)
            encoded = encode_input(value, frac, f"input of party {owner}", wide)
        data = self._share_encoded(encoded, owner, shape, ARITHMETIC)
        return ArithmeticShared(self, data, frac)

    def share_binary(self, value, owner: int, shape=None):
        """XOR sharing of ``owner``'s integer words (bit-packed uint64)."""
        encoded = None
        if self.holds(self.comm.check_party(owner, "owner")):
            self._check_owned(value, owner)
            encoded = encode_words(value, name=f"input of party {owner}")
        return BinaryShared(self, self._share_encoded(encoded, owner, shape, BINARY))

    def _share_encoded(self, encoded, owner: int, shape, ring: Ring) -> np.ndarray:
        if shape is None:
            shape = self.comm.broadcast(None if encoded is None else encoded.shape, owner, "shape")
        if type(shape) is not tuple or not all(type(s) is int and s >= 0 for s in shape):
            shape = check_shape("shape", shape)
        if encoded is not None and encoded.shape != shape:
            raise ValueError(f"input of party {owner} has shape {encoded.shape}, expected {shape}")
        return self.share_pieces(encoded, owner, shape, ring)

    def share_pieces(self, encoded, owner: int, shape: tuple, ring: Ring) -> np.ndarray:
        """Share ring elements held by ``owner`` (None elsewhere) with pairwise-derived masks.

        Every compute party but one gets a mask derived from the key it shares with the owner;
        the remaining one (the owner itself, or party 0 for a client) holds the value minus the
        masks.  A client sends that piece to party 0: its one message.
        """
        data = np.zeros((len(self.held),) + shape, dtype=np.uint64)
        owner_here = self.holds(owner)
        last = owner if owner < self.parties else 0
        masks = None
        for q in range(self.parties):
            q_at = self.comm.index(q)
            if q == last or (q_at is None and not owner_here):
                continue
            mask = self.keys.pair_stream(owner, q).uint64(shape)
            if q_at is not None:
                data[q_at] = mask
            if owner_here:
                masks = mask if masks is None else ring.add(masks, mask)
        rest = None if not owner_here else encoded if masks is None else ring.sub(encoded, masks)
        if owner >= self.parties:
            rest = self.comm.deliver(rest, owner, 0)
        if self.comm.index(last) is not None:
            data[self.comm.index(last)] = rest
        return data

    # -- opening -----------------------------------------------------------------------------
    def open(self, datas: list, ring: Ring, to: int | None = None, tag: str = "open"):
        """Reconstruct several shared arrays in one round; None where this process gets nothing."""
        stacks = self.comm.exchange(datas, to=to, tag=tag)
        return None if stacks is None else [ring.reconstruct(s) for s in stacks]

    def add_public(self, data: np.ndarray, public, ring: Ring = ARITHMETIC,
                   inplace: bool = False) -> np.ndarray:
        """Add (or XOR) public ring elements into the shared value: party 0 alone adds them to
        its share.

        ``public`` holds words (uint64, or signed integers in two's complement): encodings, not
        reals; anything else is refused (`encode_words`).  ``inplace=True`` reuses ``data`` (a
        fresh array the caller owns) when the shapes allow.
        """
        if not (isinstance(public, (np.ndarray, np.uint64)) and public.dtype == np.uint64):
            public = encode_words(public, "public ring elements")
        if public.ndim <= data.ndim - 1 and public.shape == data.shape[data.ndim - public.ndim:]:
            out = data if inplace else data.copy()
        else:
            out_shape = np.broadcast_shapes(data.shape[1:], public.shape)
            out = np.broadcast_to(pad(data, len(out_shape)), data.shape[:1] + out_shape).copy()
        at = self._party_0_at
        if at is not None:
            mine = out[at:at + 1]
            ring.add(mine, public, out=mine)
        return out

    def per_party(self, values: list):
        """``values`` aligned with the held ranks (compute parties, then clients)."""
        if len(self.comm.held_ranks) == 1:
            return values[0]
        return PerParty(values)

    def stats(self):
        """Online rounds, bytes sent and the breakdown by operation, per held rank, with the
        seconds spent making dealer material and waiting for peers' messages."""
        out = []
        for p in self.comm.held_ranks:
            d = self.comm.stats[p].as_dict()
            d["offline_seconds"] = self.store.offline_seconds
            d["wait_seconds"] = self.comm.wait_seconds
            out.append(d)
        return self.per_party(out)

    # -- checkpoints ---------------------------------------------------------------------------
    def snapshot(self) -> list:
        """Per held rank (in held-rank order), the engine's public state: where its pair streams and the dealer
        store stand and its communication counters.  With a rank's shares and the step, it is
        what the rank's checkpoint holds; no key is in it (a resumed run makes its keys again:
        the same ones in seeded mode, fresh ones otherwise)."""
        store = self.store.positions()
        return [{"pairs": self.keys.positions(rank), "comm": self.comm.counters(rank),
                 "store": store} for rank in self.comm.held_ranks]

    def restore(self, states: list) -> None:
        """Go on from :meth:`snapshot`'s states, one per held rank (in held-rank order)."""
        if len(states) != len(self.comm.held_ranks):
            raise ValueError(f"restore needs one state per held rank {self.comm.held_ranks}, "
                             f"got {len(states)}")
        for rank, state in zip(self.comm.held_ranks, states):
            self.keys.seek(state["pairs"])
            self.comm.restore_counters(rank, state["comm"])
        self.store.seek(states[0]["store"])

    def view(self):
        """Everything each held party received: (round, op, tag, sender, payload) entries.

        Needs ``record_views=True``; identical in the local and the Ray runtime.
        """
        if self.comm.views is None:
            raise ValueError("views are not recorded: run with record_views=True")
        return self.per_party([self.comm.views[p] for p in self.comm.held_ranks])
