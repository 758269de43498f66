"""Plaintext reference algorithms, in float64, for comparison with the secure protocols.

:class:`EpsilonGreedyLinear` is Hannun et al.'s Algorithm 1 without secret sharing: the same
epsilon-greedy linear bandit, with W_a^-1 kept by Sherman-Morrison (eq. 1) and the
differentially private score y_t v_a + (1 - y_t) s_{t,a} (line 13).  Given the same exploration
draws (y_t, v_t and the tie-breaking permutation) it takes the decisions the secure learner takes
up to fixed-point error.

:class:`LeanEpsilonGreedyLinear` is the same algorithm with only the work its decisions need,
the plaintext baseline its slowdowns are measured against (docs/private-cb.md, "Speed"):
theta_a = W_a^-1 b_a kept up to date for the pulled arm only, and one product Theta x to score
every arm.  :class:`EpsilonGreedyLinear` computes W_a^-1 x for every arm at every step and
keeps W_a, which it uses only to refresh; it stays the decision reference.
"""

from __future__ import annotations

import numpy as np


def tie_broken_argmax(scores: np.ndarray, gamma: np.ndarray) -> int:
    """The maximum of ``scores``; among exact ties, the one with the largest ``gamma``.

    This is the order of the secure argmax, which compares scores * A + gamma.
    """
    best = np.flatnonzero(scores == scores.max())
    return int(best[np.argmax(gamma[best])])


def initial_w(arms: int, dims: int, regularizer: float) -> np.ndarray:
    """W_a = (1 + delta) I for every arm, before any pull."""
    return np.tile(np.eye(dims) * (1.0 + regularizer), (arms, 1, 1))


class EpsilonGreedyLinear:
    """Algorithm 1 in float64.

    Args:
        arms, dims: |A| and D.
        regularizer: delta >= 0; W_a starts at (1 + delta) I (the paper: delta = 0).
        refresh_every: every k steps recompute W_a^-1 exactly from W_a (0: never, the paper).
    """

    def __init__(self, arms: int, dims: int, regularizer: float = 0.0, refresh_every: int = 0):
        self.arms, self.dims = arms, dims
        self.refresh_every = refresh_every
        self.w = initial_w(arms, dims, regularizer)                             # W_a
        self.w_inv = np.linalg.inv(self.w)                                      # W_a^-1
        self.b = np.zeros((arms, dims))                                         # b_a
        self.steps = 0

    def scores(self, x: np.ndarray) -> np.ndarray:
        """s_{t,a} = w_a^T x with w_a = W_a^-1 b_a (lines 10-11), as b_a^T (W_a^-1 x)."""
        return np.einsum("ad,ad->a", self.b, self.w_inv @ x)

    def select(self, x: np.ndarray, y: int, v: np.ndarray, gamma: np.ndarray) -> int:
        """Lines 10-15: the arm maximising the differentially private score."""
        private_scores = v if y else self.scores(x)
        return tie_broken_argmax(private_scores, gamma)

    def update(self, x: np.ndarray, arm: int, reward: float) -> None:
        """Lines 20-23 for the pulled arm, with eq. 1 for the inverse."""
        u = self.w_inv[arm] @ x
        self.w_inv[arm] -= np.outer(u, u) / (1.0 + x @ u)
        self.w[arm] += np.outer(x, x)
        self.b[arm] += reward * x
        self.steps += 1
        if self.refresh_every and self.steps % self.refresh_every == 0:
            self.w_inv = np.linalg.inv(self.w)


class LeanEpsilonGreedyLinear:
    """Algorithm 1 in float64, doing only what its decisions need.

    Per arm it keeps W_a^-1 and theta_a = W_a^-1 b_a; a step scores every arm with one
    product Theta x (lines 10-11) and updates the pulled arm alone: eq. 1 for W_a^-1 and,
    with u = W_a^-1 x, theta_a += u (r - x^T theta_a) / (1 + x^T u), which is
    W_a'^-1 (b_a + r x) for the updated W_a'^-1.  W_a and b_a are kept only with
    ``refresh_every`` > 0, to recompute W_a^-1 and theta_a exactly from them.  Same arguments
    as :class:`EpsilonGreedyLinear`, whose decisions it takes up to float64 rounding.
    """

    def __init__(self, arms: int, dims: int, regularizer: float = 0.0, refresh_every: int = 0):
        self.refresh_every = refresh_every
        self.w_inv = np.tile(np.eye(dims) / (1.0 + regularizer), (arms, 1, 1))  # W_a^-1
        self.theta = np.zeros((arms, dims))                                     # theta_a
        if refresh_every:
            self.w, self.b = initial_w(arms, dims, regularizer), np.zeros((arms, dims))
        self.steps = 0

    def select(self, x: np.ndarray, y: int, v: np.ndarray, gamma: np.ndarray) -> int:
        """Lines 10-15 with one product for the scores."""
        return tie_broken_argmax(v if y else self.theta @ x, gamma)

    def update(self, x: np.ndarray, arm: int, reward: float) -> None:
        """Lines 20-23 for the pulled arm: eq. 1 and theta_a's rank-one update."""
        w_inv, theta = self.w_inv[arm], self.theta[arm]
        u = w_inv @ x
        denominator = 1.0 + x @ u
        theta += u * ((reward - x @ theta) / denominator)
        w_inv -= np.outer(u, u) / denominator
        self.steps += 1
        if self.refresh_every:
            self.w[arm] += np.outer(x, x)
            self.b[arm] += reward * x
            if self.steps % self.refresh_every == 0:
                self.w_inv = np.linalg.inv(self.w)
                self.theta = np.einsum("aij,aj->ai", self.w_inv, self.b)
