"""SelectArm on secret shares (``samba.mask=mpc``, the default): Comp learns the position it
selects under sigma_t, and nothing else (docs/samba.md, "Selection on shares").

Each DO turns its score x_i into an integer key (`score_key`) and splits it into two additive
shares mod 2^64: the Controller's is the next word of a stream the DO shares with the Controller
(so it never travels), Comp's is key - word, sealed under Enc's key and routed by the Controller,
which permutes both parties' shares with sigma_t.  The Controller (party 0) and Comp (party 1)
then run `select_on_shares` on ppml's engine, each in its own `ppml.runtime.seat.Seat`, with DC
as the dealer of their correlated randomness; only Comp learns the selected position.

* ARGMAX (Fig. 4's argmax algorithms): the key is the IEEE-754 bit pattern of x >= 0, an
  integer in [0, 2^63) that orders exactly like x, so the shared argmax (`ppml.mpc.reveal_argmax`
  with ``ties="first"``: the first maximum in sigma_t's order; pairwise up to `PAIRWISE_ARMS`,
  the tournament above) takes exactly the decision of the paper's `policies.select_arm` on the
  floats.
* MATCH (probability matching: Softmax, Pursuit's l = 2): the key is x / bound_A in fixed point,
  ``round(x / bound_A 2^MATCH_BITS)`` (bound_A: `policies.Policy.match_bound`); the Controller
  draws u with `U_BITS` bits and shares it (Comp never knows u); the parties compare
  2^U_BITS S_j against u S_K for the prefix sums S_j and open to Comp the first j where it is
  larger (`match_position` is the same rule in the clear, which the plaintext reference runs).
  Each arm's selection probability is that of the float rule to within 2^-U_BITS + K / (2 S_K),
  S_K the sum of the keys.  Softmax's keys are e^((mu - 1)/tau) 2^MATCH_BITS, so every key is at
  least 1 only for tau >= `MIN_SOFTMAX_TAU` (below, arms of low mean would round to 0, and with
  every mean low all keys would: a uniform choice); `check_policy` refuses smaller tau.
"""

from __future__ import annotations

import math
import struct

import numpy as np

import ppml.mpc as mpc
from ppml.mpc.protocols.convert import most_significant_bit
from ppml.mpc.protocols.multiply import beaver
from ppml.mpc.ring import BINARY
from ppml.mpc.tensor import ArithmeticShared
from ppml.crypto.rng import Stream, derive_key
from ppml.protocols.samba.draws import Words
from ppml.protocols.samba.policies import ARGMAX, MATCH
from ppml.protocols.samba.wire import pack_words, unpack_words

MATCH_BITS = 30
"""Fractional bits of a probability-matching key: x / bound_A in [0, 1] as round(. 2^30)."""
U_BITS = 16
"""Bits of the Controller's uniform u in [0, 1)."""
MAX_MATCH_ARMS = 1 << (62 - MATCH_BITS - U_BITS)
"""2^U_BITS S_j and u S_K stay at most 2^62, so their difference's sign is exact."""
MIN_SOFTMAX_TAU = 1 / (MATCH_BITS * math.log(2))
"""e^(-1/tau) 2^MATCH_BITS >= 1: no Softmax key rounds to 0 (about 0.048)."""
PAIRWISE_ARMS = 40
"""Argmax compares all pairs up to this many arms and runs the tournament above: the crossover
of the two in the local runtime (docs/samba.md, "Selection on shares"; the engine's own `auto`
crosses at 128 arms, where it counts LAN rounds)."""
SHARE_BLOCK_WORDS = 256
"""Words a reader of a DO's share stream reads at once.  There are K such readers on each side
(each DO's, and the Controller's one per DO), each drawing one word an iteration: at
`draws.BLOCK_WORDS` their blocks held 342 MiB at K = 1,000; 256 words (11 KiB a reader) refill
once every 256 iterations (docs/scaling.md, "Sizes users ask for")."""
WORD = struct.Struct(">Q")
MASK = (1 << 64) - 1


def score_key(kind: str, x: float, bound: float) -> int:
    """DO_i's integer key of its score ``x`` for SelectArm ``kind`` (module docstring)."""
    if not (x >= 0.0 and x != float("inf")):
        raise ValueError(f"a score must be finite and >= 0 to be shared, got {x!r}")
    x += 0.0                                       # -0.0 becomes 0.0: its bits are 2^63
    if kind == ARGMAX:
        return WORD.unpack(struct.pack(">d", x))[0]
    key = round(x / bound * (1 << MATCH_BITS))
    if key > 1 << MATCH_BITS:
        raise ValueError(f"a probability-matching score {x!r} exceeds its bound {bound!r}")
    return key


def share_words(key: bytes, position: int = 0) -> Words:
    """The reader (`Words`) of the stream one DO shares with the Controller under ``key``, at
    either end, from byte ``position`` (a checkpoint's `Words.state` resumes it); blocks of
    `SHARE_BLOCK_WORDS`."""
    return Words(Stream(key, position), SHARE_BLOCK_WORDS)


def match_words(controller_key: bytes):
    """The Controller's reader (`Words`) of the words whose top `U_BITS` bits are u, from its
    own key."""
    return Words(Stream(derive_key(controller_key, "match")))


def match_position(keys: list, u: int) -> int:
    """The first position j with 2^U_BITS S_j > u S_K (S_j the prefix sums of ``keys``), or
    the last position when there is none: SelectArm's probability matching in integers."""
    threshold, prefix = u * sum(keys), 0
    for j, key in enumerate(keys[:-1]):
        prefix += key
        if prefix << U_BITS > threshold:
            return j
    return len(keys) - 1


def select_on_shares(ctx, inputs: dict) -> dict:
    """The program of both seats (`ppml.runtime.seat`): ``inputs`` = {party: (kind, shares,
    u)} for the parties held here, ``shares`` its uint64 shares in sigma_t's order, u the
    Controller's (party 0) for MATCH, None at Comp.  Returns {party: output}: the position at
    Comp, None at the Controller."""
    kind = inputs[ctx.held[0]][0]
    data = np.stack([inputs[p][1] for p in ctx.held])
    u = inputs[0][2] if ctx.holds(0) else None
    if kind == ARGMAX:
        method = "pairwise" if data.shape[-1] <= PAIRWISE_ARMS else "tournament"
        onehot = mpc.reveal_argmax(ArithmeticShared(ctx, data, 0), to=1, ties="first",
                                   method=method)
    else:
        onehot = _reveal_match(ctx, data, u)
    onehot = ctx.value_at(onehot, 1)
    return {p: None if p != 1 else int(np.argmax(onehot)) for p in ctx.held}


def _reveal_match(ctx, data: np.ndarray, u: int | None):
    """Probability matching: b_j = [2^U S_j > u S_K] for j < K - 1 and b_{K-1} = 1 rise once
    along j, so b_j XOR b_{j-1} is the one-hot of the first rise; opened to Comp alone."""
    arms = data.shape[-1]
    with ctx.comm.operation("select"):
        prefix = np.cumsum(data, axis=-1, dtype=np.uint64)
        shared_u = ctx.share(None if u is None else np.array([u], dtype=np.uint64), owner=0,
                             shape=(1,), frac_bits=0).data
        (threshold,) = beaver(ctx, [(shared_u, prefix[..., -1:])])
        rises = most_significant_bit(ctx, threshold - (prefix[..., :-1] << np.uint64(U_BITS)))
        last = ctx.add_public(np.zeros_like(rises[..., :1]), np.ones(1, np.uint64), BINARY)
        bits = np.concatenate([rises, last], axis=-1)
        before = np.concatenate([np.zeros_like(bits[..., :1]), bits[..., :-1]], axis=-1)
        opened = ctx.open([bits ^ before], BINARY, to=1, tag="reveal")
    onehot = None if opened is None else opened[0].astype(np.int64)
    return ctx.per_party([onehot if p == 1 else None for p in ctx.comm.held_ranks])


def comp_shares(kind: str, xs: list, words: list, bound: float) -> list[bytes]:
    """The plaintexts of Comp's shares of the DOs' scores ``xs``: key - word mod 2^64, each
    DO's word the next of the stream it shares with the Controller (``words``: those readers)."""
    return pack_words(np.array([(score_key(kind, x, bound) - word()) & MASK
                                for x, word in zip(xs, words, strict=True)], dtype=np.uint64))


def unpack_shares(plaintexts: list) -> np.ndarray:
    """Comp's shares (uint64) from their plaintexts; non-zero padding is refused."""
    return unpack_words(plaintexts, "a score share").astype(np.uint64)


def check_policy(policy) -> None:
    """ValueError when ``policy`` matches probabilities over more arms than its keys allow, or
    with a Softmax temperature at which keys would round to 0."""
    matches = any(policy.kind(l) == MATCH for l in range(1, policy.iterations + 1))
    if matches and policy.arms > MAX_MATCH_ARMS:
        raise ValueError(f"samba.mask=mpc matches probabilities over at most {MAX_MATCH_ARMS} "
                         f"arms, got arms={policy.arms} (samba.mask=paper has no such bound)")
    if policy.spec.name == "softmax" and policy.spec.softmax_tau < MIN_SOFTMAX_TAU:
        raise ValueError(f"samba.softmax_tau must be >= {MIN_SOFTMAX_TAU:.4f} under "
                         f"samba.mask=mpc (smaller, low-mean arms' keys round to 0), got "
                         f"{policy.spec.softmax_tau}")
