"""Secret argmax as a one-hot vector over the last axis (Hannun et al., section 3, Algorithm 2).

Ties are broken one of two ways (`TIES`):

* ``random`` (the default): uniformly at random by a dealer permutation gamma of {0..A-1}.
  Instead of the paper's second pass of Algorithm 2 over y * gamma, the keys x * A + gamma are
  compared once: they order like x where x differs (x is an integer at its fixed-point scale and
  gamma < A) and like gamma where x ties, so one pass yields exactly one maximum.  The sign of
  a difference of two keys is right while A |x_i - x_j| + A - 1 < 2^63, which
  |x| 2^f < 2^62 / A (f the scale) guarantees: a precondition on shared x (docs/mpc.md,
  "Ranges").  Inputs in the product range (|x| 2^f <= 2^31, `ppml.mpc.ranges`) meet it for
  every A up to `MAX_RANDOM_TIES_ARMS` = 2^31 - 1, which `check` enforces.
* ``first``: the lowest position among the maxima wins, with no dealer material; the keys are
  compared as they are, so any two may differ by up to 2^63 - 1 (|x| 2^f < 2^62).  A caller
  whose positions are already in random order (Samba's sigma_t) gets uniform tie-breaking from
  it, and the same decision as a plaintext ``list.index(max(...))``.

* ``pairwise`` (Algorithm 2): the comparisons of all pairs in parallel (lines 1-3), then the
  product over j (lines 5-9) as an AND reduction tree in ceil(log2 A) rounds, kept in the binary
  ring, and one B2A round for the one-hot.  Fewest rounds; memory and bytes grow as A^2.
* ``tournament``: ceil(log2 A) levels of pairwise maxima, each a comparison and one
  multiplication round that carries the winners' keys and arithmetic shares of their indices
  (O(A) memory and bytes in all), then one opening that turns the winner's index into its
  one-hot with a dealer one-hot pair (`one_hot`).
* ``auto``: ``pairwise`` up to `AUTO_CROSSOVER` = 128 arms, ``tournament`` above, where on a
  LAN the tournament's extra rounds cost less than the pairwise bytes (docs/mpc.md, "Argmax:
  pairwise against tournament").
"""

from __future__ import annotations

import functools

import numpy as np

from ppml.mpc import dealer
from ppml.mpc.protocols.binary import and_
from ppml.mpc.protocols.compare import is_non_negative_bits
from ppml.mpc.protocols.convert import bits_to_arithmetic, most_significant_bit
from ppml.mpc.ring import ARITHMETIC, BINARY
from ppml.mpc.protocols.multiply import beaver

METHODS = ("pairwise", "tournament", "auto")
TIES = ("random", "first")

#: ``auto`` runs ``pairwise`` up to this many arms and ``tournament`` above (docs/mpc.md)
AUTO_CROSSOVER = 128

MAX_RANDOM_TIES_ARMS = 2**31 - 1
"""The most values ``ties="random"`` takes: A (2^32 + 1) - 1 < 2^63, so the keys x A + gamma of
inputs in the product range (|x_i - x_j| 2^f <= 2^32) differ by less than 2^63."""


def _tie_broken_keys(ctx, x: np.ndarray, ties: str) -> np.ndarray:
    """Distinct keys ordered like ``x`` (``random``), or ``x`` itself (``first``: the comparisons
    below let the lower position win a tie)."""
    if ties == "first":
        return x
    arms = x.shape[-1]
    gamma = ctx.store.take(dealer.permutation(x.shape[1:-1], arms))["gamma"]
    return x * np.uint64(arms) + gamma


def _and_reduce(ctx, bits: np.ndarray) -> np.ndarray:
    """AND over the last axis with a binary tree of ceil(log2 n) rounds."""
    while bits.shape[-1] > 1:
        half = bits.shape[-1] // 2
        (both,) = and_(ctx, [(bits[..., :half], bits[..., half:2 * half])])
        bits = both if bits.shape[-1] == 2 * half else \
            np.concatenate([both, bits[..., 2 * half:]], axis=-1)
    return bits[..., 0]


@functools.lru_cache(maxsize=64)
def pairs(arms: int) -> tuple:
    """The unordered pairs i < j of ``arms`` indices (made once per size: it is on the hot path)."""
    return np.triu_indices(arms, 1)


def pairwise_bits(ctx, x: np.ndarray, ties: str = "random") -> np.ndarray:
    """XOR shares of the argmax's one-hot over the last axis: Algorithm 2 in one pass.

    One comparison per unordered pair i < j gives both [k_i >= k_j] (the negated sign bit of
    k_i - k_j) and [k_j > k_i] (the sign bit itself): A(A-1)/2 comparisons instead of A(A-1).
    Row i is all ones exactly when k_i is a maximum and no earlier k_j equals it, so a tie goes
    to the lower position (with distinct keys there is none).  The diagonal is a public 1.
    """
    keys = _tie_broken_keys(ctx, x, ties)
    i, j = pairs(x.shape[-1])
    j_wins = most_significant_bit(ctx, keys[..., i] - keys[..., j])         # lines 1-3
    return first_maximum_bits(ctx, j_wins, x.shape[-1])


def first_maximum_bits(ctx, j_wins: np.ndarray, arms: int) -> np.ndarray:
    """XOR shares of the one-hot of the first maximum over ``arms`` positions, from the XOR
    shares of [k_j > k_i] for every pair (i, j), i < j, in the order of `pairs` (last axis):
    lines 4-9 of Algorithm 2, an AND tree in ceil(log2 arms) rounds."""
    i, j = pairs(arms)
    geq = ctx.add_public(np.zeros(j_wins.shape[:-1] + (arms, arms), dtype=np.uint64),
                         np.eye(arms, dtype=np.uint64), BINARY)
    geq[..., i, j] = ctx.add_public(j_wins, np.uint64(1), BINARY)
    geq[..., j, i] = j_wins
    return _and_reduce(ctx, geq)


def pairwise(ctx, x: np.ndarray, ties: str = "random") -> np.ndarray:
    """One-hot shares (scale 1) of the argmax over the last axis: `pairwise_bits` and B2A."""
    return bits_to_arithmetic(ctx, pairwise_bits(ctx, x, ties))


def _knockout(ctx, carried: np.ndarray) -> np.ndarray:
    """One level of the tournament over ``carried`` (keys, indices) ``[..., 2, n]``: neighbours
    2m and 2m + 1 meet, each winner's key and index stay (one product round for both, the
    comparison bit broadcast), and an odd last one passes to the next level.  Each entry stands
    for a block of consecutive positions, in order, and the left block wins a tie, so the
    winner is the first maximum."""
    matches = carried.shape[-1] // 2
    u, v = carried[..., 0:2 * matches:2], carried[..., 1:2 * matches:2]
    wins = bits_to_arithmetic(ctx, is_non_negative_bits(ctx, u[..., 0, :] - v[..., 0, :]))
    (delta,) = beaver(ctx, [(wins[..., None, :], u - v)])                  # [u >= v] (u - v)
    return np.concatenate([v + delta, carried[..., 2 * matches:]], axis=-1)


def tournament_index(ctx, x: np.ndarray, ties: str = "random") -> np.ndarray:
    """Arithmetic shares (scale 1) of the argmax's index over the last axis by a knockout tree."""
    keys = _tie_broken_keys(ctx, x, ties)
    indices = ctx.add_public(np.zeros_like(keys), np.arange(x.shape[-1], dtype=np.uint64))
    carried = np.stack([keys, indices], axis=-2)
    while carried.shape[-1] > 1:
        carried = _knockout(ctx, carried)
    return carried[..., 1, 0]


def one_hot(ctx, index: np.ndarray, size: int) -> np.ndarray:
    """Arithmetic shares of the one-hot over ``size`` positions of a shared index in [0, size).

    With a dealer one-hot e_r of a random r over n = 2^bits >= size positions, the parties open
    c = index - r (uniform: it hides the index) in one round; index = r + c mod n, so the one-hot
    of the index is e_r rotated by c, a local gather of its first ``size`` positions.
    """
    bits = max(1, (size - 1).bit_length())
    pair = ctx.store.take(dealer.one_hot_pair(index.shape[1:], bits))
    (c,) = ctx.open([index - pair["r"]], ARITHMETIC, tag="onehot")
    rotated = (np.arange(size, dtype=np.uint64) - c[..., None]) & np.uint64((1 << bits) - 1)
    return np.take_along_axis(pair["onehot"], rotated[None].astype(np.intp), axis=-1)


def tournament(ctx, x: np.ndarray, ties: str = "random") -> np.ndarray:
    """One-hot shares (scale 1) of the argmax over the last axis: `tournament_index`, `one_hot`."""
    return one_hot(ctx, tournament_index(ctx, x, ties), x.shape[-1])


def chosen(method: str, arms: int) -> str:
    """The method that runs for ``method`` over ``arms`` values (``auto`` resolved by size)."""
    if method != "auto":
        return method
    return "pairwise" if arms <= AUTO_CROSSOVER else "tournament"


def check(x: np.ndarray, method: str, ties: str = "random") -> None:
    """ValueError unless ``method`` and ``ties`` are known and the shares ``x`` have a non-empty
    last axis."""
    if method not in METHODS:
        raise ValueError(f"argmax method must be one of {METHODS}, got {method!r}")
    if ties not in TIES:
        raise ValueError(f"argmax ties must be one of {TIES}, got {ties!r}")
    if x.ndim < 2 or x.shape[-1] < 1:
        raise ValueError("argmax needs at least one element on the last axis, got shape "
                         f"{x.shape[1:]}")
    if ties == "random" and x.shape[-1] > MAX_RANDOM_TIES_ARMS:
        raise ValueError(f"argmax with ties='random' takes at most 2^31 - 1 values (its keys "
                         f"x A + gamma must stay in the ring), got {x.shape[-1]}")


def argmax(ctx, x: np.ndarray, method: str = "auto", ties: str = "random") -> np.ndarray:
    check(x, method, ties)
    if x.shape[-1] == 1:
        return ctx.add_public(np.zeros_like(x), np.ones(x.shape[1:], dtype=np.uint64))
    run = pairwise if chosen(method, x.shape[-1]) == "pairwise" else tournament
    return run(ctx, x, ties)
