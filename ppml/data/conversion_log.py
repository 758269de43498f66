"""A synthetic click and conversion log for Masked LARK's reporting (the slides' "Example:
Counting conversions"): one report per browser in a time window, under a (query, advertiser)
key whose popularity follows a Zipf law, so that the sparse-reporting threshold suppresses a
realistic tail.

Each browser's value vector has ``d`` coordinates in [0, bound]: its clicks (Binomial(bound,
click_rate)), its conversions (Binomial(clicks, conversion_rate)), and for d > 2 conversion
values (uniform in [0, bound] for a browser that converted, else 0).  Public experiment
randomness from ``np.random.default_rng(seed)``, like every dataset's order: the log is the
browsers' data, and it is the same in every run with the same ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppml.checks import check_int


@dataclass(frozen=True)
class ConversionLog:
    """``keys[i]`` (an index into the ``queries`` x ``advertisers`` catalog, query-major) and
    ``values[i]`` (d int64 coordinates) of browser i."""

    keys: np.ndarray
    values: np.ndarray
    queries: int
    advertisers: int

    @property
    def catalog(self) -> int:
        """How many (query, advertiser) keys there are."""
        return self.queries * self.advertisers

    def pair(self, key: int) -> tuple:
        """The (query, advertiser) of catalog index ``key``."""
        return divmod(int(key), self.advertisers)


def zipf_weights(count: int, exponent: float, rng: np.random.Generator) -> np.ndarray:
    """Probabilities of ``count`` keys under a Zipf law of ``exponent``, the ranks assigned
    to the keys in a random order."""
    weights = np.arange(1, count + 1, dtype=np.float64) ** -exponent
    return rng.permutation(weights / weights.sum())


def conversion_log(browsers: int, d: int, bound: int, queries: int, advertisers: int,
                   zipf: float, click_rate: float, conversion_rate: float,
                   seed: int) -> ConversionLog:
    """The log of ``browsers`` browsers (see the module docstring)."""
    check_int("browsers", browsers, 1)
    check_int("d", d, 1)
    check_int("bound", bound, 1)
    rng = np.random.default_rng([seed, 0x1A2C])
    weights = zipf_weights(queries * advertisers, zipf, rng)
    keys = rng.choice(queries * advertisers, size=browsers, p=weights)
    values = np.zeros((browsers, d), dtype=np.int64)
    clicks = rng.binomial(bound, click_rate, size=browsers)
    values[:, 0] = clicks
    if d > 1:
        values[:, 1] = rng.binomial(clicks, conversion_rate)
    if d > 2:
        amounts = rng.integers(0, bound + 1, size=(browsers, d - 2))
        values[:, 2:] = amounts * (values[:, 1:2] > 0)
    return ConversionLog(keys.astype(np.int64), values, queries, advertisers)
