"""The linear-bandit instance that LinUCB-DS plays (Ciucanu et al., sections 2 and 5).

K arms x_1..x_K in R^d and an unknown theta in R^d; the expected reward of arm i is theta . x_i
(section 2: "<x_i, theta> [...] defining the expected reward value of arm x_i").  For MovieLens
(section 5) theta is one user's embedding and the arms are "the first K movies in the dataset"
(or K random movies), so theta . x_i is the user's predicted rating of movie i.

Rewards are noisy, as the paper defines them: pull(x_i) "returns a noisy reward <x_i, theta> +
eta, where the noise eta is an R-sub-Gaussian random variable" (section 2; section 3's encrypted
pull adds E(eta)), with R = 0.01 in the experiments (section 5).  ppml draws eta = +R or -R with
probability 1/2 each (Rademacher, exactly R-sub-Gaussian; the authors' code draws +-1 the same
way, i.e. R = 1 despite the R = 0.01 it passes to the algorithm).  ``noise=0`` makes every reward
the expected rating.  The signs come from the counter-based uniforms of ppml.data.rewards, so a
secure run and its reference get the same reward for the same arm at the same step.

``synthetic`` is the embedded default: a Gaussian theta and Gaussian arms rescaled to the mean
lengths of the MovieLens ALS embeddings (users 2.0, movies 1.75, nearly the same for every d).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional, Union

import numpy as np

from ppml.checks import check_int
from ppml.data.bandit_data import reward_uniform, seeded_rng
from ppml.data.movielens import MOVIES, USERS, load_movielens_embeddings
from ppml.data.rewards import check_step_arm, instance_key

PAPER_NOISE = 0.01
"""R of section 5: rewards are theta . x_i +- R."""
USER_NORM = 2.0
"""Mean length of a MovieLens user embedding (ALS, d = 1..18), for ``synthetic``."""
MOVIE_NORM = 1.75
"""Mean length of a (rated) MovieLens movie embedding, for ``synthetic``."""
LINEAR_DATASETS = ("movielens", "synthetic")
ARM_CHOICES = ("first", "random")
PathLike = Union[str, os.PathLike, None]


@dataclass(frozen=True, eq=False)
class LinearArms:
    """K fixed arms with expected rewards ``arms @ theta`` and rewards theta . x_i +- noise."""

    name: str
    theta: np.ndarray
    """[d] the unknown parameter (the data owner's secret in LinUCB-DS)."""
    arms: np.ndarray
    """[K, d] arm vectors x_i."""
    item_ids: Optional[np.ndarray] = None
    """[K] which item each arm is (MovieLens movie id, 1-based); None means 1..K."""
    noise: float = PAPER_NOISE
    """R: a reward is the expected reward plus or minus R."""
    seed: int = 0
    """Seeds the reward signs (and, for the loaders, the instance)."""
    means: np.ndarray = field(init=False, repr=False)
    """[K] expected rewards theta . x_i (computed)."""

    def __post_init__(self) -> None:
        theta = np.array(self.theta, dtype=np.float64)
        arms = np.array(self.arms, dtype=np.float64)
        if theta.ndim != 1 or arms.ndim != 2 or arms.shape[1] != theta.shape[0] \
                or arms.shape[0] == 0:
            raise ValueError(f"theta must be [d] and arms [K, d] with K >= 1, got "
                             f"{theta.shape} and {arms.shape}")
        ids = np.arange(1, len(arms) + 1) if self.item_ids is None else self.item_ids
        ids = np.array(ids, dtype=np.int64)
        if ids.shape != (len(arms),):
            raise ValueError(f"item_ids must have shape ({len(arms)},), got {ids.shape}")
        if not (np.isfinite(self.noise) and self.noise >= 0):
            raise ValueError(f"noise must be a finite number >= 0, got {self.noise!r}")
        check_int("seed", self.seed, 0)
        means = arms @ theta
        for array in (theta, arms, ids, means):
            array.flags.writeable = False
        for field, value in (("theta", theta), ("arms", arms), ("item_ids", ids),
                             ("noise", float(self.noise)), ("seed", int(self.seed)),
                             ("means", means),
                             ("_key", instance_key("linear", self.name, self.seed))):
            object.__setattr__(self, field, value)

    @property
    def K(self) -> int:  # noqa: N802 (the paper's name)
        """Number of arms."""
        return self.arms.shape[0]

    @property
    def d(self) -> int:
        """Dimension of theta and of the arms."""
        return self.arms.shape[1]

    def best_arm(self) -> int:
        """An arm with the highest expected reward (the lowest index among ties)."""
        return int(np.argmax(self.means))

    def reward(self, t: int, arm: int) -> float:
        """The reward of ``arm`` at step t: means[arm] + R if u(t, arm) < 1/2 else - R, the same
        however often it is asked."""
        t, arm = check_step_arm(t, arm, self.K)
        sign = 1.0 if reward_uniform(self._key, t, arm) < 0.5 else -1.0
        return float(self.means[arm] + sign * self.noise)


def _choose_movies(arms: int, arm_choice: str, seed: int) -> np.ndarray:
    """0-based rows of the movies used as arms: the first K, or K distinct random ones in
    increasing order."""
    if arm_choice == "first":
        return np.arange(arms)
    return np.sort(seeded_rng(seed, "movielens-arms").choice(MOVIES, size=arms, replace=False))


def load_linear_arms(name: str, *, arms: int, dims: int, user: int = 0,
                     arm_choice: str = "first", seed: int = 0, noise: float = PAPER_NOISE,
                     data_dir: PathLike = None, cache_dir: PathLike = None) -> LinearArms:
    """The LinUCB-DS instance ``name`` with K = ``arms`` arms in ``dims`` dimensions.

    ``movielens``: theta is user ``user``'s ALS embedding (0-based: user id - 1), the arms are
    the embeddings of the first K movies (``arm_choice="first"``, the paper's choice) or of K
    random movies (``"random"``, drawn from ``seed``); the embeddings are
    `load_movielens_embeddings(dims, seed=seed)` (``data_dir`` / ``$PPML_DATA``, cached in
    ``cache_dir``).  ``synthetic``: theta and arms drawn from ``seed`` (``user`` and
    ``arm_choice`` do not apply).  ``noise`` is R (0 for deterministic rewards).
    """
    if name not in LINEAR_DATASETS:
        raise ValueError(f"unknown linear-arms dataset {name!r}; known: "
                         f"{', '.join(LINEAR_DATASETS)}")
    if arm_choice not in ARM_CHOICES:
        raise ValueError(f"arm_choice must be one of {', '.join(ARM_CHOICES)}; "
                         f"got {arm_choice!r}")
    seed = check_int("seed", seed, 0)
    if name == "synthetic":
        arms = check_int("arms", arms, 1)
        dims = check_int("dims", dims, 1)
        rng = seeded_rng(seed, "synthetic-linear-arms")
        theta = rng.standard_normal(dims)
        vectors = rng.standard_normal((arms, dims))
        return LinearArms(name=name, theta=USER_NORM * theta / np.linalg.norm(theta),
                          arms=MOVIE_NORM * vectors / np.linalg.norm(vectors, axis=1,
                                                                      keepdims=True),
                          noise=noise, seed=seed)
    arms = check_int("arms", arms, 1, MOVIES, "MovieLens 100K has 1682 movies")
    user = check_int("user", user, 0, USERS - 1, "MovieLens 100K has 943 users, numbered "
                     "from 0 here")
    embeddings = load_movielens_embeddings(dims, seed=seed, data_dir=data_dir,
                                           cache_dir=cache_dir)
    rows = _choose_movies(arms, arm_choice, seed)
    return LinearArms(name=name, theta=embeddings.users[user], arms=embeddings.movies[rows],
                      item_ids=rows + 1, noise=noise, seed=seed)
