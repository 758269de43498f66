"""The offline phase: correlated randomness from a trusted dealer, consumed in order online.

It is the "store of Beaver triples and private (Bernoulli and uniform) samples generated
off-line" that Hannun et al.'s Algorithm 1 takes as input (section 3; Algorithm 3's wrap pairs,
appendix C).

Every kind of material (Beaver triples, square pairs, AND triples, wrap pairs with the bits of
r, daBits, permutations, one-hot pairs, window pairs, private Bernoulli and Uniform samples) is a
set of *fields*:

* **free** fields are uniformly random pieces that every party derives locally from the key it
  shares with the dealer (pairwise-shared seeds): nothing is sent for them;
* **dependent** fields are functions of the free values or of the dealer's own secret
  randomness (``c = a * b``, the wrap count of r, a permutation).  Parties 1..P-1 derive their
  pieces locally as well; only party 0's piece is a *correction* ``value - sum(others)`` that
  the dealer computes and sends.

Material is generated in batches keyed by (kind, shapes, batch index), so that the same seeds
give the same material whichever runtime asks for it and whichever order batches are made in.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ppml.crypto.rng import Stream, derive_key
from ppml.mpc.ring import (ARITHMETIC, BINARY, Ring, count_wraps, matmul, matmul_shape,
                           multiply)

#: a batch holds about this many words per field, and never more than ``MAX_BATCH`` instances
TARGET_WORDS = 1 << 16
MAX_BATCH = 256


@dataclass(frozen=True)
class Field:
    name: str
    shape: tuple
    ring: Ring = ARITHMETIC
    bit: bool = False  # binary pieces are single bits in {0, 1}


@dataclass(frozen=True)
class Material:
    """One kind of correlated randomness.

    ``derive(free_values, secret, count)`` maps the reconstructed free values (each with a
    leading batch axis of length ``count``) and the dealer's secret stream to the values of the
    dependent fields.  ``derive_from_pieces`` is set instead when a dependent value needs the
    individual pieces (the wrap count of r).
    """

    kind: str
    spec: tuple
    free: tuple
    dependent: tuple
    derive: Callable

    @functools.cached_property
    def key(self) -> str:
        return f"{self.kind}{self.spec}"

    def batch_count(self) -> int:
        words = sum(int(np.prod(f.shape, dtype=np.int64)) for f in self.free + self.dependent)
        return int(max(1, min(MAX_BATCH, TARGET_WORDS // max(words, 1))))


def _product_fields(shape_a, shape_b, ring, out_shape):
    return (Field("a", shape_a, ring), Field("b", shape_b, ring)), (Field("c", out_shape, ring),)


@functools.lru_cache(maxsize=4096)
def mul_triple(shape_a: tuple, shape_b: tuple) -> Material:
    """Beaver triple (a, b, c = a * b) for an elementwise product with broadcasting."""
    out = np.broadcast_shapes(shape_a, shape_b)
    free, dep = _product_fields(shape_a, shape_b, ARITHMETIC, out)
    return Material("mul", (shape_a, shape_b), free, dep,
                    lambda v, s, n: {"c": multiply(v["a"], v["b"])})


@functools.lru_cache(maxsize=4096)
def and_triple(shape_a: tuple, shape_b: tuple) -> Material:
    """Binary Beaver triple (a, b, c = a & b) on bit-packed words."""
    out = np.broadcast_shapes(shape_a, shape_b)
    free, dep = _product_fields(shape_a, shape_b, BINARY, out)
    return Material("and", (shape_a, shape_b), free, dep,
                    lambda v, s, n: {"c": multiply(v["a"], v["b"], np.bitwise_and)})


@functools.lru_cache(maxsize=4096)
def matmul_triple(shape_a: tuple, shape_b: tuple) -> Material:
    """Beaver triple (A, B, C = A @ B) for a batched matrix product."""
    free, dep = _product_fields(shape_a, shape_b, ARITHMETIC, matmul_shape(shape_a, shape_b))
    return Material("matmul", (shape_a, shape_b), free, dep,
                    lambda v, s, n: {"c": matmul(v["a"], v["b"], lead=1)})


@functools.lru_cache(maxsize=4096)
def square_pair(shape: tuple) -> Material:
    """Beaver pair (a, a^2) for squaring."""
    return Material("square", (shape,), (Field("a", shape),), (Field("c", shape),),
                    lambda v, s, n: {"c": v["a"] * v["a"]})


@functools.lru_cache(maxsize=4096)
def wrap_pair(shape: tuple, signed: bool, with_bits: bool) -> Material:
    """Random r with the shared count theta_r of its wraps and, optionally, r's bits.

    Hannun et al., appendix C, Algorithm 3, line 1.  The bits of r (binary shared) serve the
    exact mode, which compares the opened z against r.
    """
    dependent = (Field("theta", shape),) + ((Field("bits", shape, BINARY),) if with_bits else ())
    return Material("wrap", (shape, signed, with_bits), (Field("r", shape),), dependent, None)


@functools.lru_cache(maxsize=4096)
def truncation_pair(shape: tuple, bits: int) -> Material:
    """Random r with shares of -(r >> bits) (signed shift) and of -m 2^(64 - bits), m the sign
    bit of r, for bounded truncation (negated and scaled here, offline, to spare the online
    step two operations)."""
    def derive(v, s, n):
        shifted = (v["r"].view(np.int64) >> np.int64(bits)).view(np.uint64)
        wrap = (v["r"] >> np.uint64(63)) << np.uint64(64 - bits)
        return {"minus_shifted": np.uint64(0) - shifted, "minus_wrap": np.uint64(0) - wrap}
    return Material("truncpair", (shape, bits), (Field("r", shape),),
                    (Field("minus_shifted", shape), Field("minus_wrap", shape)), derive)


@functools.lru_cache(maxsize=4096)
def dabit(shape: tuple) -> Material:
    """A random bit shared both ways: XOR shares ``b`` and arithmetic shares ``a``."""
    return Material("dabit", (shape,), (Field("b", shape, BINARY, bit=True),),
                    (Field("a", shape),), lambda v, s, n: {"a": v["b"]})


@functools.lru_cache(maxsize=4096)
def permutation(batch_shape: tuple, n: int) -> Material:
    """Secret uniform permutations of range(n) over the last axis (Hannun et al., sec. 3)."""
    shape = tuple(batch_shape) + (n,)
    return Material("permutation", (tuple(batch_shape), n), (), (Field("gamma", shape),),
                    lambda v, s, count: {"gamma": s.permutation(n, (count,) + tuple(batch_shape))
                                         .astype(np.uint64)})


@functools.lru_cache(maxsize=4096)
def one_hot_pair(batch_shape: tuple, bits: int) -> Material:
    """Random r with arithmetic shares of the one-hot of r mod 2^bits over a last axis of length
    2^bits: a secret index's one-hot in one opening (`ppml.mpc.protocols.argmax.one_hot`)."""
    shape, size = tuple(batch_shape), 1 << bits

    def derive(v, s, n):
        low = v["r"] & np.uint64(size - 1)
        return {"onehot": (np.arange(size, dtype=np.uint64) == low[..., None]).astype(np.uint64)}
    return Material("onehot", (shape, bits), (Field("r", shape),),
                    (Field("onehot", shape + (size,)),), derive)


def series_terms(series: tuple, rho: np.ndarray) -> np.ndarray:
    """The B_k(rho) of a windowed function's ``series`` (`ppml.mpc.protocols.window`), a new
    last axis of K terms: ``("exp",)``: e^-rho; ``("powers", K)``: rho^0 .. rho^(K-1)."""
    if series == ("exp",):
        return np.exp(-rho)[..., None]
    if len(series) == 2 and series[0] == "powers" and isinstance(series[1], int) \
            and series[1] >= 1:
        return rho[..., None] ** np.arange(series[1], dtype=np.float64)
    raise ValueError(f"window series must be ('exp',) or ('powers', K >= 1), got {series!r}")


@functools.lru_cache(maxsize=4096)
def window_pair(batch_shape: tuple, frac_bits: int, bits: int, precision_bits: int,
                series: tuple) -> Material:
    """Random r with arithmetic shares of the one-hot of s = (r >> frac_bits) mod 2^bits over a
    last axis of length 2^bits, once per term of ``series``, scaled by that term's B_k(rho)
    (`series_terms`; rho = (r mod 2^frac_bits) / 2^frac_bits in [0, 1)) at scale
    2^-precision_bits: shape batch_shape + (K, 2^bits).  A function of a shared x in one
    opening (`ppml.mpc.protocols.window`)."""
    shape, size = tuple(batch_shape), 1 << bits
    terms = series_terms(series, np.zeros(1)).shape[-1]

    def derive(v, s, n):
        hot = (v["r"] >> np.uint64(frac_bits)) & np.uint64(size - 1)
        rho = (v["r"] & np.uint64((1 << frac_bits) - 1)).astype(np.float64) / 2.0 ** frac_bits
        scale = np.rint(np.ldexp(series_terms(series, rho), precision_bits)).astype(np.uint64)
        onehot = np.arange(size, dtype=np.uint64) == hot[..., None]
        return {"scaled": onehot[..., None, :] * scale[..., None]}
    return Material("window", (shape, frac_bits, bits, precision_bits, series),
                    (Field("r", shape),), (Field("scaled", shape + (terms, size)),), derive)


@functools.lru_cache(maxsize=4096)
def bernoulli(shape: tuple, p: float) -> Material:
    """Private Bernoulli(p) bits (Algorithm 1, line 8), shared at scale 1."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"bernoulli probability must lie in [0, 1], got {p}")
    return Material("bernoulli", (shape, float(p)), (), (Field("y", shape),),
                    lambda v, s, n: {"y": (s.uniform((n,) + shape) < p).astype(np.uint64)})


@functools.lru_cache(maxsize=4096)
def uniform(shape: tuple, precision_bits: int) -> Material:
    """Private Uniform[0, 1) reals (Algorithm 1, line 12), shared at ``precision_bits``."""
    return Material("uniform", (shape, precision_bits), (), (Field("u", shape),),
                    lambda v, s, n: {"u": s.below(precision_bits, (n,) + shape)})


#: kind -> constructor; a material is rebuilt from (kind, spec), so only data crosses to the dealer
CONSTRUCTORS = {"mul": mul_triple, "and": and_triple, "matmul": matmul_triple,
                "square": square_pair, "wrap": wrap_pair, "truncpair": truncation_pair,
                "dabit": dabit, "permutation": permutation, "onehot": one_hot_pair,
                "window": window_pair,
                "bernoulli": bernoulli, "uniform": uniform}


def material(kind: str, spec: tuple) -> Material:
    """The material of ``kind`` with constructor arguments ``spec`` (ValueError if unknown)."""
    if kind not in CONSTRUCTORS:
        raise ValueError(f"unknown material kind {kind!r}; known: {sorted(CONSTRUCTORS)}")
    return CONSTRUCTORS[kind](*spec)


def _derive_wraps(material: Material, pieces: np.ndarray) -> dict:
    shape, signed, with_bits = material.spec
    values = {"theta": count_wraps(pieces, signed).view(np.uint64)}
    if with_bits:
        values["bits"] = ARITHMETIC.reconstruct(pieces)
    return values


def draw_piece(key: bytes, material: Material, batch: int, field: Field, count: int) -> np.ndarray:
    """Party piece of one field of one batch, from the key the party shares with the dealer."""
    stream = Stream(derive_key(key, material.key, batch, field.name))
    shape = (count,) + field.shape
    return stream.bits(shape) if field.bit else stream.uint64(shape)


class Dealer:
    """The trusted dealer: knows every party's dealer key and its own secret key.

    ``corrections`` returns party 0's pieces of the dependent fields of one batch.
    """

    def __init__(self, party_keys: dict, secret_key: bytes):
        self.party_keys = dict(party_keys)
        self.secret_key = secret_key

    def values(self, material: Material, batch: int, count: int) -> dict:
        """The reconstructed values of every field of one batch (free and dependent)."""
        return self._values(material, batch, count, self._free_pieces(material, batch, count))

    def pieces(self, material: Material, batch: int, count: int) -> dict:
        """Every party's pieces of one batch, ``[P, count, ...]`` per field, party 0's dependent
        pieces being its corrections."""
        free = self._free_pieces(material, batch, count)
        values = self._values(material, batch, count, free)
        out = dict(free)
        for field in material.dependent:
            others = [draw_piece(self.party_keys[p], material, batch, field, count)
                      for p in sorted(self.party_keys) if p != 0]
            rest = field.ring.reconstruct(np.stack(others)) if others else 0
            out[field.name] = np.stack([field.ring.sub(values[field.name], rest)] + others)
        return out

    def corrections(self, material: Material, batch: int, count: int) -> dict:
        """Party 0's pieces of the dependent fields: value minus the other parties' pieces."""
        pieces = self.pieces(material, batch, count)
        return {field.name: pieces[field.name][0] for field in material.dependent}

    def _free_pieces(self, material: Material, batch: int, count: int) -> dict:
        return {f.name: np.stack([draw_piece(self.party_keys[p], material, batch, f, count)
                                  for p in sorted(self.party_keys)])
                for f in material.free}

    def _values(self, material: Material, batch: int, count: int, free: dict) -> dict:
        values = {f.name: f.ring.reconstruct(free[f.name]) for f in material.free}
        if material.derive is None:  # the wrap count needs the pieces themselves
            values.update(_derive_wraps(material, free["r"]))
        else:
            secret = Stream(derive_key(self.secret_key, material.key, batch))
            values.update(material.derive(values, secret, count))
        return values


class DealerStore:
    """The online phase's supply of material for the parties held in this process.

    ``take(material)`` returns, per field, this process's pieces with the held-party axis first.
    ``source`` provides party 0's corrections (a :class:`Dealer` in process, or a proxy to a
    dealer actor); it is only asked when party 0 is held here.
    """

    def __init__(self, held: tuple, keys: dict, source=None):
        self.held = tuple(held)
        self.keys = keys
        self.source = source
        self.offline_seconds = 0.0
        self.generated = {}  # material key -> instances generated
        self._buffers = {}   # material key -> [batch index, offset, count, pieces, material]

    def positions(self) -> dict:
        """What a checkpoint keeps of the store: per material used so far, (kind, spec, batch,
        instances taken from it), and the counters of the stats; all public."""
        return {"buffers": [(buf[4].kind, buf[4].spec, buf[0], buf[1])
                            for buf in self._buffers.values()],
                "generated": dict(self.generated), "offline_seconds": self.offline_seconds}

    def seek(self, positions: dict) -> None:
        """Go on where :meth:`positions` found the store: each material's batch is made again
        (from the keys, the same in a seeded run) and its first instances skipped."""
        for kind, spec, batch, taken in positions["buffers"]:
            buf = self._refill(material(kind, spec), batch - 1)
            buf[1] = taken
        self.generated = dict(positions["generated"])
        self.offline_seconds = positions["offline_seconds"]

    def take(self, material: Material) -> dict:
        buf = self._buffers.get(material.key)
        if buf is None or buf[1] == buf[2]:
            buf = self._refill(material, -1 if buf is None else buf[0])
        buf[1] += 1
        return buf[3][buf[1] - 1]

    def _refill(self, material: Material, last_batch: int) -> list:
        start = time.perf_counter()
        batch, count = last_batch + 1, material.batch_count()
        if isinstance(self.source, Dealer) and self.held == tuple(sorted(self.source.party_keys)):
            # an in-process dealer of exactly the parties held here (the local runtime)
            pieces = self.source.pieces(material, batch, count)
        else:
            pieces = self._own_pieces(material, batch, count)
        # per instance, its fields with the held-party axis first (views, made offline)
        buf = [batch, 0, count, [{name: arr[:, index] for name, arr in pieces.items()}
                                 for index in range(count)], material]
        self._buffers[material.key] = buf
        self.generated[material.kind] = self.generated.get(material.kind, 0) + count
        self.offline_seconds += time.perf_counter() - start
        return buf

    def _own_pieces(self, material: Material, batch: int, count: int) -> dict:
        """Pieces derived from the held parties' keys, with party 0's corrections from source."""
        corrections = self.source.corrections(material, batch, count) if 0 in self.held else {}
        pieces = {}
        for field in material.free + material.dependent:
            per_party = [corrections[field.name] if (p == 0 and field in material.dependent)
                         else draw_piece(self.keys[p], material, batch, field, count)
                         for p in self.held]
            pieces[field.name] = np.stack(per_party) if per_party else \
                np.zeros((0, count) + field.shape, dtype=np.uint64)  # a client holds no shares
        return pieces
