"""Functions of shared tensors: reciprocal and exponential (Hannun et al., section 3).

They work on `ArithmeticShared` tensors (their methods ``reciprocal`` and ``exp`` call them)
and are built from the tensor's operators and `products`, above the array protocols
of ppml.mpc.protocols.

Reciprocal, two methods (`RECIPROCAL_METHODS`; ``auto``, the default, takes the windowed one
where it fits, `chosen_reciprocal`):

* ``window``: one opening, a local sum and one truncation (2 rounds; 4 with a
  numerator): x 2^g = c - rho with c public at every position of a dealer one-hot window and rho
  the dealer's, and 1/x = sum_k 2^g rho^k / c^(k+1), the geometric series cut where its error
  falls below 2^-(L+1) (`ppml.mpc.protocols.window`, `reciprocal_window`);
* ``newton``: the paper's Newton-Raphson (below).

Newton-Raphson iterates y <- y (2 - x y) (the paper's [2y - x y^2]), evaluated in
their error-squaring form: with e = 1 - x y, y (2 - x y) = y (1 + e) and the next error is
e^2, so y (1 + e) and e^2 are two independent products computed in the same round.  An iterate
then costs one multiplication round instead of two sequential ones (2 rounds with truncation
instead of 4); in exact arithmetic the iterates are identical.  Two start values:

* ``paper``: y0 = 3 exp(0.5 - x) + 0.003, the paper's choice on [1, c] (it costs the paper's
  exponential, the limit with 8 squarings);
* ``linear`` (default): the minimax linear start y0 = alpha - beta x on a public domain [a, b],
  beta = 8 / (4ab + (a + b)^2), alpha = beta (a + b), whose relative error
  E = 1 - beta a b equioscillates on [a, b].  It is free (no rounds), and since the relative
  error squares every iteration, ceil(log2(L ln 2 / -ln E)) iterations reach 2^-L.
  On the paper's [1, 10], E = 0.503 and 5 iterations reach 20 bits.

Exponential, two methods (`EXP_METHODS`):

* ``range_reduced`` (default): x = n + f with an integer n, e^x = e^n e^f in one opening and one
  truncation (2 rounds): the integer part selects e^n from a public table through a dealer
  one-hot, and the fraction is split between the opened mask, f = omega - rho with omega
  public, and the dealer, who scales the one-hot by e^-rho (`ppml.mpc.protocols.window`).
  No approximation: the error is fixed-point rounding only.
* ``limit``: the paper's e^x ~ (1 + x / 2^k)^(2^k) with k = 8: one division by 2^k (truncation
  protocol) and k squarings (17 rounds), 3% off on [-4, 2] and 17% at x = 10.

docs/mpc.md ("Functions") compares them.

Domains: each function computes its value for x in a stated domain (`reciprocal_domain`,
`range_reduced_domain`, `exp_domain`), a precondition for a shared x, which cannot be checked
without opening it.  A tensor that holds a public constant (`Context.constant`, its ``public``)
is checked, and a value outside the domain raises a ValueError naming the domain.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ppml.checks import check_int
from ppml.crypto.fixed import VALUE_BITS
from ppml.mpc.products import products
from ppml.mpc.protocols import window

RECIPROCAL_METHODS = ("auto", "window", "newton")
START_VALUES = ("linear", "paper")
WINDOW_MAX_BITS = 10
"""The windowed reciprocal's largest window: 2^10 positions a term (dealer words an element)."""
WINDOW_FACTOR_GUARD = 8
"""The windowed reciprocal encodes its public factors at 2^-(L + 8) where the ring allows it
(`window_plan`): their rounding, summed over at most 21 terms, stays below 2^-(L+4)."""
WINDOW_MIN_GUARD = 4
"""... and at least at 2^-(L + 4) (rounding below 21 2^-(L+5) < 0.7 2^-L), else it refuses the
domain."""
PAPER_ITERATIONS = 7   # the paper's experiments (section 5)
EXP_METHODS = ("range_reduced", "limit")
EXP_LOW = -64.0        # the range-reduced exp's default lower end: a table of 2^7 positions
EXP_LOWEST = -512.0    # its lowest lower end: at most 2^10 positions (words an element)
EXP_SQUARINGS = 8      # the paper's k
EXP_GUARD_BITS = 8
"""exp needs precision_bits >= squarings + 8: fixed-point rounding adds up to
(P + 1) 2^(k - L) to its relative error (P parties; docs/mpc.md, "Ranges"), at most
(P + 1) 2^-8 at the limit, beside the approximation's x^2 / 2^(k+1)."""


def check_domain(x, function: str, domain: tuple, bound: str) -> None:
    """A ValueError naming ``function`` and ``bound`` when ``x`` holds a public constant with a
    value outside ``domain`` = [low, high]; nothing for a shared x (its domain is a
    precondition)."""
    if x.public is None or not x.public.size:
        return
    low, high = float(x.public.min()), float(x.public.max())
    if not domain[0] <= low <= high <= domain[1]:
        raise ValueError(f"{function} of a public value outside its domain: every x must lie in "
                         f"{bound} = [{domain[0]:g}, {domain[1]:g}], got x in [{low:g}, {high:g}]")


def positive_interval(domain: tuple) -> tuple:
    """``domain`` = (a, b) as floats, or a ValueError unless it is a pair of numbers with
    0 < a < b < inf."""
    try:
        a, b = (float(end) for end in domain)
    except (TypeError, ValueError):
        a = b = math.nan
    if not 0 < a < b < math.inf:
        raise ValueError(f"reciprocal domain must be a pair (a, b) with 0 < a < b < inf, got "
                         f"{domain!r}")
    return a, b


def check_numerator(x, numerator) -> None:
    """A TypeError naming ``numerator`` unless it is a shared tensor of x's class, a ValueError
    unless its shape broadcasts with x's."""
    if not isinstance(numerator, type(x)):
        raise TypeError(f"numerator must be a shared tensor ({type(x).__name__}), got "
                        f"{type(numerator).__name__}: multiply the quotient by a public value")
    try:
        np.broadcast_shapes(x.shape, numerator.shape)
    except ValueError:
        raise ValueError(f"numerator's shape {numerator.shape} does not broadcast with x's "
                         f"{x.shape}") from None


def linear_start(domain: tuple) -> tuple:
    """(alpha, beta, E): minimax linear start for 1/x on [a, b] and its relative error."""
    a, b = positive_interval(domain)
    beta = 8.0 / (4.0 * a * b + (a + b) ** 2)
    return beta * (a + b), beta, 1.0 - beta * a * b


def iterations_for(error: float, precision_bits: int) -> int:
    """Newton iterations that take a relative error ``error`` below 2^-precision_bits."""
    return max(1, math.ceil(math.log2(precision_bits * math.log(2) / -math.log(error))))


def reciprocal_domain(domain: tuple, precision_bits: int) -> tuple:
    """``domain`` = (a, b) as floats after checking 0 < a < b and that the iterates, at most
    (1 + E) / a < 2 / a, keep their products at scale 2^-2L in the ring: 2 / a <= 2^(62-2L)."""
    a, b = positive_interval(domain)
    floor = 2.0 ** (2 * precision_bits + 1 - VALUE_BITS)
    if a < floor:
        raise ValueError(f"reciprocal domain must have a >= 2^{2 * precision_bits + 1 - VALUE_BITS}"
                         f" = {floor:.6g} at precision_bits={precision_bits} (the iterates reach "
                         f"2 / a, and their products at scale 2^-{2 * precision_bits} must fit "
                         f"the ring), got a = {a:g}")
    return a, b


def reciprocal(x, iterations=None, start=None, domain=(1.0, 10.0), numerator=None,
               method="auto"):
    """[1/x] for x in ``domain`` = [a, b]; [n/x] for a shared ``numerator`` n, by ``method``
    (`RECIPROCAL_METHODS`): ``window`` (`reciprocal_window`), ``newton`` with its
    ``iterations`` and ``start`` (`reciprocal_newton`), or ``auto`` (`chosen_reciprocal`); a
    ValueError for an unknown method or a parameter of the other method."""
    if method == "auto":
        method = chosen_reciprocal(domain, x.ctx.precision_bits, iterations, start)
    if method == "newton":
        return reciprocal_newton(x, iterations, start, domain, numerator)
    if method != "window":
        raise ValueError(f"reciprocal method must be one of {RECIPROCAL_METHODS}, got "
                         f"{method!r}")
    if iterations is not None or start is not None:
        raise ValueError(f"reciprocal iterations and start apply to method='newton' only, got "
                         f"iterations={iterations!r}, start={start!r} with method='window'")
    return reciprocal_window(x, domain, numerator)


def chosen_reciprocal(domain, precision_bits: int, iterations=None, start=None) -> str:
    """``auto``'s method: ``newton`` when its ``iterations`` or ``start`` is given, else
    ``window`` where its window and its factors fit (`window_plan`),
    else ``newton`` (a domain wider than 2^8 or so, a precision above 28 bits on [1, 10])."""
    if iterations is not None or start is not None:
        return "newton"
    a, b = positive_interval(domain)
    try:
        window_plan(a, b, precision_bits)
    except ValueError:
        return "newton"
    return "window"


@functools.lru_cache(maxsize=64)
def window_layout(a: float, b: float, precision_bits: int) -> tuple:
    """(g, lowest, bits, K): the windowed reciprocal's grid of g fractional bits, its window
    [lowest, lowest + 2^bits) of the integer parts n of x 2^g (floor(a 2^g) <= n <=
    floor(b 2^g) + 1), and its terms K = ceil((L + 1) / log2(a 2^g)), so that the cut series'
    relative error (a 2^g)^-K is at most 2^-(L+1); of the grids with lowest >= 2 (every c > 2)
    and at most `WINDOW_MAX_BITS`, the one with the fewest dealer words K 2^bits an element.
    A ValueError when none fits: b / a too large."""
    best = None
    for grid in range(precision_bits + 1):
        lowest = math.floor(a * 2.0 ** grid)
        if lowest < 2:
            continue
        bits = (math.floor(b * 2.0 ** grid) + 1 - lowest).bit_length()
        if bits > WINDOW_MAX_BITS:
            break
        terms = math.ceil((precision_bits + 1) / math.log2(a * 2.0 ** grid))
        if best is None or terms << bits < best[0]:
            best = (terms << bits, grid, lowest, bits, terms)
    if best is None:
        raise ValueError(f"reciprocal domain [{a:g}, {b:g}] is too wide for method='window': "
                         f"its window would exceed 2^{WINDOW_MAX_BITS} positions (b / a must stay "
                         f"below about 2^{WINDOW_MAX_BITS - 2}); use method='newton'")
    return best[1:]


def window_plan(a: float, b: float, precision_bits: int) -> tuple:
    """((g, lowest, bits, K), factor_bits): the windowed reciprocal's layout on [a, b]
    (`window_layout`) and the scale of its public factors: L + `WINDOW_FACTOR_GUARD`, or less so
    that 1/a at scale 2^-(L + factor_bits) stays below 2^61, but at least L + `WINDOW_MIN_GUARD`.
    A ValueError naming the domain, and method='newton', where it does not fit."""
    factor_bits = min(precision_bits + WINDOW_FACTOR_GUARD,
                      VALUE_BITS - 1 - precision_bits - max(0, math.ceil(math.log2(1.0 / a))))
    if factor_bits < precision_bits + WINDOW_MIN_GUARD:
        floor = 2.0 ** (2 * precision_bits + WINDOW_MIN_GUARD + 1 - VALUE_BITS)
        raise ValueError(f"reciprocal domain must have a >= {floor:.6g} at precision_bits="
                         f"{precision_bits} for method='window' (1/a at scale "
                         f"2^-{2 * precision_bits + WINDOW_MIN_GUARD} must fit the ring), got "
                         f"a = {a:g}; use method='newton'")
    return window_layout(a, b, precision_bits), factor_bits


def reciprocal_window(x, domain=(1.0, 10.0), numerator=None):
    """[1/x] in one opening and one truncation; [n/x] = n * [1/x] with one product more.

    Precondition (docs/mpc.md, "Ranges"): every x lies in [a, b] = ``domain``, 0 < a < b,
    1/a 2^(2L+4) < 2^61 (the result at scale 2^-(L + factor_bits) fits the ring, `window_plan`).
    There the result is within about 2^-L (1.1 / a + 1.7) of 1/x: the cut series (relative
    2^-(L+1)), the dealer's rho^k (2^-(L+1) / a) and the public factors (below 0.7 2^-L)
    rounded, one truncation (1 ulp bounded, P/2 + 1/2 exact); n / x adds one product's
    truncation.  An x outside the window (`window_layout`) aliases to a wrong value without
    warning.  A public constant outside
    [a, b] raises a ValueError (`check_domain`), and so do a domain that is no such pair or too
    wide, and a numerator that is no shared tensor broadcasting with x (a TypeError)."""
    precision = x.ctx.precision_bits
    a, b = positive_interval(domain)
    (grid, lowest, bits, terms), factor_bits = window_plan(a, b, precision)
    check_domain(x, "reciprocal", (a, b), "domain")
    if numerator is not None:
        check_numerator(x, numerator)
    if x.frac_bits < grid:
        x = x.at_scale(grid)
    y = window.reciprocal(x.ctx, x.data, x.frac_bits, grid, lowest, bits, terms, precision,
                          factor_bits)
    y = type(x)(x.ctx, y, precision + factor_bits).at_precision()
    return y if numerator is None else numerator * y


def reciprocal_newton(x, iterations=None, start=None, domain=(1.0, 10.0), numerator=None):
    """[1/x] for x in ``domain`` = [a, b]; [n/x] for a shared ``numerator`` n: Newton-Raphson
    from the ``start`` value (`START_VALUES`; None: linear), the paper's method.

    Precondition (docs/mpc.md, "Ranges"): every x lies in [a, b], 0 < a < b < inf,
    a >= 2^(2L-61) (`reciprocal_domain`); for n / x also |n| / a < 2^(62-2L).  The
    linear start's relative error E then squares every iteration down to the fixed-point floor
    (below 3.5e-5 at L = 20 on [1, 10], docs/mpc.md, "Functions"; n / x within |n| / x times
    that plus one truncation per iterate); outside [a, b] the start may not converge
    (|1 - x y_0| >= 1 for x <= 0) and the result is wrong without warning.  The paper's
    start assumes the same domain (its iterations are tabulated on [1, 10]).  A public constant
    outside [a, b] raises a ValueError (`check_domain`), and so do a domain that is no such
    pair and a numerator that is no shared tensor broadcasting with x (a TypeError).

    With a numerator the iterates are n y_k: n y_0 is computed in the round of e_0 = 1 - x y_0,
    and n y_(k+1) = n y_k (1 + e_k) like y itself, so the quotient costs no round more than the
    reciprocal (a product n * (1/x) would cost one).  The errors e_k keep x's shape and broadcast
    against n's (for u_a / den_a: D times fewer elements than n y_k).
    """
    domain = reciprocal_domain(domain, x.ctx.precision_bits)
    check_domain(x, "reciprocal", domain, "domain")
    if numerator is not None:
        check_numerator(x, numerator)
    start = "linear" if start is None else start
    if start == "paper":
        x = x.at_precision()          # exp squares its argument: at 2L that leaves the ring
        y = 3.0 * exp_limit(0.5 - x) + 0.003
        iterations = PAPER_ITERATIONS if iterations is None else iterations
    elif start == "linear":
        alpha, beta, error = linear_start(domain)
        # alpha and beta x are at most 2 / a, which `reciprocal_domain` keeps within the ring's
        # products at 2L: they may leave the product range, so they ask for the ring's.
        y = x.ctx.constant(alpha, wide=True) - x.times(beta, wide=True)
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


def exp_domain(squarings: int, precision_bits: int) -> tuple:
    """The limit's domain [-2^k, (62 - 2L) ln 2]: below it 1 + x / 2^k < 0, above it the last
    squaring, at most e^x at scale 2^-2L, leaves the ring (2^62); a ValueError naming
    ``squarings`` and ``precision_bits`` when L < k + `EXP_GUARD_BITS`, where rounding would
    swamp the result."""
    squarings = check_int("exp squarings", squarings, 0, what="an integer")
    if precision_bits < squarings + EXP_GUARD_BITS:
        raise ValueError(f"exp with squarings={squarings} needs precision_bits >= "
                         f"{squarings + EXP_GUARD_BITS}, got precision_bits={precision_bits}: "
                         f"its rounding error grows as (P + 1) 2^(squarings - precision_bits); "
                         f"lower squarings (the approximation error x^2 / 2^(squarings + 1) "
                         f"grows) or raise precision_bits")
    return -2.0 ** squarings, (VALUE_BITS - 2 * precision_bits) * math.log(2)


def exp_top(precision_bits: int) -> float:
    """The range-reduced exp's largest x, (62 - 2L) ln 2 - 2^(1-L): e^x at scale 2^-2L, before
    its truncation, stays within 2^62 with the rounding of its factors."""
    return (VALUE_BITS - 2 * precision_bits) * math.log(2) - 2.0 ** (1 - precision_bits)


def range_reduced_domain(domain, precision_bits: int) -> tuple:
    """``domain`` = (low, high) as floats (None: (`EXP_LOW`, `exp_top`)), or a ValueError naming
    it unless `EXP_LOWEST` <= low < high <= `exp_top` (the table's 2^b positions grow with
    high - low)."""
    top = exp_top(precision_bits)
    if domain is None:
        return EXP_LOW, top
    try:
        low, high = (float(end) for end in domain)
    except (TypeError, ValueError):
        low = high = math.nan
    if not EXP_LOWEST <= low < high <= top:
        raise ValueError(f"exp domain must be a pair (low, high) with {EXP_LOWEST:g} <= low < "
                         f"high <= (62 - 2 precision_bits) ln 2 - 2^(1 - precision_bits) = "
                         f"{top:.6g} at precision_bits={precision_bits}, got {domain!r}")
    return low, high


@functools.lru_cache(maxsize=64)
def exp_window(low: float, high: float) -> tuple:
    """(lowest, bits): the integer parts n of x in [low, high], floor(low) <= n <= ceil(high),
    in a window [lowest, lowest + 2^bits) that ends at ceil(high)."""
    top = math.ceil(high)
    bits = (top - math.floor(low)).bit_length()
    return top - (1 << bits) + 1, bits


def exp(x, method: str = "range_reduced", squarings: int | None = None, domain=None):
    """[e^x] by ``method`` (`EXP_METHODS`): ``range_reduced`` (the default) on ``domain``, or the
    paper's ``limit`` with k = ``squarings``; a ValueError for an unknown method or a parameter
    of the other method."""
    if method == "range_reduced":
        if squarings is not None:
            raise ValueError(f"exp squarings apply to method='limit' only, got "
                             f"squarings={squarings!r} with method='range_reduced'")
        return exp_range_reduced(x, domain)
    if method == "limit":
        if domain is not None:
            raise ValueError(f"exp domain applies to method='range_reduced' only, got "
                             f"domain={domain!r} with method='limit' (whose domain is "
                             f"[-2^squarings, (62 - 2 precision_bits) ln 2])")
        return exp_limit(x, squarings)
    raise ValueError(f"exp method must be one of {EXP_METHODS}, got {method!r}")


def exp_range_reduced(x, domain=None):
    """[e^x] = [e^n e^f], x = n + f, in 2 rounds: one opening (`ppml.mpc.protocols.window`:
    the integer part n through a dealer one-hot over a public table, the fraction split between
    the opened mask and the dealer) and one truncation.

    Precondition (docs/mpc.md, "Ranges"): x in ``domain`` = [low, high] (`range_reduced_domain`;
    default [-64, (62 - 2L) ln 2 - 2^(1-L)], [-64, 15.25] at L = 20).  There the error is only
    fixed-point rounding: |result - e^x| <= 2^-L (1.4 e^x + P/2 + 1) (P parties; the two
    factors' rounding, then the truncation's: 1 ulp bounded, P/2 + 1/2 exact).  The dealer's
    one-hot has 2^b positions, b = bit length of ceil(high) - floor(low) (7 by default, 128
    words an element); an x below the window it covers aliases to a wrong value.  A public
    constant outside the domain raises a ValueError (`check_domain`)."""
    precision = x.ctx.precision_bits
    low, high = range_reduced_domain(domain, precision)
    check_domain(x, "exp", (low, high), "domain")
    x = x.at_precision()                          # the window's bits must fit above the scale
    lowest, bits = exp_window(low, high)
    y = window.exp(x.ctx, x.data, x.frac_bits, lowest, bits, precision)
    return type(x)(x.ctx, y, 2 * precision).at_precision()


def exp_limit(x, squarings: int | None = None):
    """[e^x] = [(1 + x / 2^k)^(2^k)] with k = ``squarings`` (default `EXP_SQUARINGS`): the
    paper's (Hannun et al., section 3), 1 + 2k rounds.

    Precondition (docs/mpc.md, "Ranges"): x in `exp_domain` = [-2^k, (62 - 2L) ln 2]
    ([-256, 15.25] at L = 20), and L >= k + 8.  There the error is at most about
    max(1, e^x) (x^2 / 2^(k+1) + (P + 1) 2^(k-L)): the approximation's, then fixed-point
    rounding's (P parties).  A public constant outside the domain raises a ValueError
    (`check_domain`)."""
    squarings = EXP_SQUARINGS if squarings is None else squarings
    check_domain(x, "exp", exp_domain(squarings, x.ctx.precision_bits),
                 f"[-2^squarings, (62 - 2 precision_bits) ln 2] at squarings={squarings}, "
                 f"precision_bits={x.ctx.precision_bits}")
    y = x.divide_by_power_of_two(squarings) + 1
    for _ in range(squarings):
        y = y.square()
    return y
