"""Differential-privacy accounting of integer noise, by OpenDP (a maintained library with
proofs for its measurements): what the discrete Gaussian or discrete Laplace at a scale gives
for a sensitivity, alone and under composition, and the scale that gives a target epsilon.

* Discrete Gaussian of sigma on each coordinate, L2 sensitivity D2: rho-zCDP with
  rho = D2^2 / (2 sigma^2) (Canonne, Kamath and Steinke 2020, Theorem 4); R releases compose to
  R rho; (epsilon, delta) by OpenDP's zCDP-to-approximate-DP conversion (their Corollary 13).
* Discrete Laplace of scale b, L1 sensitivity D1: pure epsilon = D1 / b; R releases: R epsilon.

Both depend on the scale and the sensitivity only through their ratio, so OpenDP is asked in
units of the sensitivity (sensitivity 1): its searches overflow on fixed-point sensitivities
such as 2^20.
"""

from __future__ import annotations

import math

from opendp import combinators, measurements
from opendp.domains import atom_domain, vector_domain
from opendp.metrics import l1_distance, l2_distance
from opendp.mod import binary_search_param, enable_features

from ppml.checks import check_int, check_positive

enable_features("contrib")
"""OpenDP's modules, not ``opendp.prelude``, which imports its scikit-learn extras (2 s)."""


def _measurement(family: str, scale: float):
    integers = vector_domain(atom_domain(T=int))
    if family == "gaussian":
        return combinators.make_zCDP_to_approxDP(
            measurements.make_gaussian(integers, l2_distance(T=float), scale=scale))
    if family == "laplace":
        return measurements.make_laplace(integers, l1_distance(T=float), scale=scale)
    raise ValueError(f"the noise family must be gaussian or laplace, got {family!r}")


def sensitivity(family: str, l2: float, l1: float, releases: int = 1) -> float:
    """The sensitivity R = ``releases`` releases of a sum whose one contribution moves it by
    at most ``l2`` (L2) or ``l1`` (L1) amount to: R^(1/2) l2 for the Gaussian (R rho =
    (R^(1/2) D2)^2 / 2 sigma^2), R l1 for the Laplace."""
    check_int("releases", releases, 1)
    return math.sqrt(releases) * l2 if family == "gaussian" else float(releases * l1)


def guarantee(family: str, scale: float, d_in: float, delta: float) -> dict:
    """``epsilon`` (at ``delta`` for the Gaussian; pure for the Laplace) and, for the
    Gaussian, ``rho`` (zCDP) of noise at ``scale`` on a sum of sensitivity ``d_in``
    (`sensitivity`: L2 for the Gaussian, L1 for the Laplace)."""
    scale = check_positive("scale", scale) / check_positive("sensitivity", d_in)
    if family == "gaussian":                    # in units of the sensitivity (see the module)
        return {"epsilon": float(_measurement(family, scale).map(1.0).epsilon(delta)),
                "delta": delta, "rho": 1 / (2 * scale ** 2)}
    return {"epsilon": float(_measurement(family, scale).map(1.0)), "delta": 0.0, "rho": None}


def scale_for(family: str, epsilon: float, d_in: float, delta: float) -> float:
    """The smallest scale (within OpenDP's binary search) at which noise on a sum of
    sensitivity ``d_in`` is (``epsilon``, ``delta``)-DP (the Gaussian) or ``epsilon``-DP (the
    Laplace)."""
    check_positive("epsilon", epsilon)
    d_in = check_positive("sensitivity", d_in)
    if family == "gaussian":
        return d_in * float(binary_search_param(
            lambda s: combinators.make_fix_delta(_measurement(family, s), delta), d_in=1.0,
            d_out=(epsilon, delta), T=float))
    return d_in * float(binary_search_param(lambda s: _measurement(family, s), d_in=1.0,
                                            d_out=epsilon, T=float))
