"""The contextual-bandit environment shared by every dataset (Hannun et al., section 2 and 5).

At step t = 0..T-1 the parties observe a context x_t (a unit-length row of ``contexts``), pull an
arm a in 0..arms-1 and receive a reward r_t in {0, 1}.  Every dataset defines the expected reward
of every arm at every step, `ContextualData.mean_rewards`; the realised reward is Bernoulli with
that mean, drawn as ``float(u[t, a] < mean_rewards(t)[a])`` from uniforms u[t, a] that are a
fixed function of the dataset's name, its data seed, t and a (a counter-based hash, so any
(t, a) is drawn in O(1) without a [T, arms] table).  Asking twice gives the same reward, and a
secure run and a plaintext reference that pull the same arm at the same step get the same reward.

Steps are 0-based.  Stream orders are prefix-stable: the first T steps of a longer horizon are the
T steps of a shorter one with the same seed (contexts, means and rewards alike).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ppml.checks import check_int

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
UNIT_NORM_TOLERANCE = 1e-9
_CHUNK_STEPS = 1024


def _purpose(label: str) -> int:
    return int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "little")


def seeded_rng(seed: int, purpose: str, *more: int) -> np.random.Generator:
    """A numpy Generator for one purpose ("order", "kmeans", ...) of a data seed: independent
    streams for independent purposes, all reproducible from the seed."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), _purpose(purpose), *more]))


def stream_order(n: int, horizon: int, seed: int) -> np.ndarray:
    """Row indices [horizon] (int64) of a stream over n rows: pass 0 is a seeded permutation of
    range(n), pass 1 another independent one, and so on, cut at ``horizon``.  A horizon up to n
    shows each row at most once; a longer one cycles through re-shuffled passes."""
    passes = -(-horizon // n)
    order = np.concatenate([seeded_rng(seed, "order", p).permutation(n) for p in range(passes)])
    return order[:horizon].astype(np.int64)


def _splitmix64(index: np.ndarray, key: np.uint64) -> np.ndarray:
    z = key + (index + np.uint64(1)) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _splitmix64_one(index: int, key: int) -> int:
    """:func:`_splitmix64` of one index, in Python integers (no numpy call overhead)."""
    mask = (1 << 64) - 1
    z = (key + (index + 1) * int(_GOLDEN)) & mask
    z = ((z ^ (z >> 30)) * int(_MIX1)) & mask
    z = ((z ^ (z >> 27)) * int(_MIX2)) & mask
    return z ^ (z >> 31)


def reward_uniform(key: int, step: int, arm: int) -> float:
    """u(step, arm) in [0, 1): SplitMix64 of ``key`` and ``step * 2^32 + arm``, 53 bits."""
    return (_splitmix64_one((step << 32) | arm, key) >> 11) * 2.0**-53


def reward_key(name: str, seed: int) -> np.uint64:
    """The 64-bit key of a dataset's reward uniforms (a function of its name and data seed)."""
    digest = hashlib.sha256(f"ppml-data-rewards/{name}/{int(seed)}".encode()).digest()
    return np.uint64(int.from_bytes(digest[:8], "little"))


@dataclass(frozen=True, eq=False)
class ContextualData:
    """A contextual-bandit stream: ``contexts[t]`` is the context at step t (unit length).

    Subclasses define `mean_rewards_at`.  Arrays are copied and made read-only, so a run cannot
    change the data that a reference run reads.
    """

    name: str
    """Dataset name as registered (``kmeans`` is recorded with its base: ``kmeans_mnist``)."""
    contexts: np.ndarray
    """[T, D] float64, each row of unit Euclidean length."""
    arms: int
    """Number of arms |A|."""
    seed: int
    """Data seed: stream order, arm construction and reward uniforms derive from it."""
    source_index: np.ndarray
    """[T] int64: the row of the source data set shown at step t (which training images a run
    has seen, for the membership-inference attack)."""

    def __post_init__(self) -> None:
        contexts = np.array(self.contexts, dtype=np.float64)
        if contexts.ndim != 2 or contexts.shape[0] == 0:
            raise ValueError(f"contexts must be a non-empty [T, D] array, got {contexts.shape}")
        norms = np.linalg.norm(contexts, axis=1)
        if not np.all(np.abs(norms - 1.0) <= UNIT_NORM_TOLERANCE):
            raise ValueError("every row of contexts must have unit length; worst norm "
                             f"{norms[np.argmax(np.abs(norms - 1))]!r}")
        index = np.array(self.source_index, dtype=np.int64)
        if index.shape != contexts.shape[:1]:
            raise ValueError(f"source_index must have shape {contexts.shape[:1]}, "
                             f"got {index.shape}")
        check_int("arms", self.arms, 1)
        check_int("data_seed", self.seed, 0)
        for array in (contexts, index):
            array.flags.writeable = False
        object.__setattr__(self, "contexts", contexts)
        object.__setattr__(self, "source_index", index)
        object.__setattr__(self, "arms", int(self.arms))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "_key", reward_key(self.name, self.seed))

    @property
    def horizon(self) -> int:
        """T, the number of steps."""
        return self.contexts.shape[0]

    @property
    def dims(self) -> int:
        """D, the context dimension."""
        return self.contexts.shape[1]

    def _freeze_arm_rows(self, name: str) -> None:
        """Field ``name`` as a read-only float64 [arms, D] matrix (one row per arm), or a
        ValueError naming the expected shape."""
        rows = np.array(getattr(self, name), dtype=np.float64)
        if rows.shape != (self.arms, self.dims):
            raise ValueError(f"{name} must have shape ({self.arms}, {self.dims}), "
                             f"got {rows.shape}")
        rows.flags.writeable = False
        object.__setattr__(self, name, rows)

    def _steps(self, steps) -> np.ndarray:
        steps = np.asarray(steps)
        if not np.issubdtype(steps.dtype, np.integer):
            raise IndexError(f"steps must be integers, got {steps.dtype}")
        if steps.size and (steps.min() < 0 or steps.max() >= self.horizon):
            raise IndexError(f"step out of range [0, {self.horizon}): {steps.min()}..{steps.max()}")
        return steps.astype(np.int64)

    def _arm(self, arm) -> int:
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)) \
                or not 0 <= arm < self.arms:
            raise IndexError(f"arm must be an integer in [0, {self.arms}), got {arm!r}")
        return int(arm)

    def context(self, t: int) -> np.ndarray:
        """x_t, [D]."""
        return self.contexts[int(self._steps(t))]

    def mean_rewards_at(self, steps) -> np.ndarray:
        """Expected rewards [len(steps), arms] at several steps (subclasses implement this)."""
        raise NotImplementedError

    def mean_rewards(self, t: int) -> np.ndarray:
        """Expected reward of every arm at step t, [arms] in [0, 1]."""
        return self.mean_rewards_at(self._steps([t]))[0]

    def uniforms(self, t: int) -> np.ndarray:
        """The uniforms u[t, :] in [0, 1) behind the realised rewards of step t, [arms]."""
        step = np.uint64(int(self._steps(t)))
        index = (step << np.uint64(32)) | np.arange(self.arms, dtype=np.uint64)
        bits = _splitmix64(index, self._key) >> np.uint64(11)
        return bits.astype(np.float64) * 2.0**-53

    def rewards(self, t: int) -> np.ndarray:
        """Realised reward of every arm at step t, [arms] of 0.0 / 1.0 (only the pulled arm's is
        observed in a bandit run)."""
        return (self.uniforms(t) < self.mean_rewards(t)).astype(np.float64)

    def reward(self, t: int, arm: int) -> float:
        """The realised reward of ``arm`` at step t: ``float(u[t, arm] < mean_rewards(t)[arm])``,
        the same however often it is asked (computed for the one arm: a bandit run asks every
        step)."""
        step, arm = int(self._steps(t)), self._arm(arm)
        return float(reward_uniform(int(self._key), step, arm) < self.mean_reward(step, arm))

    def mean_reward(self, t: int, arm: int) -> float:
        """Expected reward of one arm at step t (subclasses answer without the other arms)."""
        return float(self.mean_rewards(t)[arm])

    def best_arm(self, t: int) -> int:
        """An arm with the highest expected reward at step t (the lowest index among ties)."""
        return int(np.argmax(self.mean_rewards(t)))

    def best_mean(self, t: int) -> float:
        """The highest expected reward at step t."""
        return float(np.max(self.mean_rewards(t)))

    def regret(self, t: int, arm: int) -> float:
        """Expected (pseudo-)regret of pulling ``arm`` at step t: best mean minus its mean."""
        means = self.mean_rewards(t)
        return float(means.max() - means[self._arm(arm)])

    def regrets(self, pulled) -> np.ndarray:
        """Expected regret [n] of the arms ``pulled`` at steps 0..n-1 (cumsum for the curve)."""
        pulled = np.asarray(pulled, dtype=np.int64)
        if pulled.ndim != 1 or pulled.size > self.horizon:
            raise ValueError(f"pulled must be a 1-d array of at most {self.horizon} arms, "
                             f"got shape {pulled.shape}")
        if pulled.size and (pulled.min() < 0 or pulled.max() >= self.arms):
            raise IndexError(f"pulled arms must be in [0, {self.arms})")
        out = np.empty(pulled.size)
        for start in range(0, pulled.size, _CHUNK_STEPS):   # no [T, arms] table for big |A|
            steps = np.arange(start, min(start + _CHUNK_STEPS, pulled.size))
            means = self.mean_rewards_at(steps)
            out[steps] = means.max(axis=1) - means[np.arange(len(steps)), pulled[steps]]
        return out


@dataclass(frozen=True, eq=False)
class ClassificationData(ContextualData):
    """Arms are classes: the reward is 1 for the correct class and 0 otherwise (Hannun et al.,
    section 5: "the reward is 1 if the selected arm corresponds to the correct digit class")."""

    labels: np.ndarray
    """[T] int64 class of the example shown at step t, in [0, arms)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        labels = np.array(self.labels, dtype=np.int64)
        if labels.shape != (self.horizon,):
            raise ValueError(f"labels must have shape ({self.horizon},), got {labels.shape}")
        if labels.min() < 0 or labels.max() >= self.arms:
            raise ValueError(f"labels must be in [0, {self.arms})")
        labels.flags.writeable = False
        object.__setattr__(self, "labels", labels)

    def mean_rewards_at(self, steps) -> np.ndarray:
        labels = self.labels[self._steps(steps)]
        return (labels[:, None] == np.arange(self.arms)).astype(np.float64)

    def mean_reward(self, t: int, arm: int) -> float:
        return 1.0 if self.labels[t] == arm else 0.0
