"""Beaver multiplication in both rings: products, AND, matrix products and squares.

Hannun et al., section 3, "Multiplication" and "Square" (Beaver, 1991): with a triple
(a, b, c = a*b) the parties open eps = x - a and delta = y - b in one round, and party p keeps
z_p = c_p + eps*y_p + a_p*delta.  Summed over the parties this is ab + eps*y + a*delta = xy, the
paper's c + eps*b + a*delta + eps*delta with eps*delta + eps*b folded into eps*y: two local
operations fewer and no public term for party 0.  The same routine gives AND on XOR shares
(appendix A.2), with XOR for + and AND for *.  Any number of products share one round.
"""

from __future__ import annotations

import functools

import numpy as np

from ppml.mpc import dealer
from ppml.mpc.local_tasks import split_over_arms
from ppml.mpc.ring import ARITHMETIC, BINARY, Ring, matmul, pad


def _local_terms(product, ring: Ring, a, y, c, eps, delta) -> np.ndarray:
    """c + eps*y + a*delta: each party's own part of Beaver's product (no communication)."""
    z = product(eps, y)
    ring.add(z, product(a, delta), out=z)
    ring.add(z, c, out=z)
    return z


def beaver(ctx, products: list, ring: Ring = ARITHMETIC, kind="mul") -> list:
    """One round of Beaver products: ``products`` is a list of (x, y) share arrays.

    ``kind`` is "mul" (elementwise, with broadcasting) or "matmul" (numpy matmul rules on the
    logical axes), or a list with one of them per product; in the binary ring "mul" is AND.
    """
    n = len(products)
    kinds = _same_kinds(kind, n) if isinstance(kind, str) else tuple(kind)
    if len(kinds) != n:
        raise ValueError(f"beaver needs one kind per product, got {len(kinds)} for {n} products")
    take, sub = ctx.store.take, ring.sub
    triples, masked = [], [None] * (2 * n)
    for k in range(n):                                  # one loop each way: on the hot path
        x, y = products[k]
        t = take(_triple(ring, kinds[k])(x.shape[1:], y.shape[1:]))
        triples.append(t)
        masked[k], masked[n + k] = sub(x, t["a"]), sub(y, t["b"])
    opened = ctx.open(masked, ring, tag=_tag(kinds))
    out = []
    for k in range(n):
        x, y = products[k]
        t = triples[k]
        a, c, eps, delta = t["a"], t["c"], opened[k][None], opened[n + k][None]
        if kinds[k] == "matmul":
            out.append(_local_terms(matmul, ring, a, y, c, eps, delta))
            continue
        if x.ndim != y.ndim:              # broadcasting operands: unit axes once, not per term
            ndim = max(x.ndim, y.ndim) - 1
            a, eps, y, delta = pad(a, ndim), pad(eps, ndim), pad(y, ndim), pad(delta, ndim)
        if ctx.workers == 1:
            out.append(_local_terms(ring.product, ring, a, y, c, eps, delta))
        else:
            out.append(split_over_arms(ctx, functools.partial(_local_terms, ring.product, ring),
                                       [a, y, c, eps, delta], c.shape[1:]))
    return out


@functools.lru_cache(maxsize=16)
def _same_kinds(kind: str, n: int) -> tuple:
    return (kind,) * n


@functools.lru_cache(maxsize=64)
def _tag(kinds: tuple) -> str:
    """The frame tag of a Beaver round: its kinds of product, each once."""
    return "beaver-" + "-".join(dict.fromkeys(kinds))


def _triple(ring: Ring, kind: str):
    """The dealer material of one product of ``kind`` in ``ring``."""
    if kind == "matmul":
        if ring is BINARY:
            raise ValueError("product kind 'matmul' exists in the arithmetic ring only, not for "
                             "XOR shares")
        return dealer.matmul_triple
    if kind != "mul":
        raise ValueError(f"product kind must be 'mul' or 'matmul', got {kind!r}")
    return dealer.and_triple if ring is BINARY else dealer.mul_triple


def square(ctx, x: np.ndarray) -> np.ndarray:
    """[x^2] = [c] + eps*([x] + [a]) with a square pair (a, c = a^2), one round: summed over the
    parties, a^2 + eps x + eps a = (eps + a)^2."""
    pair = ctx.store.take(dealer.square_pair(x.shape[1:]))
    (eps,) = ctx.open([x - pair["a"]], ARITHMETIC, tag="square")
    return pair["c"] + eps[None] * (x + pair["a"])
