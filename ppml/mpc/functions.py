"""Functions of shared tensors by iteration: reciprocal and exponential (Hannun et al., section 3).

They work on `ArithmeticShared` tensors (their methods ``reciprocal`` and ``exp`` call them)
and are built from the tensor's operators and `products`, above the array protocols
of ppml.mpc.protocols.

Reciprocal: Newton-Raphson iterates y <- y (2 - x y) (the paper's [2y - x y^2]), evaluated in
their error-squaring form: with e = 1 - x y, y (2 - x y) = y (1 + e) and the next error is
e^2, so y (1 + e) and e^2 are two independent products computed in the same round.  An iterate
then costs one multiplication round instead of two sequential ones (2 rounds with truncation
instead of 4); in exact arithmetic the iterates are identical.  Two start values:

* ``paper``: y0 = 3 exp(0.5 - x) + 0.003, the paper's choice on [1, c] (it costs an exponential,
  that is 8 squarings);
* ``linear`` (default): the minimax linear start y0 = alpha - beta x on a public domain [a, b],
  beta = 8 / (4ab + (a + b)^2), alpha = beta (a + b), whose relative error
  E = 1 - beta a b equioscillates on [a, b].  It is free (no rounds), and since the relative
  error squares every iteration, ceil(log2(L ln 2 / -ln E)) iterations reach 2^-L.
  On the paper's [1, 10], E = 0.503 and 5 iterations reach 20 bits.

Exponential: e^x ~ (1 + x / 2^k)^(2^k) with k = 8: one division by 2^k (truncation protocol)
and k squarings.
"""

from __future__ import annotations

import math

import numpy as np

from ppml.checks import check_int
from ppml.mpc.products import products

START_VALUES = ("linear", "paper")
PAPER_ITERATIONS = 7   # the paper's experiments (section 5)
EXP_SQUARINGS = 8      # the paper's k


def linear_start(domain: tuple) -> tuple:
    """(alpha, beta, E): minimax linear start for 1/x on [a, b] and its relative error."""
    a, b = float(domain[0]), float(domain[1])
    if not 0 < a < b:
        raise ValueError(f"reciprocal domain must satisfy 0 < a < b, got {domain}")
    beta = 8.0 / (4.0 * a * b + (a + b) ** 2)
    return beta * (a + b), beta, 1.0 - beta * a * b


def iterations_for(error: float, precision_bits: int) -> int:
    """Newton iterations that take a relative error ``error`` below 2^-precision_bits."""
    return max(1, math.ceil(math.log2(precision_bits * math.log(2) / -math.log(error))))


def reciprocal(x, iterations=None, start="linear", domain=(1.0, 10.0), numerator=None):
    """[1/x] for shared x in ``domain`` (positive); [n/x] for a shared ``numerator`` n.

    With a numerator the iterates are n y_k: n y_0 is computed in the round of e_0 = 1 - x y_0,
    and n y_(k+1) = n y_k (1 + e_k) like y itself, so the quotient costs no round more than the
    reciprocal (a product n * (1/x) would cost one).  The errors e_k keep x's shape and broadcast
    against n's (for u_a / den_a: D times fewer elements than n y_k).
    """
    if numerator is not None:
        np.broadcast_shapes(x.shape, numerator.shape)     # ValueError unless they broadcast
    if start == "paper":
        x = x.at_precision()          # exp squares its argument: at 2L that leaves the ring
        y = 3.0 * exp(0.5 - x) + 0.003
        iterations = PAPER_ITERATIONS if iterations is None else iterations
    elif start == "linear":
        alpha, beta, error = linear_start(domain)
        y = alpha - beta * x
        if iterations is None:
            iterations = iterations_for(error, x.ctx.precision_bits)
    else:
        raise ValueError(f"reciprocal start must be one of {START_VALUES}, got {start!r}")
    iterations = check_int("reciprocal iterations", iterations, 0, what="an integer")
    if iterations == 0:
        return y if numerator is None else numerator * y
    if numerator is None:
        error = 1 - x * y                                   # e_0 = 1 - x y_0
    else:
        xy, y = products([(x, y), (numerator, y)])
        error = 1 - xy                                      # e_0, with n y_0 in the same round
    for _ in range(iterations - 1):
        y, error = products([(y, 1 + error), (error, error)])   # one round for both
    return y * (1 + error)                                  # the last iterate needs no e^2


def exp(x, squarings: int | None = None):
    """[e^x] = [(1 + x / 2^k)^(2^k)] with k = ``squarings`` (default `EXP_SQUARINGS`)."""
    squarings = EXP_SQUARINGS if squarings is None else squarings
    y = x.divide_by_power_of_two(squarings) + 1
    for _ in range(squarings):
        y = y.square()
    return y
