"""Products of shared tensors: every product of a list in one Beaver round, and the
truncations that bring them back to the context precision together in one more (Hannun et al.,
section 3, "Multiplication").

It works on any tensor with ``ctx``, ``data`` and ``frac_bits`` and makes its results with the
operands' own class, so that `tensor` (whose operators call it) and `functions` (built on it)
both sit above it.
"""

from __future__ import annotations

from ppml.crypto.fixed import MAX_PRODUCT_SCALE
from ppml.mpc.protocols import multiply
from ppml.mpc.protocols.truncate import truncate_each


def check_product_scales(fracs: list) -> None:
    """A ValueError when a product's scale leaves no room for its value in the ring."""
    for frac in fracs:
        if frac > MAX_PRODUCT_SCALE:
            raise ValueError(f"a product at scale 2^-{frac} does not fit the 64-bit ring (at most "
                             f"2^-{MAX_PRODUCT_SCALE}): bring an operand to the context precision "
                             f"first (at_precision)")


def check_pairs(pairs) -> None:
    """A ValueError naming ``pairs`` unless it holds one or more (x, y) pairs, a TypeError
    unless every operand is a shared tensor (``ctx``, ``data`` and ``frac_bits``)."""
    if not isinstance(pairs, (list, tuple)) or not pairs or \
            not all(isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in pairs):
        raise ValueError(f"pairs must be a non-empty list of (x, y) pairs, got {pairs!r:.80}")
    for pair in pairs:
        for operand in pair:
            if not all(hasattr(operand, name) for name in ("ctx", "data", "frac_bits")):
                raise TypeError(f"pairs must hold shared tensors only (multiply by a public value "
                                f"with *), got {type(operand).__name__}")


def rescaled_together(like, datas: list, fracs: list) -> list:
    """Shared tensors of ``like``'s class and context from product shares at scales ``fracs``:
    those above the context precision are truncated back to it together (one round in the
    bounded mode).  The callers have checked the scales (`check_product_scales`)."""
    ctx, make = like.ctx, type(like)
    precision = ctx.precision_bits
    items = [(data, max(frac - precision, 0)) for data, frac in zip(datas, fracs)]
    return [make(ctx, data, min(frac, precision))
            for data, frac in zip(truncate_each(ctx, items), fracs)]


def products(pairs: list, kind="mul", keep_scale: bool = False) -> list:
    """x * y (``kind="mul"``, with broadcasting) or x @ y (``"matmul"``) for every (x, y) in
    ``pairs``, shared operands only (``kind`` may also list one kind per pair): every product in
    one Beaver round, and those that need it truncated together in one more (Hannun et al.,
    section 3, "Multiplication").

    Precondition (docs/mpc.md, "Ranges"): each product's value v, at scale f = frac_x + frac_y,
    fits its truncation: |v| 2^f <= 2^62 in the bounded mode, -2^63 <= v 2^f < 2^63 - P 2^(k-1)
    in the exact one (k the bits truncated), below 2^63 without truncation.  A matrix product
    counts its whole sum (its partial sums may wrap); two inputs in the product range
    (`ppml.mpc.ranges`) always fit.  Beyond it the result wraps without warning.

    ``keep_scale=True`` skips the truncation: each product comes back at its full scale
    frac_x + frac_y, for a caller that accumulates into a state kept at that scale and knows
    the values fit the ring there."""
    check_pairs(pairs)
    like = pairs[0][0]
    ctx = like.ctx
    fracs = [x.frac_bits + y.frac_bits for x, y in pairs]
    check_product_scales(fracs)                    # before the round, not after it
    with ctx.comm.operation(kind if isinstance(kind, str) else "products"):
        zs = multiply.beaver(ctx, [(x.data, y.data) for x, y in pairs], kind=kind)
        if keep_scale:
            return [type(like)(ctx, z, frac) for z, frac in zip(zs, fracs)]
        return rescaled_together(like, zs, fracs)
