"""Synthetic linear contextual data, embedded (no data directory).

The linear-payoff model that LinUCB and Hannun et al.'s learner assume (section 2: the expected
reward of arm a is linear in the context, estimated by ridge regression in Algorithm 1):
contexts are standard Gaussian vectors in D dimensions normalised to unit length, each arm has a
unit-length parameter theta_a (also Gaussian, normalised), and the reward is Bernoulli with mean

    nu_a(x) = (1 + theta_a . x) / 2,

which lies in [0, 1] without clipping because |theta_a . x| <= 1.  Its least-squares fit on
unit contexts (symmetric, so E[x] = 0) is exactly theta_a / 2: the model is realisable without an
intercept.  Contexts and arm parameters come from independent streams of the data seed; a
shorter horizon is a prefix of a longer one, and theta does not depend on the horizon.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppml.checks import check_int
from ppml.data.bandit_data import ContextualData, seeded_rng
from ppml.data.projection import unit_rows

DEFAULT_ARMS = 10
DEFAULT_DIMS = 10
DEFAULT_HORIZON = 1000


@dataclass(frozen=True, eq=False)
class LinearArmsData(ContextualData):
    """Bernoulli arms with means (1 + theta_a . x_t) / 2."""

    theta: np.ndarray
    """[arms, D] unit-length arm parameters."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._freeze_arm_rows("theta")

    def mean_rewards_at(self, steps) -> np.ndarray:
        scores = self.contexts[self._steps(steps)] @ self.theta.T
        return np.clip((1.0 + scores) / 2.0, 0.0, 1.0)   # clip only absorbs rounding


def unit_gaussian(rng: np.random.Generator, rows: int, dims: int) -> np.ndarray:
    """``rows`` uniformly random directions in R^dims (normalised Gaussians), [rows, dims]."""
    return unit_rows(rng.standard_normal((rows, dims)))


def load_synthetic(arms: int = DEFAULT_ARMS, dims: int = DEFAULT_DIMS,
                   horizon: int = DEFAULT_HORIZON, data_seed: int = 0) -> LinearArmsData:
    """T = ``horizon`` unit Gaussian contexts in ``dims`` dimensions and ``arms`` linear arms,
    all drawn from ``data_seed``; named ``synthetic``."""
    arms = check_int("arms", arms, 1)
    dims = check_int("dims", dims, 1)
    horizon = check_int("horizon", horizon, 1)
    data_seed = check_int("data_seed", data_seed, 0)
    theta = unit_gaussian(seeded_rng(data_seed, "synthetic-theta"), arms, dims)
    contexts = unit_gaussian(seeded_rng(data_seed, "synthetic-contexts"), horizon, dims)
    return LinearArmsData(name="synthetic", contexts=contexts, arms=arms, seed=data_seed,
                          source_index=np.arange(horizon), theta=theta)
