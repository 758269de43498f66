"""The helpers' noise (slide "Requirements for Helpers" and its notes): each helper adds to its
share of every released coordinate its own draw of D(0, sigma_hat sqrt(k)), a discrete Gaussian
(or discrete Laplace) from its own CSPRNG.

Every helper draws at the full scale, so the sum the ad network sees carries h independent
draws, and any one helper that knows its own (or h - 1 helpers that pool theirs, or any of them
with the ad network) still faces one full draw: the guarantee of one draw (`release_privacy`)
holds against them by post-processing.  The price is sqrt(h) times the standard deviation of
one draw in the release; docs/masked-lark.md compares it with splitting the scale.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ppml.crypto.rng import Stream, UniformIntegers, fresh_key, seeded_key
from ppml.privacy import accounting
from ppml.privacy.discrete import samples
from ppml.protocols.masked_lark.config import MaskedLarkOptions


def noise_scale(options: MaskedLarkOptions) -> Fraction:
    """The scale of each helper's draw, sigma_hat sqrt(k) (the Gaussian's sigma, the
    Laplace's scale), as the exact rational of its float: ``sigma_hat`` if given, else the
    one that gives one release the published ``epsilon`` (`accounting.scale_for`)."""
    if options.sigma_hat is None:
        return Fraction(accounting.scale_for(options.noise, options.epsilon,
                                             report_sensitivity(options), options.delta))
    return Fraction(options.sigma_hat * math.sqrt(options.k))


def report_sensitivity(options: MaskedLarkOptions, releases: int = 1) -> float:
    """How far one browser's report, a value in [0, B]^d, moves ``releases`` releases: B
    sqrt(d) in L2, B d in L1 (`accounting.sensitivity`)."""
    return accounting.sensitivity(options.noise, options.bound * math.sqrt(options.d),
                                  options.bound * options.d, releases)


def release_privacy(options: MaskedLarkOptions, scale: Fraction, releases: int = 1) -> dict:
    """What ``releases`` releases at ``scale`` guarantee (epsilon, delta and the Gaussian's
    rho), for a browser that reports one value in [0, B]^d per window."""
    return accounting.guarantee(options.noise, float(scale),
                                report_sensitivity(options, releases), options.delta)


def helper_noise(family: str, scale: Fraction, shape: tuple, seed: int | None,
                 helper: int, *release) -> np.ndarray:
    """Helper ``helper``'s draws for a release of ``shape`` (int64), from the OS CSPRNG, or
    (``seed``: INSECURE) from a stream derived from the seed, the helper and the ``release``'s
    label (a training step)."""
    stream = Stream(fresh_key() if seed is None else seeded_key(seed, "masked-lark noise",
                                                                helper, *release))
    below = UniformIntegers(stream).below
    return np.asarray(samples(family, scale, math.prod(shape), below),
                      dtype=np.int64).reshape(shape)
