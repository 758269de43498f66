"""The exact samplers against the exact distributions and against OpenDP's samplers."""

from fractions import Fraction

import numpy as np
import opendp.prelude as dp
import pytest
from scipy import stats

from ppml.crypto.rng import Stream, UniformIntegers
from ppml.privacy.discrete import (FAMILIES, bernoulli_exp, discrete_gaussian, discrete_laplace,
                                   sample)

dp.enable_features("contrib")


def _below():
    return UniformIntegers(Stream(bytes(range(32)))).below


def _pmf(family: str, scale: float, support: np.ndarray) -> np.ndarray:
    logs = -support.astype(float) ** 2 / (2 * scale ** 2) if family == "gaussian" \
        else -np.abs(support).astype(float) / scale
    weights = np.exp(logs - logs.max())
    return weights / weights.sum()


def _binned(draws: np.ndarray, edges: list) -> np.ndarray:
    return np.bincount(np.digitize(draws, edges), minlength=len(edges) + 1)


@pytest.mark.parametrize("family,scale", [("gaussian", 3), ("gaussian", Fraction(7, 4)),
                                          ("laplace", 2), ("laplace", Fraction(5, 2))])
def test_each_sampler_fits_its_exact_distribution(family, scale):
    below = _below()
    draws = np.array([sample(family, Fraction(scale), below) for _ in range(4000)])
    support = np.arange(-60, 61)
    expected = 4000 * _pmf(family, float(scale), support)
    observed = np.array([(draws == v).sum() for v in support])
    common = expected >= 5                       # the tails pooled into one cell
    observed = np.append(observed[common], observed[~common].sum())
    expected = np.append(expected[common], expected[~common].sum())
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-4


@pytest.mark.parametrize("family,scale", [("gaussian", 4.0), ("laplace", 3.0)])
def test_the_samplers_draw_as_opendps(family, scale):
    integers = dp.vector_domain(dp.atom_domain(T=int))
    make = dp.m.make_gaussian if family == "gaussian" else dp.m.make_laplace
    metric = dp.l2_distance(T=float) if family == "gaussian" else dp.l1_distance(T=float)
    theirs = np.array(make(integers, metric, scale=scale)([0] * 4000))
    below = _below()
    ours = np.array([sample(family, Fraction(scale), below) for _ in range(4000)])
    edges = [-6, -3, -2, -1, 0, 1, 2, 3, 6]
    table = np.stack([_binned(ours, edges), _binned(theirs, edges)])
    assert stats.chi2_contingency(table).pvalue > 1e-4


def test_bernoulli_exp_is_exact_in_mean():
    below = _below()
    for gamma in (Fraction(1, 3), Fraction(5, 2)):
        hits = sum(bernoulli_exp(gamma, below) for _ in range(6000))
        assert abs(hits / 6000 - np.exp(-float(gamma))) < 4 * np.sqrt(0.25 / 6000)


def test_bad_parameters_are_named():
    below = _below()
    with pytest.raises(ValueError, match="scale must be > 0"):
        discrete_laplace(Fraction(0), below)
    with pytest.raises(ValueError, match="sigma\\^2 must be > 0"):
        discrete_gaussian(Fraction(-1), below)
    with pytest.raises(ValueError, match="noise family must be one of gaussian, laplace"):
        sample("cauchy", Fraction(1), below)
    assert FAMILIES == ("gaussian", "laplace")
