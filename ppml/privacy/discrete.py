"""Exact samplers of the discrete Laplace and the discrete Gaussian on the integers (Canonne,
Kamath and Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Algorithms
1-3), driven by any source of uniform integers.

Every draw is exact: the parameters are rationals (`fractions.Fraction`) and every coin is a
comparison of a uniform integer, so no floating point decides an output (the floating-point
attacks on textbook samplers, Mironov 2012, do not apply).  ``below(n)`` must return a
uniform integer in [0, n): ``ppml.crypto.rng.UniformIntegers.below`` (a CSPRNG; INSECURE
when its key comes from a seed) in the protocols.  The distributions are tested against OpenDP's
samplers (tests/privacy/test_discrete.py).
"""

from __future__ import annotations

import math
from fractions import Fraction


def bernoulli_exp(gamma: Fraction, below) -> bool:
    """True with probability exp(-gamma), gamma >= 0 a rational (CKS Algorithm 1)."""
    gamma = Fraction(gamma)
    return _bernoulli_exp(gamma.numerator, gamma.denominator, below)


def _bernoulli_exp(n: int, d: int, below) -> bool:
    """True with probability exp(-n/d), in integers: exp(-1) once per whole unit of n/d, then
    Algorithm 1's loop, whose coin Bernoulli(n / (d k)) is [below(d k) < n]."""
    while n > d:
        if not _bernoulli_exp(1, 1, below):
            return False
        n -= d
    k = 1
    while below(d * k) < n:
        k += 1
    return k % 2 == 1


def discrete_laplace(scale: Fraction, below) -> int:
    """One draw of the discrete Laplace with ``scale`` = t/s > 0: P(y) proportional to
    exp(-|y| / scale) (CKS Algorithm 2)."""
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"the discrete Laplace's scale must be > 0, got {scale}")
    return _discrete_laplace(scale.numerator, scale.denominator, below)


def _discrete_laplace(t: int, s: int, below) -> int:
    while True:
        u = below(t)
        if not _bernoulli_exp(u, t, below):
            continue
        v = 0
        while _bernoulli_exp(1, 1, below):
            v += 1
        y = (u + t * v) // s
        negative = below(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_gaussian(sigma_squared: Fraction, below) -> int:
    """One draw of the discrete Gaussian N_Z(0, sigma^2): P(y) proportional to
    exp(-y^2 / (2 sigma^2)) (CKS Algorithm 3, with discrete Laplace proposals of scale t =
    floor(sigma) + 1, accepted with probability exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)), in
    integers: with sigma^2 = a/b that exponent is (|y| t b - a)^2 / (2 a t^2 b))."""
    return _gaussians(_gaussian_terms(sigma_squared), 1, below)[0]


def _gaussian_terms(sigma_squared) -> tuple:
    """(a, b, t) of `discrete_gaussian` for sigma^2 = a/b."""
    sigma_squared = Fraction(sigma_squared)
    if sigma_squared <= 0:
        raise ValueError(f"the discrete Gaussian's sigma^2 must be > 0, got {sigma_squared}")
    a, b = sigma_squared.numerator, sigma_squared.denominator
    return a, b, math.isqrt(a // b) + 1


def _gaussians(terms: tuple, count: int, below) -> list:
    a, b, t = terms
    out = []
    while len(out) < count:
        y = _discrete_laplace(t, 1, below)
        if _bernoulli_exp((abs(y) * t * b - a) ** 2, 2 * a * t * t * b, below):
            out.append(y)
    return out


FAMILIES = ("gaussian", "laplace")


def samples(family: str, scale: Fraction, count: int, below) -> list:
    """``count`` independent draws of ``family`` (`FAMILIES`) at ``scale``: the discrete
    Gaussian's sigma, or the discrete Laplace's scale (the parameters' integers worked out
    once)."""
    scale = Fraction(scale)
    if family == "gaussian":
        return _gaussians(_gaussian_terms(scale * scale), count, below)
    if family == "laplace":
        if scale <= 0:
            raise ValueError(f"the discrete Laplace's scale must be > 0, got {scale}")
        return [_discrete_laplace(scale.numerator, scale.denominator, below)
                for _ in range(count)]
    raise ValueError(f"the noise family must be one of {', '.join(FAMILIES)}, got {family!r}")


def sample(family: str, scale: Fraction, below) -> int:
    """One draw of `samples`."""
    return samples(family, scale, 1, below)[0]
