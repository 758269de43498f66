"""Private contextual bandits: Hannun et al.'s Algorithm 1 on secret shares.

Roles (every role is a party of the engine: an index in the local runtime, an actor in Ray):

* feature parties 0..P-1 hold the shares and each owns a contiguous block of the D context
  features, which it never shows (lines 5-7);
* p' (rank P, a client of the engine: it holds no shares) learns the arm a_t and pulls it
  (lines 16-18);
* p'' (rank P + 1, a client) receives the reward r_t and shares it (line 19).

State per arm a, shared: W_a^-1 (identity at the start, lines 1-3) and b_a (zero).  Every step
updates all arms, masked by the secret one-hot o_a, so no feature party learns the arm.  Scores
use s_{t,a} = b_a^T (W_a^-1 x_t), which equals w_a^T x_t with w_a = W_a^-1 b_a (lines 10-11)
because W_a^-1 is symmetric, and shares u_a = W_a^-1 x_t with the Sherman-Morrison update (eq. 1):
    W_a^-1 <- W_a^-1 - o_a u_a u_a^T / (1 + x_t^T u_a).
Since W_a >= I and |x_t| = 1, the denominator lies in [1, 1 + 1 / (1 + delta)] (delta the
diagonal regulariser), which is the reciprocal's domain.

Options of the paper's section 7, off by default: a diagonal regulariser delta (W_a starts at
(1 + delta) I) and an exact refresh of W_a^-1 every k steps (two Newton-Schulz iterations
X <- X (2I - W X) from the drifted inverse; W_a is then kept as well).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import ppml.mpc as mpc


@dataclass(frozen=True)
class PrivateCBConfig:
    """The public parameters every party knows."""

    parties: int
    arms: int
    dims: int
    horizon: int
    epsilon: float
    regularizer: float = 0.0
    refresh_every: int = 0
    nr_iterations: int | None = None   # None: enough for L bits on the denominator's domain
    reciprocal_start: str = "linear"
    argmax_method: str = "pairwise"

    def __post_init__(self):
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {self.epsilon}")
        if self.regularizer < 0:
            raise ValueError(f"regularizer must be >= 0, got {self.regularizer}")
        if self.refresh_every < 0:
            raise ValueError(f"refresh_every must be >= 0, got {self.refresh_every}")
        if self.dims < self.parties:
            raise ValueError(f"dims must be >= parties ({self.parties}) so that every feature party"
                             f" owns a feature, got dims={self.dims}")

    @property
    def puller(self) -> int:
        return self.parties

    @property
    def rewarder(self) -> int:
        return self.parties + 1

    def feature_blocks(self) -> list:
        """The columns each feature party owns: contiguous, as equal as possible."""
        return np.array_split(np.arange(self.dims), self.parties)

    def denominator_domain(self) -> tuple:
        return (1.0, 1.0 + 1.0 / (1.0 + self.regularizer))


class PrivateLinearBandit:
    """The shared state of Algorithm 1 and one step of it, for the parties held in a context."""

    def __init__(self, ctx, config: PrivateCBConfig):
        self.ctx, self.config = ctx, config
        a, d = config.arms, config.dims
        zeros = ctx.share_constant(np.zeros((a, d, d)))
        eye = np.tile(np.eye(d), (a, 1, 1))
        self.w_inv = zeros + eye / (1.0 + config.regularizer)                  # lines 1, 3
        self.w = zeros + eye * (1.0 + config.regularizer) if config.refresh_every else None
        self.b = ctx.share_constant(np.zeros((a, d)))                           # lines 2, 3
        self.steps = 0

    def share_context(self, features) -> "mpc.ArithmeticShared":
        """Lines 5-7: every feature party shares its own block; the blocks are concatenated."""
        blocks = self.config.feature_blocks()
        parts = [self.ctx.share(features if self.ctx.holds(p) and features is not None else None,
                                owner=p, shape=(len(cols),)) for p, cols in enumerate(blocks)]
        return mpc.concatenate(parts)

    def private_scores(self, x) -> tuple:
        """Lines 8-13: the differentially private scores, plus what the update reuses."""
        c = self.config
        u = self.w_inv @ x                                                      # W_a^-1 x, [A, D]
        both = mpc.stack([self.b, x + 0 * self.b]) .transpose(1, 0, 2)           # [A, 2, D]
        dots = (both @ u.reshape(c.arms, c.dims, 1)).reshape(c.arms, 2)
        scores, quad = dots[:, 0], dots[:, 1]                                  # s_{t,a}, x^T u_a
        y = mpc.bernoulli(self.ctx, c.epsilon)                                  # line 8
        v = mpc.uniform(self.ctx, (c.arms,))                                    # line 12
        private = scores + y * (v - scores)                                     # line 13
        return private, u, quad

    def update(self, x, u, quad, onehot, reward) -> None:
        """Lines 20-23 for every arm, masked by the one-hot, with eq. 1 for W_a^-1."""
        c = self.config
        rec = (quad + 1).reciprocal(c.nr_iterations, c.reciprocal_start, c.denominator_domain())
        gains = onehot.reshape(c.arms, 1) * mpc.stack([rec, reward + 0 * rec], axis=1)  # o*[1/den, r]
        scaled = gains.reshape(c.arms, 2, 1) * mpc.stack([u, x + 0 * u], axis=1)       # [A, 2, D]
        self.w_inv = self.w_inv - scaled[:, 0].reshape(c.arms, c.dims, 1) * u.reshape(c.arms, 1, c.dims)
        self.b = self.b + scaled[:, 1]                                          # line 22
        if self.w is not None:
            self.w = self.w + onehot.reshape(c.arms, 1, 1) * (x.reshape(c.dims, 1) * x.reshape(1, c.dims))
        self.steps += 1
        if c.refresh_every and self.steps % c.refresh_every == 0:
            self.refresh()

    def refresh(self) -> None:
        """Two Newton-Schulz iterations X <- X (2I - W X): the drift of eq. 1 squared away."""
        eye = np.tile(np.eye(self.config.dims), (self.config.arms, 1, 1))
        for _ in range(2):
            self.w_inv = self.w_inv @ (2 * eye - self.w @ self.w_inv)
